"""Random programs run step by step in ember and in PyTorch, compared after every step:
the differential fuzzer behind tests/core/fuzz/test_differential.py.

PyTorch counterpart: none (torch is the oracle here); the idea is that of
test/test_ops.py's reference checks, driven by Hypothesis instead of sample inputs.

A program starts from a few leaf tensors (random shapes, dtypes and values, float64
leaves requiring grad) and applies random steps to a pool of tensor pairs (one ember
tensor, one torch tensor). A step is drawn from the catalogue below: views, in-place
writes, indexing (basic, advanced, setitem), promotion (every dtype pair, Python
scalars, 0-d tensors), reductions, unary ops and memory-format ops. After each step
``compare`` checks raise/no-raise, shape, dtype, values, strides and view-ness of the
result, and the values of every tensor in the pool (in-place writes reach views).
At the end the float64 tensors that require grad are summed with fixed weights and
both sides run backward; the leaves' gradients are compared.
"""

import math

import numpy as np
import torch
from hypothesis import strategies as st

import ember

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
if hasattr(ember, "bfloat16"):
    DTYPES.append("bfloat16")
FLOATS = [d for d in DTYPES if d.startswith(("float", "bfloat"))]

# Values within a dtype's reach, and tolerances per result dtype (torch.testing's).
TOLERANCE = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1.3e-6, 1e-5),
             "float64": (1e-7, 1e-7)}


class Mismatch(AssertionError):
    """ember and torch disagree on a step (the message says which and how)."""


class Pair:
    """One tensor of the program, as an ember tensor and a torch tensor."""

    def __init__(self, ember_tensor, torch_tensor, name):
        self.ember = ember_tensor
        self.torch = torch_tensor
        self.name = name

    @property
    def shape(self):
        return tuple(self.torch.shape)

    @property
    def dtype(self):
        return str(self.torch.dtype).replace("torch.", "")


# --- drawing the pieces of a program ------------------------------------------------


def shapes(max_dims=3, max_size=4):
    return st.lists(st.integers(0, max_size).filter(lambda n: n != 0) | st.just(0), max_size=max_dims).map(
        tuple).filter(lambda s: s.count(0) == 0 or len(s) > 0)


def leaf(data, index):
    """A leaf pair: random shape, dtype and values; float64 leaves require grad."""
    shape = data.draw(st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple) |
                      st.sampled_from([(0,), (2, 0), (3, 1, 2)]), label=f"shape{index}")
    dtype = data.draw(st.sampled_from(DTYPES), label=f"dtype{index}")
    seed = data.draw(st.integers(0, 2**16), label=f"seed{index}")
    values = _values(shape, dtype, seed)
    requires_grad = dtype == "float64" and data.draw(st.booleans(), label=f"grad{index}")
    t = torch.tensor(values).to(getattr(torch, dtype))
    e = ember.tensor(values).to(getattr(ember, dtype))
    if requires_grad:
        # A leaf requiring grad cannot be written in place: the program works on a clone.
        t.requires_grad_()
        e.requires_grad_()
    return Pair(e, t, f"x{index}")


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "uint8":
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    if dtype.startswith(("int")):
        return rng.integers(-6, 7, size=shape).astype(np.int64)
    values = rng.uniform(-3, 3, size=shape)
    if rng.random() < 0.1 and values.size:
        values.flat[0] = 0.0  # ties and zeros: argmax/sign/div paths
    return values


def scalar(data):
    """A scalar operand: bools, small and negative ints, floats; a Python number or a
    NumPy scalar of a type that holds it, which both libraries read as the Python number
    (NOTE [ NumPy scalars are Python numbers ] in ember/dtypes.py)."""
    value = data.draw(st.sampled_from([True, False, 0, 1, 2, -1, -3, 7, 300, 0.5, -2.5, 0.1, 1e-3, 6e4]),
                      label="scalar")
    kind = data.draw(st.sampled_from(["python", "python", *_numpy_types(value)]), label="scalar_type")
    return value if kind == "python" else getattr(np, kind)(value)


def _numpy_types(value):
    """The NumPy scalar types that hold ``value`` exactly (floats: within range)."""
    if isinstance(value, bool):
        return ["bool_"]
    if isinstance(value, int):
        return [t for t in ("int8", "int16", "int32", "int64", "uint8")
                if np.iinfo(t).min <= value <= np.iinfo(t).max]
    return [t for t in ("float16", "float32", "float64") if abs(value) <= np.finfo(t).max]


def dim_of(data, ndim, label="dim"):
    if ndim == 0:
        return data.draw(st.sampled_from([0, -1]), label=label)
    return data.draw(st.integers(-ndim, ndim - 1), label=label)


