"""grid_sample (every mode, padding mode and align_corners, images and volumes) and
affine_grid against torch: values, the gradients of the input, the grid and theta,
float32 and float64, non-contiguous inputs, NaN coordinates, and the errors."""

import warnings

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close

MODES = ["bilinear", "nearest", "bicubic"]
PADDING = ["zeros", "border", "reflection"]


def _sample(input_shape, grid_shape, dtype, mode, padding_mode, align_corners, transposed=False, grid_values=None):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(input_shape).astype(dtype)
    grid = rng.uniform(-1.3, 1.3, grid_shape).astype(dtype) if grid_values is None else grid_values.astype(dtype)
    results = {}
    for lib in (ember, torch):
        leaves = [lib.tensor(x, requires_grad=True), lib.tensor(grid, requires_grad=True)]
        source = leaves[0].transpose(-1, -2) if transposed else leaves[0]
        out = lib.nn.functional.grid_sample(source, leaves[1], mode=mode, padding_mode=padding_mode,
                                            align_corners=align_corners)
        results[lib] = out, leaves
    (e_out, e_leaves), (t_out, t_leaves) = results[ember], results[torch]
    tol = {"atol": 1e-5, "rtol": 1e-4} if dtype == np.float32 else {}
    assert_close(e_out, t_out, **tol)
    cotangent = rng.standard_normal(tuple(t_out.shape)).astype(dtype)
    e_grads = ember.autograd.grad(e_out, e_leaves, ember.tensor(cotangent), allow_unused=True)
    t_grads = torch.autograd.grad(t_out, t_leaves, torch.tensor(cotangent), allow_unused=True)
    for e, t in zip(e_grads, t_grads):
        if e is None:  # nearest: the grid has no gradient (torch's is zeros)
            assert not t.any()
            continue
        # a grid gradient is a difference of neighbouring values scaled by the size: in
        # float32 it cancels to about 1e-5 of the values
        assert_close(e, t, **({"atol": 1e-4, "rtol": 1e-4} if dtype == np.float32 else {}))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("padding_mode", PADDING)
@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_images(mode, padding_mode, align_corners, dtype):
    _sample((2, 3, 5, 7), (2, 4, 6, 2), dtype, mode, padding_mode, align_corners)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("padding_mode", PADDING)
@pytest.mark.parametrize("mode", MODES[:2])
def test_grid_sample_volumes(mode, padding_mode, align_corners, dtype):
    _sample((2, 3, 4, 5, 6), (2, 3, 2, 4, 3), dtype, mode, padding_mode, align_corners)


@pytest.mark.parametrize("mode", MODES)
def test_non_contiguous_input_single_pixel_and_nan(mode):
    _sample((1, 2, 6, 5), (1, 3, 3, 2), np.float64, mode, "reflection", False, transposed=True)
    _sample((1, 2, 1, 1), (1, 3, 3, 2), np.float64, mode, "reflection", True)
    grid = np.random.default_rng(1).uniform(-1, 1, (1, 2, 2, 2))
    grid[0, 0, 0, 0] = np.nan
    e = ember.nn.functional.grid_sample(ember.ones(1, 1, 3, 3, dtype=ember.float64), ember.tensor(grid), mode=mode,
                                        align_corners=False)
    t = torch.nn.functional.grid_sample(torch.ones(1, 1, 3, 3, dtype=torch.float64), torch.tensor(grid), mode=mode,
                                        align_corners=False)
    assert_close(e, t)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 1), (2, 3, 2, 4, 3), (2, 1, 1, 3, 2)])
