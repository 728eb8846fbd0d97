"""Run the same function on ember and on PyTorch and compare values, shapes, dtypes and
gradients: the one-line parity test.

PyTorch counterpart: torch/testing/_comparison.py (``assert_close`` tolerances) and
tinygrad's ``helper_test_op`` (same inputs to both, compare forward and backward).

    from ember.testing import assert_parity
    assert_parity(lambda lib, x, y: lib.mul(x, y), make_tensor((3, 1)), make_tensor((4,)))

``fn(lib, *tensors)`` is called once with ``lib = ember`` and once with ``lib = torch``;
the inputs are NumPy arrays or Python scalars, turned into tensors of each library.
PyTorch is imported only when this is called.
"""

import numpy as np

from ember.dtypes import BFLOAT16_NP, is_differentiable_array

# torch.testing.assert_close defaults, by dtype (a complex dtype's are its parts').
TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
              "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def make_tensor(shape, dtype="float32", low=-3.0, high=3.0, seed=0, exclude_zero=False):
    """A NumPy array of random values for a parity test (reproducible by ``seed``);
    ``dtype="bfloat16"`` gives an ml_dtypes array."""
    rng = np.random.default_rng(seed)
    dtype = BFLOAT16_NP if dtype == "bfloat16" else np.dtype(dtype)
    # np.asarray: for shape () NumPy returns a scalar, which would not become a tensor.
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) > 0.5)
    if dtype.kind in "iu":
        low_i = int(max(low, 0 if dtype.kind == "u" else low))
        return np.asarray(rng.integers(low_i, int(high) + 1, size=shape).astype(dtype))
    values = np.asarray(rng.uniform(low, high, size=shape))
    if dtype.kind == "c":  # an independent imaginary part
        values = np.asarray(values + 1j * np.asarray(rng.uniform(low, high, size=shape)))
    if exclude_zero:
        values[np.abs(values) < 1e-3] = 0.5
    return values.astype(dtype)


def noncontiguous(array):
    """The same values as a non-contiguous array (every other element of a wider one)."""
    if array.ndim == 0 or array.size == 0:
        return array
    wide = np.repeat(array, 2, axis=-1)
    return wide[..., ::2]


def _to_lib(lib, x, requires_grad, noncontig):
    import torch

    if not isinstance(x, np.ndarray):
        return x
    grad = requires_grad and is_differentiable_array(x.dtype)
    if lib is torch:
        bfloat16 = x.dtype == BFLOAT16_NP  # torch takes no ml_dtypes array: its exact float32 values
        x = x.astype(np.float32) if bfloat16 else x
        t = torch.from_numpy(np.array(x))
        if noncontig:
            t = torch.from_numpy(np.repeat(np.array(x), 2, axis=-1))[..., ::2] if x.ndim and x.size else t
        t = t.to(torch.bfloat16) if bfloat16 else t
        return t.requires_grad_(grad)
    import ember

    if noncontig and x.ndim and x.size:
        t = ember.from_numpy(np.repeat(np.array(x), 2, axis=-1))[..., ::2]
        assert not t.is_contiguous()
    else:
        t = ember.tensor(np.array(x))
    return t.requires_grad_(grad)


def _flatten(out):
    if isinstance(out, (tuple, list)):
        result = []
        for o in out:
            result.extend(_flatten(o))
        return result
    return [out]


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def assert_close(actual, expected, rtol=None, atol=None, msg=""):
    """Compare an ember tensor (or number) with a torch tensor (or number)."""
    import torch

    if isinstance(expected, torch.Tensor):
        assert hasattr(actual, "_data"), f"{msg}expected a tensor, got {type(actual).__name__}"
        assert tuple(actual.shape) == tuple(expected.shape), \
            f"{msg}shape mismatch: ember {tuple(actual.shape)} vs torch {tuple(expected.shape)}"
        assert _dtype_name(actual) == _dtype_name(expected), \
            f"{msg}dtype mismatch: ember {_dtype_name(actual)} vs torch {_dtype_name(expected)}"
        # through float64: exact for every floating dtype, and bfloat16 has no .numpy()
        a = actual.detach().double().numpy() if actual.dtype.is_floating_point else actual.detach().numpy()
        expected = expected.detach().resolve_conj()  # torch's lazy conj bit: numpy() refuses it
        e = expected.double().numpy() if expected.is_floating_point() else expected.numpy()
        if is_differentiable_array(a.dtype):
            default_rtol, default_atol = TOLERANCES.get(_dtype_name(expected), (1e-7, 1e-7))
            e = e if e.dtype.kind == "c" else e.astype(np.float64)
            np.testing.assert_allclose(a, e, rtol=rtol or default_rtol,
                                       atol=atol if atol is not None else default_atol, equal_nan=True,
                                       err_msg=msg)
        else:
            np.testing.assert_array_equal(a, e, err_msg=msg)
    else:
        if isinstance(expected, float):
            np.testing.assert_allclose(actual, expected, rtol=rtol or 1e-7, atol=atol or 0, err_msg=msg)
        else:
            assert actual == expected, f"{msg}{actual!r} != {expected!r}"