# --- running a step on both sides and comparing ---------------------------------------


def run_both(fn, *pairs):
    """``fn(lib, *tensors)`` for lib = ember and torch: ((ember result, error), (torch result, error))."""
    results = []
    for lib, side in ((ember, "ember"), (torch, "torch")):
        try:
            results.append((fn(lib, *[getattr(p, side) for p in pairs]), None))
        except Exception as error:  # noqa: BLE001 - any exception is an outcome to compare
            results.append((None, error))
    return results


def compare_outcome(step, ember_out, torch_out):
    (e, e_error), (t, t_error) = ember_out, torch_out
    if (e_error is None) != (t_error is None):
        raise Mismatch(f"{step}: ember {'raised ' + repr(e_error) if e_error else 'succeeded'}, "
                       f"torch {'raised ' + repr(t_error) if t_error else 'succeeded'}") from (e_error or t_error)
    if e_error is not None:
        return False
    compare_values(step, e, t)
    return True


def compare_values(step, e, t):
    """Shape, dtype, values, strides and view-ness of two results (tensors or tuples)."""
    if isinstance(t, (tuple, list)):
        if len(e) != len(t):
            raise Mismatch(f"{step}: {len(e)} results, torch {len(t)}")
        for i, (a, b) in enumerate(zip(e, t)):
            compare_values(f"{step}[{i}]", a, b)
        return
    if not isinstance(t, torch.Tensor):
        if isinstance(e, ember.Tensor) or (t != e and not (_isnan(t) and _isnan(e))):
            raise Mismatch(f"{step}: ember gives {e!r}, torch {t!r}")
        return
    if not isinstance(e, ember.Tensor):
        raise Mismatch(f"{step}: ember gives {type(e).__name__}, torch a tensor")
    if tuple(e.shape) != tuple(t.shape):
        raise Mismatch(f"{step}: shape {tuple(e.shape)}, torch {tuple(t.shape)}")
    dtype = str(t.dtype).replace("torch.", "")
    if e.dtype.name != dtype:
        raise Mismatch(f"{step}: dtype {e.dtype.name}, torch {dtype}")
    compare_arrays(step, e, t, dtype)
    if t.numel() > 1 and tuple(e.stride()) != tuple(t.stride()):
        raise Mismatch(f"{step}: strides {tuple(e.stride())}, torch {tuple(t.stride())} (shape {tuple(t.shape)})")
    e_view = e._is_view() if hasattr(e, "_is_view") else e._base is not None
    if e_view != t._is_view():
        raise Mismatch(f"{step}: _is_view() {e_view}, torch {t._is_view()}")
    if e.requires_grad != t.requires_grad:
        raise Mismatch(f"{step}: requires_grad {e.requires_grad}, torch {t.requires_grad}")


def compare_arrays(step, e, t, dtype):
    got = e.detach().to(ember.float64).numpy() if dtype == "bfloat16" else e.detach().numpy()
    expected = t.detach().to(torch.float64).numpy() if dtype == "bfloat16" else t.detach().numpy()
    if dtype in TOLERANCE:
        rtol, atol = TOLERANCE[dtype]
        ok = np.allclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = np.array_equal(got, expected)
    if not ok:
        raise Mismatch(f"{step}: values differ ({dtype})\nember {got!r}\ntorch {expected!r}")


def _isnan(x):
    return isinstance(x, float) and math.isnan(x)


def compare_pool(step, pool):
    """After an in-place step every tensor must still agree (views see base writes)."""
    for p in pool:
        compare_arrays(f"{step}, then {p.name}", p.ember, p.torch, p.dtype)


def backward_and_compare(pool, leaves):
    """Backward from a weighted sum of the float64 tensors in the graph; compare grads."""
    in_graph = [p for p in pool if p.torch.requires_grad and p.dtype == "float64"]
    if not in_graph:
        return

    def loss(lib, *tensors):
        total = 0
        for i, x in enumerate(tensors):
            weights = lib.arange(x.numel(), dtype=lib.float64).reshape(x.shape) * 0.25 + (i + 1)
            total = total + (x * weights).sum()
        total.backward()
        return total

    outcome = run_both(loss, *in_graph)
    compare_outcome("backward", *outcome)
    if outcome[1][1] is not None:
        return
    for p in leaves:
        if p.torch.requires_grad:
            e_grad, t_grad = p.ember.grad, p.torch.grad
            if (e_grad is None) != (t_grad is None):
                raise Mismatch(f"grad of {p.name}: ember {e_grad}, torch {t_grad}")
            if t_grad is not None:
                compare_arrays(f"grad of {p.name}", e_grad, t_grad, "float64")
