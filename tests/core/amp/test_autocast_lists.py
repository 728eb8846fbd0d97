"""ember.autocast's op lists against torch 2.13's CPU autocast: the names on torch's
own test lists (torch/testing/_internal/autocast_test_lists.py) carry the same policy
in ember, and each public function gives torch's output dtype, or raises where torch
raises, with float32, low-precision and mixed float32 / low-precision operands."""

import numpy as np
import pytest
import torch
from torch.testing._internal.autocast_test_lists import AutocastCPUTestLists

import ember
from ember.amp.state import POLICY

_TORCH_LISTS = {"torch_16": "lower_precision", "nn_16": "lower_precision", "torch_fp32": "fp32", "nn_fp32": "fp32",
                "torch_need_autocast_promote": "promote"}


@pytest.mark.parametrize("list_name", sorted(_TORCH_LISTS))
def test_torch_s_test_lists_have_ember_s_policy(list_name):
    for entry in getattr(AutocastCPUTestLists("cpu"), list_name):
        assert POLICY.get(entry[0]) == _TORCH_LISTS[list_name], entry[0]


_RNG = np.random.default_rng(0)
_N = 6
_A, _B, _V = _RNG.standard_normal((_N, _N)), _RNG.standard_normal((_N, _N)), _RNG.standard_normal(_N)
_P = _RNG.random((_N, _N)) * 0.8 + 0.1
_SPD = _A @ _A.T + _N * np.eye(_N)
_X3, _X4 = _RNG.standard_normal((2, 3, _N)), _RNG.standard_normal((2, 3, _N, _N))
_X5 = _RNG.standard_normal((1, 2, 4, 4, 4))
_TARGET = np.zeros(_N, dtype=np.int64)

# name: (function of (lib, F, *tensors), the floating arrays)
CASES = {
    "mm": (lambda m, F, a, b: m.mm(a, b), [_A, _B]),
    "matmul": (lambda m, F, a, b: a @ b, [_A, _B]),
    "addmm": (lambda m, F, c, a, b: m.addmm(c, a, b), [_A, _A, _B]),
    "addmv": (lambda m, F, c, a, b: m.addmv(c, a, b), [_V, _A, _V]),
    "mv": (lambda m, F, a, b: m.mv(a, b), [_A, _V]),
    "dot": (lambda m, F, a, b: m.dot(a, b), [_V, _V]),
    "bmm": (lambda m, F, a, b: m.bmm(a, b), [_X3[:, :, :3].copy(), _X3]),
    "baddbmm": (lambda m, F, c, a, b: m.baddbmm(c, a, b), [_X3[:, :3, :], _X3[:, :, :3].copy(), _X3[:, :3, :]]),
    "einsum product": (lambda m, F, a, b: m.einsum("ij,jk->ik", a, b), [_A, _B]),
    "einsum batched": (lambda m, F, a, b: m.einsum("bij,bkj->bik", a, b), [_X3, _X3]),
    "einsum outer": (lambda m, F, a, b: m.einsum("i,j->ij", a, b), [_V, _V]),
    "einsum trace": (lambda m, F, a: m.einsum("ii->", a), [_A]),
    "linear": (lambda m, F, a, w, b: F.linear(a, w, b), [_A, _B, _V]),
    "bilinear": (lambda m, F, a, b, w: F.bilinear(a, b, w), [_A, _B, _RNG.standard_normal((3, _N, _N))]),
    "conv2d": (lambda m, F, a, w: F.conv2d(a, w), [_X4, _X4[:, :, :3, :3].copy()]),
    "sdpa": (lambda m, F, q, k, v: F.scaled_dot_product_attention(q, k, v), [_X3, _X3[::-1].copy(), _X3]),
    "sdpa float mask": (lambda m, F, q, k, v, mask: F.scaled_dot_product_attention(q, k, v, mask),
                        [_X3, _X3, _X3, _RNG.standard_normal((3, 3))]),
    "prelu": (lambda m, F, a, w: F.prelu(a, w), [_X3, _V[:1].copy()]),
    "smooth_l1_loss": (lambda m, F, a, b: F.smooth_l1_loss(a, b), [_A, _B]),
    "huber_loss": (lambda m, F, a, b: F.huber_loss(a, b), [_A, _B]),
    "l1_loss": (lambda m, F, a, b: F.l1_loss(a, b), [_A, _B]),
    "mse_loss": (lambda m, F, a, b: F.mse_loss(a, b), [_A, _B]),
    "kl_div": (lambda m, F, a, b: F.kl_div(a, b, reduction="batchmean"), [_A, _P]),
    "binary_cross_entropy": (lambda m, F, a, b: F.binary_cross_entropy(a, b), [_P, _P]),
    "binary_cross_entropy_with_logits": (lambda m, F, a, b: F.binary_cross_entropy_with_logits(a, b), [_A, _P]),
    "nll_loss": (lambda m, F, a: F.nll_loss(a, m.tensor(_TARGET)), [_A]),
    "cross_entropy": (lambda m, F, a: F.cross_entropy(a, m.tensor(_TARGET)), [_A]),
    "margin_ranking_loss": (lambda m, F, a, b, c: F.margin_ranking_loss(a, b, c), [_V, _V[::-1].copy(), np.sign(_V)]),
    "cosine_embedding_loss": (lambda m, F, a, b, c: F.cosine_embedding_loss(a, b, c), [_A, _B, np.sign(_V)]),
    "poisson_nll_loss": (lambda m, F, a, b: F.poisson_nll_loss(a, b), [_A, _P]),
    "triplet_margin_loss": (lambda m, F, a, b, c: F.triplet_margin_loss(a, b, c), [_A, _B, _P]),
    "reflection_pad1d": (lambda m, F, a: F.pad(a, (2, 2), mode="reflect"), [_X3]),
    "reflection_pad2d": (lambda m, F, a: F.pad(a, (2, 2, 1, 1), mode="reflect"), [_X4]),
    "reflection_pad3d": (lambda m, F, a: F.pad(a, (1, 1, 1, 1, 1, 1), mode="reflect"), [_X5]),
    "replication_pad1d": (lambda m, F, a: F.pad(a, (2, 2), mode="replicate"), [_X3]),
    "replication_pad2d": (lambda m, F, a: F.pad(a, (2, 2, 1, 1), mode="replicate"), [_X4]),
    "replication_pad3d": (lambda m, F, a: F.pad(a, (1, 1, 1, 1, 1, 1), mode="replicate"), [_X5]),
    "circular_pad": (lambda m, F, a: F.pad(a, (2, 2), mode="circular"), [_X3]),
    "inverse": (lambda m, F, a: m.inverse(a), [_SPD]),
    "linalg.inv": (lambda m, F, a: m.linalg.inv(a), [_SPD]),
    "pinverse": (lambda m, F, a: m.pinverse(a), [_SPD]),
    "linalg.cholesky": (lambda m, F, a: m.linalg.cholesky(a), [_SPD]),
    "linalg.solve": (lambda m, F, a, b: m.linalg.solve(a, b), [_SPD, _B]),
    "linalg.svd": (lambda m, F, a: m.linalg.svd(a)[1], [_SPD]),
    "svd": (lambda m, F, a: m.svd(a)[1], [_SPD]),
    "linalg.svdvals": (lambda m, F, a: m.linalg.svdvals(a), [_SPD]),
    "linalg.eigh": (lambda m, F, a: m.linalg.eigh(a)[0], [_SPD]),
    "linalg.eigvalsh": (lambda m, F, a: m.linalg.eigvalsh(a), [_SPD]),
    "linalg.qr": (lambda m, F, a: m.linalg.qr(a)[0], [_SPD]),
    "linalg.lstsq": (lambda m, F, a, b: m.linalg.lstsq(a, b).solution, [_SPD, _B]),
    "linalg.det": (lambda m, F, a: m.linalg.det(a), [_SPD]),
    "prod": (lambda m, F, a: a.prod(1), [_P]),
    "cat": (lambda m, F, a, b: m.cat([a, b]), [_A, _B]),
    "stack": (lambda m, F, a, b: m.stack([a, b]), [_A, _B]),
    "add": (lambda m, F, a, b: a + b, [_A, _B]),
    "softmax": (lambda m, F, a: F.softmax(a, -1), [_A]),
    "layer_norm": (lambda m, F, a: F.layer_norm(a, (_N,)), [_A]),
    "adaptive_avg_pool2d": (lambda m, F, a: F.adaptive_avg_pool2d(a, 4), [_X4]),
    "interpolate": (lambda m, F, a: F.interpolate(a, scale_factor=1.5, mode="bilinear"), [_X4]),
}


