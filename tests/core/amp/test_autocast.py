"""ember.autocast against torch's CPU autocast, op by op: the output dtype and values of
each op on the lower-precision, fp32 and promote lists (and of ops on none), float64
and integer inputs left alone, gradients reaching float32 weights as float32, nesting,
the decorator, the weight-cast cache, errors."""

import re
import zlib

import numpy as np
import pytest
import torch

import ember
from ember.amp.state import autocast_state
from ember.testing import assert_close


def _arrays(*shapes, dtype=np.float32, key=""):
    """Random arrays drawn for ``key`` alone (a case's name): a case sees the same values
    whichever tests ran before it."""
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


# (name, function of (lib, *tensors), input shapes)
CASES = [
    ("linear", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [(3, 4), (5, 4), (5,)]),
    ("matmul", lambda lib, a, b: a @ b, [(2, 3, 4), (4, 5)]),
    ("mm", lambda lib, a, b: lib.mm(a, b), [(3, 4), (4, 5)]),
    ("bmm", lambda lib, a, b: lib.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    ("addmm", lambda lib, c, a, b: lib.addmm(c, a, b), [(3, 5), (3, 4), (4, 5)]),
    ("baddbmm", lambda lib, c, a, b: lib.baddbmm(c, a, b), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    ("conv1d", lambda lib, x, w: lib.nn.functional.conv1d(x, w), [(2, 3, 8), (4, 3, 3)]),
    ("conv2d", lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1), [(2, 3, 5, 5), (4, 3, 3, 3), (4,)]),
    ("conv_transpose2d", lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w), [(1, 3, 4, 4), (3, 2, 3, 3)]),
    ("cat (promote)", lambda lib, a, b: lib.cat([a.half(), b]), [(2, 3), (2, 3)]),
    ("stack (promote)", lambda lib, a, b: lib.stack([a.half(), b]), [(2, 3), (2, 3)]),
    ("cat of float32 then half (promote)", lambda lib, a, b: lib.cat([a, b.half()]), [(2, 3), (2, 3)]),
    ("cat of bfloat16 and float32 (promote)", lambda lib, a, b: lib.cat([a.bfloat16(), b]), [(2, 3), (2, 3)]),
    ("cat of bfloat16 pair (promote)", lambda lib, a, b: lib.cat([a.bfloat16(), b.bfloat16()]), [(2, 3), (2, 3)]),
    ("matmul of bfloat16 inputs", lambda lib, a, b: a.bfloat16() @ b.bfloat16(), [(3, 4), (4, 5)]),
    ("mse_loss of bfloat16 (fp32)", lambda lib, a, b: lib.nn.functional.mse_loss(a.bfloat16(), b.bfloat16()),
     [(4, 3), (4, 3)]),
    ("mse_loss (fp32)", lambda lib, a, b: lib.nn.functional.mse_loss(a.half(), b.half()), [(4, 3), (4, 3)]),
    ("cross_entropy (fp32)", lambda lib, a: lib.nn.functional.cross_entropy(a.half(), lib.tensor([0, 2, 1, 0])),
     [(4, 3)]),
    ("nll_loss (fp32)", lambda lib, a: lib.nn.functional.nll_loss(a.half(), lib.tensor([0, 2, 1, 0])), [(4, 3)]),
    ("bce_with_logits (fp32)", lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(
        a.half(), b.sigmoid().half()), [(4, 3), (4, 3)]),
    ("prod (fp32)", lambda lib, a: lib.prod(a.half()), [(2, 3)]),
    ("relu (no policy)", lambda lib, a: lib.relu(a), [(2, 3)]),
    ("softmax (no policy)", lambda lib, a: lib.softmax(a.half(), -1), [(2, 3)]),
    ("matmul of float64 (left alone)", lambda lib, a, b: a.double() @ b.double(), [(3, 4), (4, 2)]),
    ("linear of a half input and float32 weights", lambda lib, x, w: lib.nn.functional.linear(x.half(), w),
     [(3, 4), (5, 4)]),
    ("conv2d of a half input", lambda lib, x, w: lib.nn.functional.conv2d(x.half(), w), [(1, 2, 4, 4), (3, 2, 3, 3)]),
    ("mm of half and float32", lambda lib, a, b: lib.mm(a.half(), b), [(3, 4), (4, 5)]),
    ("prelu", lambda lib, x, w: lib.nn.functional.prelu(x, w), [(2, 3, 4), (3,)]),
    ("conv_transpose1d", lambda lib, x, w: lib.nn.functional.conv_transpose1d(x, w), [(1, 3, 5), (3, 2, 3)]),
    ("scaled_dot_product_attention", lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v),
     [(1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)]),
    ("l1_loss (fp32)", lambda lib, a, b: lib.nn.functional.l1_loss(a.half(), b.half()), [(4, 3), (4, 3)]),
    ("smooth_l1_loss (fp32)", lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a.bfloat16(), b), [(4, 3), (4, 3)]),
    ("kl_div (fp32)", lambda lib, a, b: lib.nn.functional.kl_div(a.log_softmax(-1).bfloat16(), b.softmax(-1),
                                                                 reduction="batchmean"), [(4, 3), (4, 3)]),
    ("linear then loss", lambda lib, x, w, t: lib.nn.functional.mse_loss(lib.nn.functional.linear(x, w), t),
     [(3, 4), (2, 4), (3, 2)]),
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,fn,shapes", CASES, ids=[c[0] for c in CASES])
def test_op_matches_torch_cpu_autocast(name, fn, shapes, dtype):
    arrays = _arrays(*shapes, key=name)
    results = {}
    for lib in (torch, ember):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            try:
                out = fn(lib, *inputs)
            except RuntimeError as error:  # torch refuses float16 first in a bfloat16 cat: ember must too
                if lib is torch:
                    region = ember.autocast("cpu", dtype=getattr(ember, dtype))
                    with pytest.raises(RuntimeError, match=re.escape(str(error))), region:
                        fn(ember, *[ember.tensor(a, requires_grad=True) for a in arrays])
                    return
                raise
        out.float().sum().backward()
        results[lib] = (out, [x.grad for x in inputs])
    (e_out, e_grads), (t_out, t_grads) = results[ember], results[torch]
    assert str(e_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1], name
    tol = {torch.float16: 2e-2, torch.bfloat16: 6e-2}.get(t_out.dtype, 1e-3)
    assert_close(e_out.float(), t_out.float(), rtol=tol, atol=tol)
    for e_grad, t_grad in zip(e_grads, t_grads):
        assert e_grad.dtype == ember.float32 and t_grad.dtype == torch.float32  # the leaves' dtype
        assert_close(e_grad, t_grad, rtol=tol, atol=tol)


