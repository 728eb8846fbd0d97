"""ember.func.vmap against torch.func.vmap: every batch rule on the same inputs (values,
and gradients through the vmap), nested vmaps, in_dims/out_dims/chunk_size, randomness,
torch's errors, and that an op with a rule never takes the per-sample loop while an op
without one does (ember.func.batching.fallback_counts)."""

import numpy as np
import pytest
import torch

import ember
from ember.func import batching
from ember.func.batch_rules import BATCH_RULES

rng = np.random.default_rng(0)


def _arrays(*shapes, dtype=np.float32):
    return [rng.standard_normal(shape).astype(dtype) for shape in shapes]


def _to(lib, value, grad=False):
    if isinstance(value, tuple):
        return tuple(_to(lib, v, grad) for v in value)
    if isinstance(value, np.ndarray):
        t = lib.tensor(value)
        return t.requires_grad_(True) if grad and t.is_floating_point() else t
    return value


def _close(mine, theirs, rtol=1e-5, atol=1e-5):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, ember.Tensor), type(mine)
        assert tuple(mine.shape) == tuple(theirs.shape), (mine.shape, theirs.shape)
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)
    else:
        assert len(mine) == len(theirs)
        for m, t in zip(mine, theirs):
            _close(m, t, rtol, atol)


def check(fn, arrays, in_dims=0, out_dims=0, *, grad=True, looped=(), **kwargs):
    """vmap(fn(lib)) on the same arrays in ember and torch: values, the gradients of the
    float inputs through the vmap, and no per-sample loop except for the ops in ``looped``."""
    results = {}
    for lib in (ember, torch):
        inputs = [_to(lib, a, grad) for a in arrays]
        batching.fallback_counts.clear()
        out = lib.func.vmap(fn(lib), in_dims, out_dims, **kwargs)(*inputs)
        if lib is ember:
            assert set(batching.fallback_counts) <= set(looped), dict(batching.fallback_counts)
        grads = []
        leaves = [t for t in (out if isinstance(out, tuple) else (out,)) if t.requires_grad]
        sources = [t for t in inputs if isinstance(t, lib.Tensor) and t.requires_grad]  # tuples: values only
        if grad and leaves and sources:
            total = sum((leaf.double() * lib.tensor(np.cos(np.arange(leaf.numel())).reshape(tuple(leaf.shape))))
                        .sum() for leaf in leaves)
            grads = lib.autograd.grad(total, sources, allow_unused=True)
            grads = [g if g is not None else lib.zeros_like(s) for g, s in zip(grads, sources)]
        results[lib] = (out, grads)
    _close(results[ember][0], results[torch][0])
    _close(results[ember][1], results[torch][1])


