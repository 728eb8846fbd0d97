"""float16 and bfloat16 computed in float32 and rounded once (ember/opmath.py) against
torch 2.13: for each op, ember's error against a float64 result is within 1.5x torch's
own (values and gradients), and inputs whose float16 intermediates overflow give what
torch gives."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

REDUCED = ["float16", "bfloat16"]


def _lib_call(fn, lib, arrays, dtype, requires_grad):
    """``fn(lib, F, *tensors)`` on ``arrays`` rounded to ``dtype`` (None: float64)."""
    module, functional = (torch, TF) if lib == "torch" else (ember, EF)
    tensors = []
    for a in arrays:
        t = module.tensor(np.asarray(a, dtype=np.float64))
        if dtype is not None:
            t = t.to(getattr(module, dtype))
        tensors.append(t.requires_grad_(requires_grad))
    return fn(module, functional, *tensors), tensors


def _as_float64(arrays, dtype):
    """The float64 values of ``arrays`` once rounded to ``dtype``: the reference's inputs."""
    return [torch.tensor(np.asarray(a, dtype=np.float64)).to(getattr(torch, dtype)).double().numpy() for a in arrays]


def _errors(fn, arrays, dtype, grad):
    """Max abs error of (torch, ember) against float64 on the same rounded inputs, for
    the value and, with ``grad``, every input's gradient under one fixed cotangent."""
    exact = _as_float64(arrays, dtype)
    reference, ref_inputs = _lib_call(fn, "torch", exact, None, grad)
    cotangent = np.random.default_rng(1).standard_normal(tuple(reference.shape))
    results = []
    for lib in ("torch", "ember"):
        out, inputs = _lib_call(fn, lib, arrays, dtype, grad)
        assert str(out.dtype).split(".")[-1] == dtype
        values = [(out.detach().double().numpy(), reference.detach().numpy())]
        if grad:
            module = torch if lib == "torch" else ember
            out.backward(module.tensor(cotangent).to(out.dtype))
            if lib == "torch":
                reference.backward(torch.tensor(cotangent))
            for t, r in zip(inputs, ref_inputs):
                assert str(t.grad.dtype).split(".")[-1] == dtype
                values.append((t.grad.double().numpy(), r.grad.numpy()))
        results.append([(np.max(np.abs(o - r)) if o.size else 0.0, np.max(np.abs(r), initial=0.0)) for o, r in values])
    return results


def _check_accuracy(fn, arrays, dtype, grad=True):
    theirs, ours = _errors(fn, arrays, dtype, grad)
    for (ours_err, scale), (theirs_err, _) in zip(ours, theirs):
        # 1.5x torch's error, and float32 rounding where torch is exact
        assert ours_err <= 1.5 * theirs_err + 2.0 ** -24 * scale, (ours_err, theirs_err)


_RNG = np.random.default_rng(0)
_X3 = _RNG.standard_normal((4, 8, 32)) * 3
_X4 = _RNG.standard_normal((4, 6, 7, 7)) * 3
_Q, _K, _V = (_RNG.standard_normal((2, 3, 16, 8)) for _ in range(3))
_A, _B, _C = _RNG.standard_normal((16, 64)), _RNG.standard_normal((64, 24)), _RNG.standard_normal((16, 24))

