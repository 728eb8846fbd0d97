"""deform_conv2d's CUDA kernel (CuPy RawKernel): the columns of the generic kernel run
with CuPy, bit for bit, and the op's values and gradients on a cuda device against the
cpu's. Every test needs a GPU and is skipped only where no CUDA device is.

Tests for plugins/vision/src/ember_vision/ops/deform_conv2d_cuda.py (PyTorch counterpart:
torchvision/csrc/ops/cuda/deform_conv2d_kernel.cu, torchvision 0.28).
"""

import numpy as np
import pytest

import ember
from ember_vision.ops import deform_conv2d
from ember_vision.ops.deform_conv2d_kernel import check_arguments, deformable_im2col

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a CUDA device (ember.cuda.is_available())")

ATTRS = dict(stride_h=1, stride_w=2, pad_h=2, pad_w=1, dilation_h=2, dilation_w=1, groups=2, offset_groups=2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
def test_columns_are_the_generic_kernels_bit_for_bit(use_mask, dtype):
    import cupy

    from ember_vision.ops.deform_conv2d_cuda import cuda_im2col

    rng = np.random.default_rng(0)
    x = cupy.asarray(rng.standard_normal((2, 4, 8, 9)).astype(dtype))
    offset = cupy.asarray((rng.standard_normal((2, 36, 8, 5)) * 4).astype(dtype))
    mask = cupy.asarray(rng.standard_normal((2, 18, 8, 5)).astype(dtype))
    geometry = check_arguments(x, cupy.zeros((4, 2, 3, 3)), offset, mask, use_mask=use_mask, **ATTRS)
    expected = deformable_im2col(cupy, x, offset, mask, geometry)
    got = cuda_im2col(cupy, x, offset, mask, geometry)
    assert got.dtype == expected.dtype
    assert cupy.asnumpy(got).tobytes() == cupy.asnumpy(expected).tobytes()


@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
def test_values_and_gradients_match_the_cpu(use_mask):
    rng = np.random.default_rng(1)
    arrays = dict(input=rng.standard_normal((3, 4, 8, 9)), offset=rng.standard_normal((3, 36, 8, 5)) * 3,
                  weight=rng.standard_normal((6, 2, 3, 3)), bias=rng.standard_normal(6),
                  mask=rng.random((3, 18, 8, 5)) if use_mask else None)
    results = {}
    for device in ("cpu", "cuda"):
        t = {k: None if v is None else ember.tensor(v, device=device).requires_grad_() for k, v in arrays.items()}
        out = deform_conv2d(t["input"], t["offset"], t["weight"], t["bias"], stride=(1, 2), padding=(2, 1),
                            dilation=(2, 1), mask=t["mask"])
        out.backward(ember.ones_like(out))
        results[device] = [out.detach().cpu().numpy()] + [v.grad.cpu().numpy() for v in t.values() if v is not None]
    for cpu, cuda in zip(results["cpu"], results["cuda"]):
        np.testing.assert_allclose(cuda, cpu, rtol=1e-10, atol=1e-10)


def test_empty_batch():
    x = ember.zeros(0, 2, 5, 5, device="cuda")
    out = deform_conv2d(x, ember.zeros(0, 18, 5, 5, device="cuda"), ember.ones(3, 2, 3, 3, device="cuda"), padding=1)
    assert tuple(out.shape) == (0, 3, 5, 5) and out.device.type == "cuda"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
def test_backward_kernels_give_the_numpy_references_gradients(use_mask, dtype):
    """The offsets' and mask's gradients bit for bit (the arithmetic of the NumPy
    reference, in its order), the input's to one rounding (atomicAdd's order), the
    weight's and bias's through the same GEMMs as the generic kernel on the GPU."""
    import cupy

    from ember_vision.ops.deform_conv2d_cuda import cuda_deform_conv2d_backward
    from ember_vision.ops.deform_conv2d_kernel import deform_conv2d_backward

    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((2, 4, 8, 9)), rng.standard_normal((4, 2, 3, 3)),
              rng.standard_normal((2, 36, 8, 5)) * 4, rng.standard_normal((2, 18, 8, 5)), rng.standard_normal(4)]
    arrays = [a.astype(dtype) for a in arrays]
    grad = rng.standard_normal((2, 4, 8, 5)).astype(dtype)
    attrs = dict(ATTRS, use_mask=use_mask)
    on_host = deform_conv2d_backward.generic(np, grad, *arrays, **attrs)
    on_device = [cupy.asnumpy(a) for a in cuda_deform_conv2d_backward(cupy, cupy.asarray(grad),
                                                                      *map(cupy.asarray, arrays), **attrs)]
    assert on_device[2].tobytes() == on_host[2].tobytes() and on_device[3].tobytes() == on_host[3].tobytes()
    tol = 1e-5 if dtype == "float32" else 1e-12
    for index in (0, 1, 4):
        np.testing.assert_allclose(on_device[index], on_host[index], rtol=tol, atol=tol)