B = 3
STATS = (np.array([0.5, -1.0, 0.0], np.float32), np.array([1.0, 2.0, 0.25], np.float32))  # running mean, var
# (id, fn(lib), input shapes (batch first), in_dims)
CASES = [
    ("exp", lambda lib: lambda x: x.exp(), [(B, 4, 5)], 0),
    ("sigmoid-tanh", lambda lib: lambda x: x.sigmoid() * x.tanh(), [(B, 4)], 0),
    ("add-broadcast", lambda lib: lambda x, y: x + y, [(B, 4, 5), (B, 5)], 0),
    ("mul-unbatched", lambda lib: lambda x, y: x * y, [(B, 5), (4, 5)], (0, None)),
    ("sub-scalar-pow", lambda lib: lambda x: (x - 2.0) ** 2, [(B, 4)], 0),
    ("div-dim1", lambda lib: lambda x, y: x / (y.abs() + 1), [(4, B), (B, 4)], (1, 0)),
    ("addcmul", lambda lib: lambda x, y, z: lib.addcmul(x, y, z, value=0.5), [(B, 4), (4,), (B, 1)], (0, None, 0)),
    ("where", lambda lib: lambda x, y: lib.where(x > 0, x, y), [(B, 4), (B, 4)], 0),
    ("clamp", lambda lib: lambda x: x.clamp(-0.5, 0.5), [(B, 4)], 0),
    ("clamp-tensor", lambda lib: lambda x, lo: x.clamp(min=lo), [(B, 4), (B, 4)], 0),
    ("maximum", lambda lib: lambda x, y: lib.maximum(x, y), [(B, 4), (4,)], (0, None)),
    ("gelu-silu", lambda lib: lambda x: lib.nn.functional.gelu(x) + lib.nn.functional.silu(x), [(B, 4)], 0),
    ("relu", lambda lib: lambda x: lib.relu(x), [(B, 4)], 0),
    ("sum", lambda lib: lambda x: x.sum(), [(B, 4, 5)], 0),
    ("sum-dim-keepdim", lambda lib: lambda x: x.sum(-1, keepdim=True), [(B, 4, 5)], 0),
    ("mean-dims", lambda lib: lambda x: x.mean((0, 1)), [(B, 4, 5)], 0),
    ("amax", lambda lib: lambda x: x.amax(0), [(B, 4, 5)], 0),
    ("max-dim", lambda lib: lambda x: x.max(1)[0], [(B, 4, 5)], 0),
    ("min-all", lambda lib: lambda x: x.min(), [(B, 4, 5)], 0),
    ("logsumexp", lambda lib: lambda x: x.logsumexp(-1), [(B, 4, 5)], 0),
    ("var", lambda lib: lambda x: x.var(0), [(B, 4, 5)], 0),
    ("std-all", lambda lib: lambda x: x.std(), [(B, 4, 5)], 0),
    ("norm", lambda lib: lambda x: x.norm(dim=-1), [(B, 4, 5)], 0),
    ("vector-norm", lambda lib: lambda x: lib.linalg.vector_norm(x), [(B, 4, 5)], 0),
    ("sum-0d", lambda lib: lambda x: x.sum(), [(B,)], 0),
    ("argmax", lambda lib: lambda x: x.argmax(), [(B, 4, 5)], 0),
    ("argmax-dim", lambda lib: lambda x: x.argmax(1), [(B, 4, 5)], 0),
    ("cumsum", lambda lib: lambda x: x.cumsum(0), [(B, 4, 5)], 0),
    ("softmax", lambda lib: lambda x: x.softmax(-1), [(B, 4, 5)], 0),
    ("log-softmax", lambda lib: lambda x: lib.nn.functional.log_softmax(x, 0), [(B, 4, 5)], 0),
    ("view-reshape", lambda lib: lambda x: x.view(20).reshape(5, 4), [(B, 4, 5)], 0),
    ("permute", lambda lib: lambda x: x.permute(2, 0, 1), [(B, 4, 5, 2)], 0),
    ("transpose-t", lambda lib: lambda x: x.transpose(0, 1) + x.t(), [(B, 4, 4)], 0),
    ("unsqueeze-squeeze", lambda lib: lambda x: x.unsqueeze(-1).unsqueeze(0).squeeze(0).squeeze(), [(B, 4, 5)], 0),
    ("squeeze-all", lambda lib: lambda x: x.squeeze(), [(B, 1, 4, 1)], 0),
    ("expand", lambda lib: lambda x: x.expand(2, 4, 5), [(B, 1, 5)], 0),
    ("expand-new-dims", lambda lib: lambda x: x.expand(2, 3, 5), [(B, 5)], 0),
    ("flatten-unflatten", lambda lib: lambda x: x.flatten().unflatten(0, (2, 10)), [(B, 4, 5)], 0),
    ("select-slice", lambda lib: lambda x: x[1] + x[:, 1:3].sum(-1).sum(), [(B, 4, 5)], 0),
    ("index-ellipsis-none", lambda lib: lambda x: x[..., None, ::2], [(B, 4, 5)], 0),
    ("narrow-chunk", lambda lib: lambda x: x.narrow(1, 1, 2) * x.chunk(2, 1)[1][:, :2], [(B, 4, 5)], 0),
    ("split-unbind", lambda lib: lambda x: x.split(2, 0)[1] + x.unbind(0)[0], [(B, 4, 5)], 0),
    ("flip-roll", lambda lib: lambda x: x.flip(0) + x.roll(1, 1), [(B, 4, 5)], 0),
    ("diagonal-tril", lambda lib: lambda x: x.diagonal() + x.tril().sum(0), [(B, 4, 4)], 0),
    ("repeat", lambda lib: lambda x: x.repeat(2, 1, 3), [(B, 4, 5)], 0),
    ("pad", lambda lib: lambda x: lib.nn.functional.pad(x, (1, 2)), [(B, 4, 5)], 0),
    ("matmul-unbatched-weight", lambda lib: lambda x, w: x @ w, [(B, 4, 5), (5, 6)], (0, None)),
    ("matmul-batched-weight", lambda lib: lambda x, w: x @ w, [(4, 5), (B, 5, 6)], (None, 0)),
    ("matmul-both", lambda lib: lambda x, w: lib.matmul(x, w), [(B, 2, 4, 5), (B, 5, 6)], 0),
    ("matmul-vec", lambda lib: lambda x, v: lib.matmul(x, v), [(B, 5), (5, 6)], (0, None)),
    ("matmul-vec-3d", lambda lib: lambda x, v: lib.matmul(x, v), [(B, 5), (2, 5, 6)], (0, None)),
    ("mm", lambda lib: lambda x, w: x.mm(w), [(B, 4, 5), (B, 5, 6)], 0),
    ("bmm", lambda lib: lambda x, w: lib.bmm(x, w), [(B, 2, 4, 5), (2, 5, 6)], (0, None)),
    ("mv", lambda lib: lambda m, v: lib.mv(m, v), [(4, 5), (B, 5)], (None, 0)),
    ("dot", lambda lib: lambda a, b: lib.dot(a, b), [(B, 5), (5,)], (0, None)),
    ("linear", lambda lib: lambda x, w, b: lib.nn.functional.linear(x, w, b), [(B, 4, 5), (6, 5), (6,)],
     (0, None, None)),
    ("linear-ensemble", lambda lib: lambda x, w, b: lib.nn.functional.linear(x, w, b), [(4, 5), (B, 6, 5), (B, 6)],
     (None, 0, 0)),
    ("addmm", lambda lib: lambda b, x, w: lib.addmm(b, x, w, beta=0.5, alpha=2.0), [(B, 6), (4, 5), (B, 5, 6)],
     (0, None, 0)),
    ("einsum", lambda lib: lambda x, w: lib.einsum("ij,jk->ik", x, w), [(B, 4, 5), (5, 6)], (0, None)),
    ("einsum-both", lambda lib: lambda x, w: lib.einsum("bij,bjk->bik", x, w), [(2, B, 4, 5), (B, 2, 5, 6)], (1, 0)),
    ("cat", lambda lib: lambda x, y: lib.cat([x, y], -1), [(B, 4, 5), (4, 2)], (0, None)),
    ("stack", lambda lib: lambda x, y: lib.stack([x, y], 0), [(B, 4, 5), (B, 4, 5)], 0),
    ("gather", lambda lib: lambda x: x.gather(1, lib.tensor([[0, 2], [1, 1], [4, 0], [3, 3]])), [(B, 4, 5)], 0),
    ("scatter", lambda lib: lambda x, s: x.scatter(1, lib.tensor([[0, 2]] * 4), s), [(B, 4, 5), (B, 4, 2)], 0),
    ("scatter-add", lambda lib: lambda x, s: x.scatter_add(0, lib.tensor([[0, 1]]), s), [(B, 4, 2), (1, 2)],
     (0, None)),
    ("index-select", lambda lib: lambda x: x.index_select(1, lib.tensor([4, 0, 0])), [(B, 4, 5)], 0),
    ("conv2d", lambda lib: lambda x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1),
     [(B, 2, 3, 5, 5), (4, 3, 3, 3), (4,)], (0, None, None)),
    ("conv2d-ensemble", lambda lib: lambda x, w, b: lib.nn.functional.conv2d(x, w, b, stride=2),
     [(2, 3, 5, 5), (B, 4, 3, 3, 3), (B, 4)], (None, 0, 0)),
    ("conv2d-both-groups", lambda lib: lambda x, w: lib.nn.functional.conv2d(x, w, groups=2),
     [(B, 2, 4, 5, 5), (B, 6, 2, 3, 3)], 0),
    ("conv1d", lambda lib: lambda x, w: lib.nn.functional.conv1d(x, w), [(B, 2, 3, 7), (4, 3, 3)], (0, None)),
    ("max-pool2d", lambda lib: lambda x: lib.nn.functional.max_pool2d(x, 2), [(B, 2, 3, 6, 6)], 0),
    ("max-pool2d-no-n", lambda lib: lambda x: lib.nn.functional.max_pool2d(x, 3, 2), [(B, 3, 7, 7)], 0),
    ("avg-pool2d", lambda lib: lambda x: lib.nn.functional.avg_pool2d(x, 2), [(B, 2, 3, 6, 6)], 0),
    ("adaptive-avg-pool2d", lambda lib: lambda x: lib.nn.functional.adaptive_avg_pool2d(x, 1), [(B, 2, 3, 5, 5)],
     0),
    ("layer-norm", lambda lib: lambda x, w, b: lib.nn.functional.layer_norm(x, (5,), w, b),
     [(B, 4, 5), (5,), (5,)], (0, None, None)),
    ("rms-norm", lambda lib: lambda x, w: lib.nn.functional.rms_norm(x, (4, 5), w), [(B, 2, 4, 5), (4, 5)],
     (0, None)),
    ("layer-norm-no-affine", lambda lib: lambda x: lib.nn.functional.layer_norm(x, (4, 5)), [(B, 2, 4, 5)], 0),
    ("batch-norm-eval", lambda lib: lambda x, w, b: lib.nn.functional.batch_norm(
        x, lib.tensor(STATS[0]), lib.tensor(STATS[1]), w, b), [(B, 4, 3, 2), (3,), (3,)], (0, None, None)),
    ("batch-norm-ensemble", lambda lib: lambda x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, True),
     [(4, 3, 2), (B, 3), (B, 3)], (None, 0, 0)),
    ("batch-norm-train", lambda lib: lambda x: lib.nn.functional.batch_norm(x, None, None, training=True),
     [(B, 4, 3, 2)], 0),
    ("mse-loss", lambda lib: lambda x, y: lib.nn.functional.mse_loss(x, y), [(B, 4, 5), (B, 4, 5)], 0),
    ("zeros-ones-like", lambda lib: lambda x: x + lib.zeros_like(x) + lib.ones_like(x) * 2, [(B, 4)], 0),
    ("to-clone", lambda lib: lambda x: x.double().clone().float(), [(B, 4)], 0),
]