CASES = {
    "layer_norm": (lambda m, F, x, w, b: F.layer_norm(x, (32,), w, b), [_X3, 1 + _X3[0, 0] / 9, _X3[1, 1]]),
    "batch_norm_train": (lambda m, F, x: F.batch_norm(x, None, None, training=True), [_X4]),
    "batch_norm_eval": (lambda m, F, x, w, b: F.batch_norm(x, m.ones(6, dtype=x.dtype),
                                                           m.full((6,), 2.0, dtype=x.dtype), w, b),
                        [_X4, _X4[0, :, 0, 0], _X4[1, :, 0, 0]]),
    "group_norm": (lambda m, F, x: F.group_norm(x, 2), [_X4]),
    "rms_norm": (lambda m, F, x: F.rms_norm(x, (32,)), [_X3]),
    "sdpa": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v), [_Q, _K, _V]),
    "sdpa_causal": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), [_Q, _K, _V]),
    "avg_pool2d": (lambda m, F, x: F.avg_pool2d(x, 3, 2, 1), [_X4]),
    "avg_pool1d": (lambda m, F, x: F.avg_pool1d(x, 3), [_X3]),
    "adaptive_avg_pool2d": (lambda m, F, x: F.adaptive_avg_pool2d(x, 3), [_X4]),
    "adaptive_avg_pool2d_global": (lambda m, F, x: F.adaptive_avg_pool2d(x, 1), [_X4]),
    "adaptive_avg_pool1d": (lambda m, F, x: F.adaptive_avg_pool1d(x, 5), [_X3]),
    "interpolate_bilinear": (lambda m, F, x: F.interpolate(x, scale_factor=2.3, mode="bilinear"), [_X4]),
    "interpolate_linear": (lambda m, F, x: F.interpolate(x, size=50, mode="linear", align_corners=True), [_X3]),
    "interpolate_area": (lambda m, F, x: F.interpolate(x, size=(4, 4), mode="area"), [_X4]),
    "addmm": (lambda m, F, c, a, b: m.addmm(c, a, b, beta=0.3, alpha=1.7), [_C, _A, _B]),
    "baddbmm": (lambda m, F, c, a, b: m.baddbmm(c, a, b), [np.stack([_C] * 2), np.stack([_A] * 2), np.stack([_B] * 2)]),
    "addmv": (lambda m, F, c, a, b: m.addmv(c, a, b), [_C[:, 0], _A, _B[:, 0]]),
    "linear": (lambda m, F, x, w, b: F.linear(x, w, b), [_A, _B.T, _C[0]]),
    "einsum": (lambda m, F, a, b: m.einsum("ij,jk->ik", a, b), [_A, _B]),
    "log_softmax": (lambda m, F, x: F.log_softmax(x, -1), [_X3]),
    "gelu": (lambda m, F, x: F.gelu(x), [_X3]),
    "gelu_tanh": (lambda m, F, x: F.gelu(x, approximate="tanh"), [_X3]),
    "silu": (lambda m, F, x: F.silu(x), [_X3]),
    "hardswish": (lambda m, F, x: F.hardswish(x), [_X3]),
    "hardsigmoid": (lambda m, F, x: F.hardsigmoid(x), [_X3]),
    "prod": (lambda m, F, x: (1 + x / 30).prod(-1), [_X3]),
    "cross_entropy": (lambda m, F, x: F.cross_entropy(x, m.tensor([1, 2, 3, 0])), [_X3[:, :5, 0]]),
    "mse_loss": (lambda m, F, x, y: F.mse_loss(x, y), [_X3, _X3[::-1].copy()]),
}


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("name", sorted(CASES))
def test_error_within_torch_s(name, dtype):
    fn, arrays = CASES[name]
    _check_accuracy(fn, arrays, dtype)


def _same(fn, arrays, dtype):
    """Equal to torch's result, NaN for NaN, on the same ``dtype`` inputs."""
    theirs, _ = _lib_call(fn, "torch", arrays, dtype, False)
    ours, _ = _lib_call(fn, "ember", arrays, dtype, False)
    assert str(ours.dtype).split(".")[-1] == dtype
    np.testing.assert_array_equal(ours.double().numpy(), theirs.double().numpy())