def test_integer_inputs_and_other_devices_are_left_alone():
    with ember.autocast("cpu", dtype=ember.float16):
        assert (ember.ones(2, 3, dtype=ember.int64) @ ember.ones(3, 2, dtype=ember.int64)).dtype == ember.int64
    with ember.autocast("cuda", dtype=ember.float16):  # a cuda region does not touch cpu tensors
        assert (ember.ones(2, 3) @ ember.ones(3, 2)).dtype == ember.float32


def test_cpu_autocast_defaults_to_bfloat16_like_torch():
    for lib in (torch, ember):
        assert lib.get_autocast_dtype("cpu") == lib.bfloat16 and lib.get_autocast_dtype("cuda") == lib.float16
        with lib.autocast("cpu"):
            assert lib.get_autocast_dtype("cpu") == lib.bfloat16
            assert (lib.ones(2, 3) @ lib.ones(3, 2)).dtype == lib.bfloat16


def test_nesting_decorator_and_queries_like_torch():
    for lib in (torch, ember):
        assert not lib.is_autocast_enabled("cpu")
        with lib.autocast("cpu", dtype=lib.float16):
            assert lib.is_autocast_enabled("cpu") and lib.get_autocast_dtype("cpu") == lib.float16
            with lib.autocast("cpu", enabled=False):
                assert not lib.is_autocast_enabled("cpu")
                assert (lib.ones(2, 3) @ lib.ones(3, 2)).dtype == lib.float32
            assert (lib.ones(2, 3) @ lib.ones(3, 2)).dtype == lib.float16

        @lib.autocast("cpu", dtype=lib.float16)
        def product(a, b):
            return a @ b

        assert product(lib.ones(2, 3), lib.ones(3, 2)).dtype == lib.float16
        assert not lib.is_autocast_enabled("cpu")
    assert not autocast_state.enabled and not autocast_state.cache


def test_weights_are_cast_once_per_region():
    weight = ember.randn(4, 3, requires_grad=True)
    with ember.autocast("cpu", dtype=ember.float16):
        first = ember.nn.functional.linear(ember.randn(2, 3), weight)
        second = ember.nn.functional.linear(ember.randn(2, 3), weight)
        assert len(autocast_state.cache) == 1
    assert first.dtype == second.dtype == ember.float16 and not autocast_state.cache


def test_lstm_runs_in_half_precision():
    # torch's CPU LSTM has no float16 kernel on this machine (oneDNN refuses it), so the
    # reference is ember's own float32 run: the fused LSTM kernels are on the list.
    lstm = ember.nn.LSTM(3, 4)
    x = ember.tensor(_arrays((5, 2, 3))[0])
    with ember.autocast("cpu", dtype=ember.float16):
        half, (h, c) = lstm(x)
    full, _ = lstm(x)
    assert half.dtype == h.dtype == c.dtype == ember.float16
    assert ember.allclose(half.float(), full, rtol=1e-2, atol=1e-2)


def test_errors():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        ember.autocast("tpu")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ember.autocast(ember.device("cpu"))
    with pytest.raises(RuntimeError, match="target dtype ember.float64 is not supported"):
        ember.autocast("cpu", dtype=ember.float64)