@pytest.mark.parametrize("fn, shapes, in_dims", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_batch_rule_matches_torch(fn, shapes, in_dims):
    check(fn, _arrays(*shapes), in_dims)


def test_embedding_and_cross_entropy_match_torch():
    weight, = _arrays((10, 4))
    indices = rng.integers(0, 10, (B, 6))
    check(lambda lib: lambda i, w: lib.nn.functional.embedding(i, w), [indices, weight], (0, None))
    logits, = _arrays((B, 2, 5))
    targets = rng.integers(0, 5, (B, 2))
    check(lambda lib: lambda x, t: lib.nn.functional.cross_entropy(x, t), [logits, targets], 0)


def test_tensor_indexing_matches_torch():
    x, = _arrays((B, 4, 5))
    check(lambda lib: lambda x: x[lib.tensor([2, 0, 2])], [x])
    check(lambda lib: lambda x: x[:, lib.tensor([1, 3])], [x])
    check(lambda lib: lambda x: x[lib.tensor([0, 1]), lib.tensor([4, 2])], [x])
    check(lambda lib: lambda x: x[lib.tensor([0, 1]), :, lib.tensor([4, 2])], [rng.standard_normal((B, 2, 3, 5))])


def test_a_batched_index_tensor_matches_torch():
    x, = _arrays((B, 4, 5))
    rows = rng.integers(0, 4, (B, 2))
    check(lambda lib: lambda x, i: x[i], [x, rows])
    check(lambda lib: lambda w, i: w[i, lib.tensor([1, 3])], [x[0], rows], (None, 0))
    check(lambda lib: lambda w, i: w[lib.tensor([[0], [2]]), i], [x[0], rng.integers(0, 5, (B, 3))], (None, 0))
    check(lambda lib: lambda x, i: x[:, i], [x, rng.integers(0, 5, (B, 3))], looped={"aten::index"})


def test_float64_and_non_contiguous_inputs_match_torch():
    x, w = _arrays((4, B, 5), (6, 5), dtype=np.float64)
    check(lambda lib: lambda x, w: (x @ w.t()).softmax(-1).sum(0), [x, w], (1, None))
    y, = _arrays((5, B))
    check(lambda lib: lambda y: y.exp() * y[0], [y.T.copy().T], 1)  # a transposed input


def test_empty_and_0d_samples_match_torch():
    check(lambda lib: lambda x: x * 2 + x.sum(), _arrays((B,)), 0)
    check(lambda lib: lambda x: x.sum(0) + 1, _arrays((B, 0, 3)), 0)


# --- vmap's own arguments ----------------------------------------------------------------
def test_in_dims_none_and_negative():
    x, y = _arrays((4, B), (4,))
    check(lambda lib: lambda x, y: x * y, [x, y], (-1, None))
    check(lambda lib: lambda t: t[0] * t[1], [(x, x)], ((1, -1),), grad=False)


@pytest.mark.parametrize("out_dims", [1, -1, (0, 1)])
def test_out_dims(out_dims):
    x, = _arrays((B, 4, 5))
    check(lambda lib: lambda x: (x.sum(0), x * 2), [x], 0, out_dims)


def test_out_dims_none_for_an_unbatched_output():
    x, = _arrays((B, 4))
    for lib in (ember, torch):
        a, b = lib.func.vmap(lambda x: (x * 2, lib.ones(2)), out_dims=(0, None))(lib.tensor(x))
        assert tuple(a.shape) == (B, 4) and tuple(b.shape) == (2,)


@pytest.mark.parametrize("chunk_size", [1, 2, 5])
def test_chunk_size(chunk_size):
    x, w = _arrays((5, 4), (4, 3))
    check(lambda lib: lambda x, w: (x @ w).tanh(), [x, w], (0, None), chunk_size=chunk_size)


def test_chunks_draw_the_same_numbers_under_randomness_same():
    for lib in (ember, torch):
        out = lib.func.vmap(lambda r: r + lib.rand(3), randomness="same", chunk_size=2)(lib.zeros(5, 3))
        assert all(bool((out[i] == out[0]).all()) for i in range(5))
        out = lib.func.vmap(lambda r: r + lib.rand(3), randomness="different", chunk_size=2)(lib.zeros(5, 3))
        assert len({tuple(row.tolist()) for row in out}) == 5


def test_nested_vmap():
    x, y = _arrays((B, 2, 4), (2, 5, 4))
    check(lambda lib: lib.func.vmap(lambda x, y: (x @ y.t()).softmax(-1), in_dims=(0, 0)), [x, y], (0, None))
    check(lambda lib: lib.func.vmap(lambda a: lib.func.vmap(lambda b: b * a.sum())(a)), [x])


def test_nested_vmap_over_the_same_tensor_twice():
    x, = _arrays((B, 4))
    check(lambda lib: lambda x: lib.func.vmap(lambda y: x * y)(x), [x])


# --- rules versus the loop -----------------------------------------------------------------
def test_an_op_with_a_rule_does_not_loop_and_one_without_does():
    x, = _arrays((B, 3, 3))
    batching.fallback_counts.clear()
    ember.func.vmap(lambda m: (m @ m).softmax(-1).sum(0).exp())(ember.tensor(x))
    assert not batching.fallback_counts
    check(lambda lib: lambda m: lib.linalg.det(m), [x], looped={"aten::linalg_det"})
    batching.fallback_counts.clear()
    ember.func.vmap(lambda m: ember.linalg.det(m))(ember.tensor(x))
    assert batching.fallback_counts == {"aten::linalg_det": 1}


def test_the_rules_cover_what_the_docs_list():
    for name in ["aten::add", "aten::mul", "aten::where", "aten::sum", "aten::softmax", "aten::view", "aten::mm",
                 "aten::linear", "aten::cat", "aten::gather", "aten::convolution", "aten::embedding",
                 "norm::layer_norm", "aten::native_dropout"]:
        assert name in BATCH_RULES


# --- in-place ------------------------------------------------------------------------------
def test_inplace_on_a_batched_tensor():
    x, y = _arrays((B, 4), (4,))
    check(lambda lib: lambda x, y: x.clone().add_(y).mul_(2), [x, y], (0, None))
    check(lambda lib: lambda x, y: x.clone().copy_(y) + x, [x, y], (0, None))


def _set(target, key, value):
    target[key] = value
    return target


@pytest.mark.parametrize("fn", [
    lambda lib: lambda x: x.clone().unsqueeze_(0) * 2,
    lambda lib: lambda x: x.clone().reshape(2, 2).t_() + 1,
    lambda lib: lambda x: x.clone().zero_() + x,
    lambda lib: lambda x: x.clone().fill_(3.0) * x,
    lambda lib: lambda x: _set(x.clone(), 0, 5.0),
    lambda lib: lambda x: _set(x.clone(), slice(0, 2), x[2:]),
    lambda lib: lambda x: _set(x.clone(), lib.tensor([1, 3]), x[:2] * 2),
], ids=["unsqueeze_", "t_", "zero_", "fill_", "setitem-scalar", "setitem-batched", "setitem-index"])
def test_inplace_forms_match_torch(fn):
    check(fn, _arrays((B, 4)), looped={"aten::index_put"})


@pytest.mark.parametrize("write", [
    lambda lib, r: lib.zeros(4).copy_(r),
    lambda lib, r: _set(lib.zeros(4), slice(0, 2), r[:2]),
], ids=["copy_", "setitem"])
def test_inplace_into_an_unbatched_tensor_is_refused_as_torch(write):
    x, = _arrays((B, 4))
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            lib.func.vmap(lambda r: write(lib, r))(lib.tensor(x))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


# --- errors as torch's ---------------------------------------------------------------------
@pytest.mark.parametrize("body", [
    lambda lib: lambda r: r.sum().item(),
    lambda lib: lambda r: 1.0 if r.sum() > 0 else 0.0,
    lambda lib: lambda r: float(r.sum()),
    lambda lib: lambda r: r.data,
    lambda lib: lambda r: r + lib.randn(4),
    lambda lib: lambda r: lib.nn.functional.dropout(r, 0.5),
    lambda lib: lambda r: lib.randn_like(r),
], ids=["item", "control-flow", "float", "data", "randn", "dropout", "randn_like"])
def test_errors_match_torch(body):
    x, = _arrays((B, 4))
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            lib.func.vmap(body(lib))(lib.tensor(x))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


# --- randomness ------------------------------------------------------------------------------
@pytest.mark.parametrize("draw", [
    lambda lib, r: r + lib.rand(4),
    lambda lib, r: r + lib.randn_like(r),
    lambda lib, r: lib.nn.functional.dropout(r, 0.5),
], ids=["rand", "randn_like", "dropout"])
def test_randomness_same_and_different(draw):
    ones = np.ones((B, 4), np.float32)
    for lib in (ember, torch):
        lib.manual_seed(0)
        same = lib.func.vmap(lambda r: draw(lib, r), randomness="same")(lib.tensor(ones) * 0 + 1)
        assert all(bool((same[i] == same[0]).all()) for i in range(B))
        different = lib.func.vmap(lambda r: draw(lib, r), randomness="different")(lib.tensor(ones))
        assert not all(bool((different[i] == different[0]).all()) for i in range(B))


def test_channel_dropout_different_draws_per_sample_channels():
    ember.manual_seed(0)
    out = ember.func.vmap(lambda r: ember.nn.functional.dropout2d(r, 0.5), randomness="different")(
        ember.ones(6, 2, 8, 3, 3))
    per_channel = out.flatten(3)  # each (sample, n, c) channel is all kept or all dropped
    assert bool(((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all())
    assert not all(bool((out[i] == out[0]).all()) for i in range(6))


def test_dropout_different_keeps_the_rate_and_scale():
    ember.manual_seed(0)
    out = ember.func.vmap(lambda r: ember.nn.functional.dropout(r, 0.25), randomness="different")(ember.ones(8, 1000))
    values = set(out.unique().tolist())
    assert values == {0.0, np.float32(1 / 0.75).item()}
    assert abs((out == 0).float().mean().item() - 0.25) < 0.02


# --- per-sample gradients and ensembles --------------------------------------------------
def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


def _per_sample_grads(lib, data, targets):
    model = _mlp(lib)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(data), lib.tensor(targets))


def test_per_sample_grads_batch_without_the_loop():
    data, = _arrays((5, 6))
    targets = rng.integers(0, 3, 5)
    batching.fallback_counts.clear()
    mine = _per_sample_grads(ember, data, targets)
    assert not batching.fallback_counts, dict(batching.fallback_counts)
    theirs = _per_sample_grads(torch, data, targets)
    for name in theirs:
        _close(mine[name], theirs[name])


def test_vmap_of_grad_with_batched_params_and_nested():
    w, x = _arrays((B, 4), (B, 2, 4))
    check(lambda lib: lib.func.grad(lambda w, x: (x @ w).tanh().sum()), [w, x], grad=False)
    check(lambda lib: lib.func.vmap(lib.func.grad(lambda w, x: (x * w).sin().sum()), in_dims=(None, 0)),
          [w, x], (0, 0), grad=False)
    check(lambda lib: lib.func.grad(lambda w, x: lib.func.vmap(lambda r: (r * w).sum())(x).pow(2).sum()),
          [w, x], grad=False)


def test_vmap_of_jacrev_and_vjp():
    x, = _arrays((B, 3))
    check(lambda lib: lib.func.jacrev(lambda v: v.sin() * v.sum()), [x], grad=False)
    primal, = _arrays((3,))
    cotangents, = _arrays((B, 3))
    for lib in (ember, torch):
        _, vjp_fn = lib.func.vjp(lambda v: v.exp(), lib.tensor(primal))
        result = lib.func.vmap(vjp_fn)(lib.tensor(cotangents))[0]
        np.testing.assert_allclose(result.numpy(), cotangents * np.exp(primal), rtol=1e-6)


def _cnn(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3), lib.nn.ReLU(), lib.nn.MaxPool2d(2), lib.nn.Flatten(),
                             lib.nn.Linear(36, 10), lib.nn.LogSoftmax(-1))


def _per_sample_cnn_grads(lib, images, labels):
    model = _cnn(lib)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
        return lib.nn.functional.nll_loss(out, y.unsqueeze(0))
    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(images), lib.tensor(labels))