_BIG = np.array([[300.0, -300.0, 100.0, 0.0]])
OVERFLOW_CASES = {  # each one's float16 intermediates pass 65504; torch's float32 ones do not
    "layer_norm": (lambda m, F, x: F.layer_norm(x, (4,)), [_BIG]),
    "batch_norm": (lambda m, F, x: F.batch_norm(x, None, None, training=True), [_BIG.T]),
    "group_norm": (lambda m, F, x: F.group_norm(x, 1), [_BIG.reshape(1, 4, 1)]),
    "instance_norm": (lambda m, F, x: F.instance_norm(x), [_BIG.reshape(1, 1, 4)]),
    "sdpa": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
             [np.full((1, 2, 4), 300.0), np.full((1, 2, 4), 300.0), np.ones((1, 2, 4))]),
    "avg_pool2d": (lambda m, F, x: F.avg_pool2d(x, 2), [np.full((1, 1, 4, 4), 60000.0)]),
    "adaptive_avg_pool2d": (lambda m, F, x: F.adaptive_avg_pool2d(x, 1), [np.full((1, 1, 4, 4), 60000.0)]),
    "adaptive_avg_pool2d_3": (lambda m, F, x: F.adaptive_avg_pool2d(x, 3), [np.full((1, 1, 4, 4), 60000.0)]),
    "interpolate_bilinear": (lambda m, F, x: F.interpolate(x, scale_factor=1.5, mode="bilinear"),
                             [np.full((1, 1, 4, 4), 60000.0)]),
    "hardswish": (lambda m, F, x: F.hardswish(x), [np.array([12000.0, -3.0, 65504.0])]),
    "gelu": (lambda m, F, x: F.gelu(x, approximate="tanh"), [np.array([12000.0, 300.0])]),
    "mean": (lambda m, F, x: x.mean(), [np.full(8, 60000.0)]),
    "mse_loss_mean": (lambda m, F, x, y: F.mse_loss(x, y), [np.full(8, 200.0), np.zeros(8)]),
    "mse_loss_one_overflows": (lambda m, F, x, y: F.mse_loss(x, y), [np.array([300.0, 0.0]), np.zeros(2)]),
    "log_softmax": (lambda m, F, x: F.log_softmax(x, -1), [np.array([60000.0, -60000.0, 0.0])]),
    "linear": (lambda m, F, x, w: F.linear(x, w), [np.full((1, 4), 300.0), np.full((1, 4), -300.0) / 4]),
}


@pytest.mark.parametrize("name", sorted(OVERFLOW_CASES))
def test_float16_overflow_as_torch(name):
    fn, arrays = OVERFLOW_CASES[name]
    _same(fn, arrays, "float16")


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("source", ["float32", "float64"])
def test_reduction_dtype_rounds_input_then_accumulates_in_float32(dtype, source):
    values = np.full(8, 60000.0)
    for fn in (lambda m, x: x.mean(dtype=getattr(m, dtype)), lambda m, x: (x / 8).sum(dtype=getattr(m, dtype)),
               lambda m, x: (x / 60000).prod(dtype=getattr(m, dtype))):
        theirs = fn(torch, torch.tensor(values).to(getattr(torch, source)))
        ours = fn(ember, ember.tensor(values).to(getattr(ember, source)))
        assert str(ours.dtype).split(".")[-1] == dtype
        np.testing.assert_array_equal(ours.double().numpy(), theirs.double().numpy())


def test_float32_and_float64_take_no_opmath_cast():
    """The opmath casts touch only reduced floats: a float32 norm's statistics stay float32."""
    def stats(dtype):
        return ember.ops.norm.layer_norm_stats(ember.arange(6.0, dtype=dtype).view(2, 3), normalized_ndim=1, eps=1e-5)

    for dtype in (ember.float32, ember.float64):
        mean, rstd = stats(dtype)
        assert mean.dtype is rstd.dtype is dtype
    mean, rstd = stats(ember.float16)
    assert mean.dtype is rstd.dtype is ember.float32  # opmath="unrounded": the layer_norm op rounds once


def test_custom_op_opmath_argument():
    def kernel(xp, x):
        return x * x / 4  # float16 squares of 300 pass 65504; in float32 they do not

    in_float32 = ember.library.custom_op("opmath_test::quarter_square", opmath=True)(kernel)
    in_float16 = ember.library.custom_op("opmath_test::quarter_square_plain")(kernel)
    x = ember.full((2,), 300.0, dtype=ember.float16)
    assert in_float32(x).dtype is in_float16(x).dtype is ember.float16
    assert in_float32(x).tolist() == [float(np.float16(22500.0))] * 2
    assert in_float16(x).tolist() == [float("inf")] * 2
    with pytest.raises(ValueError, match="opmath must be one of"):
        ember.library.custom_op("opmath_test::bad", opmath="yes")


