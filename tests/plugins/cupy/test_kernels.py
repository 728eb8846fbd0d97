"""The cuda backend's kernel overrides, checked where they can run on any machine.

The scatter overrides are plain array code: run with ``xp = numpy`` they must give
PyTorch's results, on the dtypes they widen and on those they pass through. The
SGD-momentum step's array definition must match ``torch.optim.SGD``. The CUDA kernels
themselves run in test_cuda.py on a machine with a GPU.
"""

import numpy as np
import pytest
import torch
from ember_cupy import fused, scatter
from ember_cupy.kernels import KERNELS

import ember
from ember.testing import make_tensor

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float32", "float64"]


def _values(shape, dtype, rng):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 120, shape).astype(dtype)  # sums of repeats wrap in int8
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_add_with_repeated_indices(dtype):
    rng = np.random.default_rng(0)
    a, source = _values((4, 3), dtype, rng), _values((6, 3), dtype, rng)
    index = np.array([0, 2, 2, 3, 0, 2])
    out = scatter.index_add(np, a, index, source, dim=0)
    expected = torch.from_numpy(a).index_add(0, torch.from_numpy(index), torch.from_numpy(source))
    assert out.dtype == a.dtype
    np.testing.assert_array_equal(out, expected.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("accumulate", [True, False])
def test_index_put_accumulates_repeats_only_when_asked(dtype, accumulate):
    rng = np.random.default_rng(1)
    a, values = _values((5,), dtype, rng), _values((4,), dtype, rng)
    index = np.array([1, 1, 4, 1])
    expected = torch.from_numpy(a).index_put((torch.from_numpy(index),), torch.from_numpy(values), accumulate=True)
    out = scatter.index_put(np, a, values, key=(index,), accumulate=accumulate)
    if accumulate:
        np.testing.assert_array_equal(out, expected.numpy())
    else:  # plain writes never go through the widening (the core's kernel, unchanged)
        np.testing.assert_array_equal(out, scatter.indexing._index_put_kernel(np, a, values, key=(index,)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_add_and_scatter_reduce_add(dtype):
    rng = np.random.default_rng(2)
    a, src = _values((3, 4), dtype, rng), _values((3, 4), dtype, rng)
    index = np.array([[0, 1, 1, 3], [2, 2, 2, 0], [3, 3, 0, 0]])
    expected = torch.from_numpy(a).scatter_add(1, torch.from_numpy(index), torch.from_numpy(src)).numpy()
    np.testing.assert_array_equal(scatter.scatter_add(np, a, index, src, dim=1), expected)
    np.testing.assert_array_equal(scatter.scatter(np, a, index, src, dim=1, reduce="add"), expected)


def test_a_bad_values_shape_raises_the_cores_error():
    with pytest.raises(RuntimeError, match="shape mismatch"):
        scatter.index_put(np, np.zeros(4, np.int8), np.ones(3, np.int8), key=(np.array([0, 1]),), accumulate=True)


def test_the_overrides_name_real_ops_and_keep_their_names():
    from ember.plugins import registry

    ops = registry.catalogue("ops")
    assert set(KERNELS) <= set(ops), set(KERNELS) - set(ops)
    assert scatter.index_add.__name__ == "_index_add_kernel"


# (PyTorch refuses nesterov with dampening.)
@pytest.mark.parametrize(("nesterov", "dampening", "weight_decay"),
                         [(False, 0.0, 0.0), (False, 0.1, 0.01), (True, 0.0, 0.0), (True, 0.0, 0.01)])
def test_the_sgd_momentum_step_is_torchs(nesterov, dampening, weight_decay):
    hyper = dict(lr=0.1, momentum=0.9, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)
    start = make_tensor((3, 2), "float64")
    theirs = torch.tensor(start, requires_grad=True)
    optimizer = torch.optim.SGD([theirs], **hyper)
    param, buf = start.copy(), np.zeros_like(start)
    for step in range(3):
        grad = make_tensor((3, 2), "float64", seed=step + 10)
        theirs.grad = torch.from_numpy(grad.copy())
        optimizer.step()
        fused.sgd_momentum_reference(np, param, grad, buf, first=step == 0, **hyper)
        np.testing.assert_allclose(param, theirs.detach().numpy(), rtol=1e-12)


def test_relu_backward_runs_the_overridden_op_on_cuda_only():
    from ember.native.pointwise.unary import THRESHOLD_BACKWARD

    assert THRESHOLD_BACKWARD.kernel_for("cpu") is not fused.threshold_backward
    x = ember.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    x.relu().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]