def test_affine_grid(size, align_corners, dtype):
    theta_shape = (2, 2, 3) if len(size) == 4 else (2, 3, 4)
    theta = np.random.default_rng(2).standard_normal(theta_shape).astype(dtype)
    results = {}
    for lib in (ember, torch):
        leaf = lib.tensor(theta, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = lib.nn.functional.affine_grid(leaf, size, align_corners=align_corners)
        out.pow(2).sum().backward()
        results[lib] = out, leaf.grad
    assert_close(results[ember][0], results[torch][0])
    assert_close(results[ember][1], results[torch][1], atol=1e-4 if dtype == np.float32 else None)


def test_affine_grid_then_grid_sample_is_a_spatial_transformer():
    theta = ember.tensor([[[0.8, -0.3, 0.1], [0.2, 0.9, -0.2]]], requires_grad=True)
    image = ember.arange(30.).reshape(1, 1, 5, 6)
    out = ember.nn.functional.grid_sample(image, ember.nn.functional.affine_grid(theta, (1, 1, 4, 4), False),
                                          align_corners=False)
    out.sum().backward()
    t_theta = torch.tensor(theta.detach().numpy(), requires_grad=True)
    t_out = torch.nn.functional.grid_sample(torch.arange(30.).reshape(1, 1, 5, 6),
                                            torch.nn.functional.affine_grid(t_theta, (1, 1, 4, 4), False),
                                            align_corners=False)
    t_out.sum().backward()
    assert_close(out, t_out, atol=1e-5, rtol=1e-5)
    assert_close(theta.grad, t_theta.grad, atol=1e-4, rtol=1e-4)


def test_grid_sampler_enums_and_default_warning():
    x, grid = np.random.default_rng(3).standard_normal((1, 2, 3, 4)), np.zeros((1, 2, 2, 2))
    assert_close(ember.grid_sampler_2d(ember.tensor(x), ember.tensor(grid), 2, 1, True),
                 torch.grid_sampler_2d(torch.tensor(x), torch.tensor(grid), 2, 1, True))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        ember.nn.functional.grid_sample(ember.tensor(x), ember.tensor(grid))


@pytest.mark.parametrize("exception,call", [
    (ValueError, lambda F, lib: F.grid_sample(lib.ones(1, 1, 3, 3), lib.zeros(1, 2, 2, 2), mode="cubic")),
    (ValueError, lambda F, lib: F.grid_sample(lib.ones(1, 1, 3, 3), lib.zeros(1, 2, 2, 2), padding_mode="wrap")),
    (RuntimeError, lambda F, lib: F.grid_sample(lib.ones(1, 1, 3, 3), lib.zeros(1, 2, 2, 3), align_corners=True)),
    (RuntimeError, lambda F, lib: F.grid_sample(lib.ones(1, 1, 3, 3), lib.zeros(2, 2, 2, 2), align_corners=True)),
    (RuntimeError, lambda F, lib: F.grid_sample(lib.ones(1, 1, 3), lib.zeros(1, 2, 2), align_corners=True)),
    (RuntimeError, lambda F, lib: F.grid_sample(lib.ones(1, 1, 0, 3), lib.zeros(1, 2, 2, 2), align_corners=True)),
    (RuntimeError, lambda F, lib: F.grid_sample(lib.ones(1, 1, 2, 3, 3), lib.zeros(1, 1, 2, 2, 3), mode="bicubic",
                                                align_corners=True)),
    (RuntimeError, lambda F, lib: F.grid_sample(lib.ones(1, 1, 3, 3), lib.zeros(1, 2, 2, 2, dtype=lib.float64),
                                                align_corners=True)),
    (ValueError, lambda F, lib: F.affine_grid(lib.ones(1, 2, 3, dtype=lib.int64), [1, 1, 2, 2], False)),
    (ValueError, lambda F, lib: F.affine_grid(lib.ones(1, 3, 3), [1, 1, 2, 2], False)),
    (ValueError, lambda F, lib: F.affine_grid(lib.ones(1, 2, 3), [1, 1, 2, 2, 2], False)),
    (NotImplementedError, lambda F, lib: F.affine_grid(lib.ones(1, 2, 3), [1, 1, 2], False)),
    (ValueError, lambda F, lib: F.affine_grid(lib.ones(1, 2, 3), [1, 1, 0, 2], False)),
])
def test_errors_like_torch(exception, call):
    with pytest.raises(exception) as expected:
        call(torch.nn.functional, torch)
    with pytest.raises(exception) as actual:
        call(ember.nn.functional, ember)
    assert str(actual.value).replace("ember.", "torch.") == str(expected.value)