# --- add and sub with alpha: torch's two loops (NOTE [ alpha in the two loops ]) -----------------
def _same_layout(t):
    """``t`` (a torch tensor) as an ember tensor with the same values and strides; a
    Python number as itself."""
    if not isinstance(t, torch.Tensor):
        return t
    storage = t.untyped_storage()
    flat = torch.empty(0, dtype=t.dtype).set_(storage, 0, (storage.nbytes() // t.element_size(),), (1,))
    copy = ember.tensor(flat.float().numpy()).to(getattr(ember, str(t.dtype).split(".")[1]))
    return copy.as_strided(tuple(t.shape), t.stride(), t.storage_offset())


def _alpha_operands(layout, size, dtype, rng):
    """Torch operands in ``layout``: (self, other)."""
    def draw(*shape):
        return torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).to(dtype)
    return {
        "contiguous": lambda: (draw(size), draw(size)),
        "rows": lambda: (draw(3, size), draw(3, size)),
        "transposed": lambda: (draw(size, 3).t(), draw(3, size)),
        "both transposed": lambda: (draw(size, 3).t(), draw(size, 3).t()),
        "strided": lambda: (draw(3, 2 * size)[:, ::2], draw(3, size)),
        "narrowed rows": lambda: (draw(3, size + 5)[:, :size], draw(3, size)),
        "broadcast row": lambda: (draw(3, size), draw(size)),
        "broadcast column": lambda: (draw(3, size), draw(3, 1)),
        "outer": lambda: (draw(3, 1), draw(1, size)),
        "0-d other": lambda: (draw(2, size), draw()),
        "0-d self": lambda: (draw(), draw(2, size)),
        "python float": lambda: (draw(2, size), 2.5),
        "permuted": lambda: (draw(2, 3, size).permute(2, 0, 1), draw(size, 2, 3)),
    }[layout]()


LAYOUTS = ["contiguous", "rows", "transposed", "both transposed", "strided", "narrowed rows", "broadcast row",
           "broadcast column", "outer", "0-d other", "0-d self", "python float", "permuted"]


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_add_and_sub_with_alpha_round_as_torch_s_vector_and_scalar_loops(layout, dtype):
    """Bit for bit against torch at every size around the 32-element step of its vector
    loop (which rounds once) and its scalar tail (which rounds alpha * other first), in
    every layout that decides which loop an element takes; in place too."""
    rng = np.random.default_rng(0)
    dtype = getattr(torch, dtype)
    for size in [1, 2, 5, 17, 31, 32, 33, 47, 63, 64, 65, 96, 100, 1000]:
        a, b = _alpha_operands(layout, size, dtype, rng)
        for name, alpha in (("add", 0.3), ("sub", 1.7), ("sub", 3), ("add", -257)):
            expected = getattr(torch, name)(a, b, alpha=alpha)
            ours = getattr(ember, name)(_same_layout(a), _same_layout(b), alpha=alpha)
            assert ours.dtype == getattr(ember, str(dtype).split(".")[1])
            np.testing.assert_array_equal(ours.float().numpy(), expected.float().numpy(), err_msg=f"{name} {size}")
            if tuple(a.shape) == tuple(expected.shape):
                theirs_inplace = getattr(a.clone(), name + "_")(b, alpha=alpha)
                ours_inplace = getattr(_same_layout(a.clone()), name + "_")(_same_layout(b), alpha=alpha)
                np.testing.assert_array_equal(ours_inplace.float().numpy(), theirs_inplace.float().numpy())


@pytest.mark.parametrize("threads", [1, 2])
def test_add_with_alpha_past_the_grain_size_splits_as_torch_s_threads(threads):
    # past 32768 elements each thread's range starts its own vector steps
    before = torch.get_num_threads(), ember.get_num_threads()
    torch.set_num_threads(threads)
    ember.set_num_threads(threads)
    try:
        rng = np.random.default_rng(1)
        for size in (32768, 40003, 65601):
            a, b = (torch.from_numpy(rng.standard_normal(size).astype(np.float32)).bfloat16() for _ in range(2))
            ours = ember.sub(_same_layout(a), _same_layout(b), alpha=0.3)
            np.testing.assert_array_equal(ours.float().numpy(), torch.sub(a, b, alpha=0.3).float().numpy())
    finally:
        torch.set_num_threads(before[0])
        ember.set_num_threads(before[1])