def test_per_sample_grads_of_a_cnn_batch_without_the_loop():
    """functorch's per-sample-grads tutorial, in small: conv, relu, max-pool, linear, nll."""
    images, = _arrays((4, 1, 8, 8))
    labels = rng.integers(0, 10, 4)
    batching.fallback_counts.clear()
    mine = _per_sample_cnn_grads(ember, images, labels)
    assert not batching.fallback_counts, dict(batching.fallback_counts)
    theirs = _per_sample_cnn_grads(torch, images, labels)
    for name in theirs:
        _close(mine[name], theirs[name], rtol=1e-4)


def _ensemble(lib, data):
    lib.manual_seed(0)
    models = [_mlp(lib) for _ in range(4)]
    params, buffers = lib.func.stack_module_state(models)

    def run(p, b, x):
        return lib.func.functional_call(models[0], (p, b), (x,))
    return lib.func.vmap(run, in_dims=(0, 0, None))(params, buffers, lib.tensor(data))


def test_ensemble_batches_without_the_loop():
    data, = _arrays((5, 6))
    batching.fallback_counts.clear()
    mine = _ensemble(ember, data)
    assert not batching.fallback_counts
    _close(mine, _ensemble(torch, data))


def test_the_docs_list_the_ops_with_rules():
    import pathlib
    import re

    import ember.func.batch_rules as rules

    text = (pathlib.Path(__file__).parents[3] / "docs" / "chapters" / "03-autograd.md").read_text()
    listed = set()
    for line in text.splitlines():
        if re.match(r"- \*\*(pointwise|reduction|views|linalg|scatter|nn|loss)\*\* \(\d+\):", line):
            listed |= set(re.findall(r"`([a-z_]+::[A-Za-z0-9_.]+)`", line))
    expected = {name for name, rule in rules.BATCH_RULES.items() if rule.__module__ != rules.random.__name__}
    assert listed == expected


def test_every_unary_pointwise_rule_matches_torch():
    """Each one-operand pointwise op of the registry with a Tensor method in both
    libraries, on positive inputs inside (0, 1): values and gradients."""
    from ember.func.batch_rules.pointwise import pointwise

    x = rng.uniform(0.1, 0.9, (B, 4)).astype(np.float32)
    names = sorted({name.split("::")[1] for name, rule in BATCH_RULES.items() if rule is pointwise})
    checked = []
    for name in names:
        if not (hasattr(torch.Tensor, name) and hasattr(ember.Tensor, name)):
            continue
        try:
            getattr(torch.tensor(x[0]), name)()
        except (TypeError, RuntimeError):
            continue  # not a one-operand op (add, where, ...): the cases above test those
        check(lambda lib, name=name: lambda t: getattr(t, name)(), [x], grad=name not in NOT_DIFFERENTIABLE)
        checked.append(name)
    assert len(checked) >= 30, checked


NOT_DIFFERENTIABLE = {"sign", "sgn", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "signbit", "logical_not",
                      "bitwise_not", "ceil", "floor", "round", "trunc", "frac"}