def assert_parity(fn, *inputs, grad=True, rtol=None, atol=None, grad_rtol=None, grad_atol=None,
                  noncontiguous=False, seed=1):
    """Run ``fn(lib, *tensors)`` for ember and torch; compare outputs and gradients.

    Float inputs require grad. The backward pass seeds every floating output with the
    same random gradient in both libraries and compares the input gradients.
    Returns the (ember, torch) outputs for further checks.
    """
    import torch

    import ember

    ember_inputs = [_to_lib(ember, x, grad, noncontiguous) for x in inputs]
    torch_inputs = [_to_lib(torch, x, grad, noncontiguous) for x in inputs]
    try:
        expected = fn(torch, *torch_inputs)
    except Exception as torch_error:  # both must fail, with the same exception type
        try:
            fn(ember, *ember_inputs)
        except type(torch_error):
            return None, None
        except Exception as ember_error:
            raise AssertionError(f"torch raised {type(torch_error).__name__}: {torch_error}; ember raised "
                                 f"{type(ember_error).__name__}: {ember_error}") from ember_error
        raise AssertionError(f"torch raised {type(torch_error).__name__}: {torch_error}; "
                             "ember did not raise") from None
    actual = fn(ember, *ember_inputs)
    flat_a, flat_e = _flatten(actual), _flatten(expected)
    assert len(flat_a) == len(flat_e), f"ember returned {len(flat_a)} values, torch {len(flat_e)}"
    for i, (a, e) in enumerate(zip(flat_a, flat_e)):
        assert_close(a, e, rtol, atol, msg=f"output {i}: ")

    if not grad:
        return actual, expected
    pairs = [(a, e) for a, e in zip(flat_a, flat_e)
             if isinstance(e, torch.Tensor) and e.requires_grad and (e.is_floating_point() or e.is_complex())]
    t_leaves = [t for t in torch_inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    e_leaves = [t for t in ember_inputs if isinstance(t, ember.Tensor) and t.requires_grad]
    if not pairs or not t_leaves:
        return actual, expected
    rng = np.random.default_rng(seed)
    # float64 seeds, cast by each library to its output's dtype (bfloat16 has no NumPy type)
    seeds = [np.asarray(rng.uniform(-1, 1, size=tuple(e.shape)) + (1j * rng.uniform(-1, 1, size=tuple(e.shape))
                                                                    if e.is_complex() else 0)) for _, e in pairs]

    def ember_grads():
        return ember.autograd.grad([a for a, _ in pairs], e_leaves,
                                   [ember.tensor(s).to(a.dtype) for s, (a, _) in zip(seeds, pairs)],
                                   allow_unused=True)

    try:
        t_grads = torch.autograd.grad([e for _, e in pairs], t_leaves,
                                      [torch.from_numpy(s).to(e.dtype) for s, (_, e) in zip(seeds, pairs)],
                                      allow_unused=True)
    except RuntimeError as torch_error:  # e.g. "derivative for aten::floor_divide is not implemented"
        try:
            ember_grads()
        except RuntimeError:
            return actual, expected
        raise AssertionError(f"torch's backward raised RuntimeError: {torch_error}; ember's did not") from None
    e_grads = ember_grads()
    for i, (ga, ge) in enumerate(zip(e_grads, t_grads)):
        if ge is None:
            assert ga is None or not bool(ga.detach().ne(0).any()), f"grad {i}: torch gives None, ember nonzero"
            continue
        assert ga is not None, f"grad {i}: ember gives None, torch {ge}"
        assert_close(ga, ge, grad_rtol or rtol, grad_atol or atol, msg=f"grad of input {i}: ")
    return actual, expected