def _dtypes(count, low, kind):
    if kind == "float32":
        return ["float32"] * count
    if kind == "low":
        return [low] * count
    if kind == "mixed":
        return ["float32"] + [low] * (count - 1)
    return [low] + ["float32"] * (count - 1)  # "mixed, low first"


def _outcome(lib, fn, arrays, dtypes, low):
    """The output's dtype name, or "raises" with the error's type."""
    module, functional = (torch, torch.nn.functional) if lib == "torch" else (ember, ember.nn.functional)
    tensors = [module.tensor(a).to(getattr(module, d)) for a, d in zip(arrays, dtypes)]
    try:
        with module.autocast("cpu", dtype=getattr(module, low)):
            out = fn(module, functional, *tensors)
    except RuntimeError:
        return "raises"
    return str(out.dtype).split(".")[-1]


def _cases():
    for name, (_, arrays) in CASES.items():
        kinds = ["float32", "low"] + (["mixed", "mixed, low first"] if len(arrays) > 1 else [])
        for kind in kinds:
            yield name, kind


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name, kind", list(_cases()))
def test_output_dtype_matches_torch_s_cpu_autocast(name, kind, low):
    fn, arrays = CASES[name]
    dtypes = _dtypes(len(arrays), low, kind)
    assert _outcome("ember", fn, arrays, dtypes, low) == _outcome("torch", fn, arrays, dtypes, low)


@pytest.mark.parametrize("name", ["sdpa", "linalg.lstsq", "kl_div", "replication_pad2d", "einsum product"])
def test_values_match_torch_under_autocast(name):
    """An op on a list runs its insides without autocast (ember.amp.state.suspended): its
    products are not cast a second time, so the values are torch's."""
    fn, arrays = CASES[name]
    dtypes = _dtypes(len(arrays), "bfloat16", "mixed")
    results = []
    for module, functional in ((torch, torch.nn.functional), (ember, ember.nn.functional)):
        tensors = [module.tensor(a).to(getattr(module, d)) for a, d in zip(arrays, dtypes)]
        with module.autocast("cpu", dtype=module.bfloat16):
            results.append(fn(module, functional, *tensors).float().numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-2, atol=1e-2)
