"""Run one entry of torch's operator database (``op_db``) through ember and through torch on
the same sample inputs, and say how they differ.

PyTorch counterpart: torch/testing/_internal/common_methods_invocations.py (``op_db``,
``OpInfo.sample_inputs``) and test/test_ops.py (``TestCommon``), whose samples this reuses;
the comparison is ember's own: torch is the oracle.

An entry is checked for float32, float64, int64, bool, complex64 and complex128 (those torch
supports for it; the complex ones unless op_db_complex_failing.txt lists the entry): its
function form, its method form and its in-place form, each on every sample, for the
output's shape, dtype and values (the entry's tolerances, the widest it declares for the
dtype, else ``torch.testing.assert_close``'s defaults). Float64 and complex128 samples of
a differentiable entry also compare the gradients of every input for one fixed cotangent
(complex ones in torch's convention: NOTE [ Complex gradients ] in ember/autograd/graph.py). A random entry
(two torch runs from different seeds differ) is compared by shape and dtype only.
"""

import dataclasses
import numbers
import types

import numpy as np
import torch
from torch.testing._internal.common_device_type import toleranceOverride
from torch.testing._internal.common_methods_invocations import op_db

import ember

DTYPES = (torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64, torch.complex128)
REAL_DTYPES = tuple(d for d in DTYPES if not d.is_complex)
COMPLEX_DTYPES = tuple(d for d in DTYPES if d.is_complex)
# The dtypes whose samples also compare gradients.
GRADIENT_DTYPES = (torch.float64, torch.complex128)

# Entry names that name no ember function by their dotted path (they are read as a method).
_TORCH_PREFIX = "torch."


def entry_id(op):
    """``name`` or ``name.variant``: how the suite names an entry."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def entries():
    """The op_db entries that run on the CPU, by id (an id may repeat: polygamma's
    variants are told apart by their variant name)."""
    return {entry_id(op): op for op in op_db if op.supported_dtypes("cpu")}


class Missing(Exception):
    """ember has no counterpart of the entry."""


def ember_function(op):
    """ember's counterpart of the entry's function form, or None where the entry's op
    is a lambda over tensor methods (then the lambda is run on ember tensors). A lambda
    that calls torch's functions is run with ``torch`` naming ember (:func:`_on_ember`)."""
    if getattr(op.op, "__name__", "") == "<lambda>":
        return _on_ember(op) if _calls_torch(op) or _seeded(op) else None
    if _is_helper(op):
        return _helper_on_ember(op)
    if isinstance(op.op, torch._ops.OpOverload):  # torch.ops.aten.slice.Tensor: ember.ops.aten.slice
        namespace, _, name = op.op._overloadpacket._qualified_op_name.partition("::")
        return _by_schema(_attribute(getattr(ember.ops, namespace), name), op.op._schema)
    if getattr(op.op, "__objclass__", None) is torch._C.TensorBase:
        return _attribute(ember.Tensor, op.op.__name__)  # a method entry (cfloat: torch.cfloat is a dtype)
    name = op.name[len(_TORCH_PREFIX):] if op.name.startswith(_TORCH_PREFIX) else op.name
    if name.startswith("__"):
        return _attribute(ember.Tensor, name)
    target = ember
    for part in name.split("."):
        target = _attribute(target, part)
    return target


def _by_schema(ember_op, schema):
    """``ember_op`` called as torch's schema is: an ember op takes its tensors by position
    and every other argument by keyword (its attributes), so the arguments that are not
    tensors are passed by their schema names."""
    names = [argument.name for argument in schema.arguments]

    def call(*args, **kwargs):
        tensors = []
        for name, value in zip(names, args):
            if isinstance(value, ember.Tensor):
                tensors.append(value)
            else:
                kwargs[name] = value
        return ember_op(*tensors, **kwargs)

    return call


def _attribute(owner, name):
    try:
        return getattr(owner, name)
    except (AttributeError, ImportError) as error:
        raise Missing(f"ember has no {name} on {getattr(owner, '__name__', owner)}") from error


def _calls_torch(op):
    """Whether a lambda entry calls a function of torch's by its dotted path (its name
    resolves in ember's namespace too, e.g. ``nn.functional.embedding_bag``)."""
    names = op.op.__code__.co_names
    # (a lambda through wrapper_set_seed: _seeded)
    return "torch" in names and "wrapper_set_seed" not in names and _resolves(op.name)


# NOTE [ Entries that seed the generator ]
# A random entry's lambda calls ``wrapper_set_seed(torch.X, ...)``, which seeds torch's
# generator with 42 around the call. On ember the same lambda runs with ``torch`` naming
# ember and ``wrapper_set_seed`` seeding ember's generator with 42 (:func:`_seed_ember`):
# ember's generator is torch's Mersenne Twister and its distributions transform the
# stream as ATen's CPU kernels do, so both draw the same numbers and the values are
# compared like any other entry's (gradients too: dropout's mask is torch's). Every
# seeded entry ember has draws torch's numbers on this (AMD) CPU; one that could not
# (torch's MKL Bernoulli on an Intel CPU, NOTE [ What is not matched ] in
# ember/native/random/transformations.py) would fail here and be listed in
# op_db_failing.txt, its statistics being ember's own tests'.


def _seeded(op):
    """Whether a lambda entry calls a torch function through ``wrapper_set_seed`` and
    ember has that function (the dotted path after ``torch`` in the lambda)."""
    if "wrapper_set_seed" not in op.op.__code__.co_names:
        return False
    path = _torch_path(op.op.__code__)
    return bool(path) and _resolves(".".join(path))


def _torch_path(code):
    """The attribute path the code (or a lambda nested in it) reads from ``torch``:
    ``("nn", "functional", "dropout")`` for ``torch.nn.functional.dropout``."""
    for inner in (code, *(c for c in code.co_consts if isinstance(c, types.CodeType))):
        names = inner.co_names
        if "torch" not in names:
            continue
        path, owner = [], torch
        for name in names[names.index("torch") + 1:]:
            if not hasattr(owner, name):
                break
            path.append(name)
            owner = getattr(owner, name)
        return path
    return []


def _seed_ember(function, *args, **kwargs):
    """torch's ``wrapper_set_seed`` for ember: the call runs from seed 42 and the
    default generator's state is restored afterwards."""
    state = ember.random.get_rng_state()
    try:
        ember.manual_seed(42)
        return function(*args, **kwargs)
    finally:
        ember.random.set_rng_state(state)


# NOTE [ Entries whose op is a helper of the OpInfo module ]
# max_pool2d_with_indices_backward's op is ``max_pool2d_backward``, a function of torch's
# OpInfo module: it pools with indices, then calls
# ``torch.ops.aten.max_pool2d_with_indices_backward.default(grad, input, kernel_size, ...,
# indices)``. The helper runs on ember with ``torch`` naming :class:`_TorchOnEmber`:
# ember's attributes, and for ``torch.ops.<ns>.<name>.<overload>`` ember's op
# ``ember.ops.<ns>.<name>`` called as torch's schema is (:func:`_by_schema`). ember has the
# entry when it has the op the helper calls.


def _is_helper(op):
    fn = op.op
    return (isinstance(fn, types.FunctionType) and fn.__name__ != "<lambda>"
            and fn.__module__.startswith("torch.testing") and "ops" in fn.__code__.co_names)


def _helper_op(op):
    """The (namespace, name) of the op ``torch.ops.<ns>.<name>`` the helper calls."""
    names = op.op.__code__.co_names
    start = names.index("ops")
    return names[start + 1], names[start + 2]


class _TorchOnEmber:
    """``torch`` inside a helper run on ember (NOTE [ Entries whose op is a helper of the OpInfo module ])."""

    def __getattr__(self, name):
        return _TorchOps() if name == "ops" else _attribute(ember, name)


class _TorchOps:
    def __getattr__(self, namespace):
        return _TorchNamespace(namespace)


class _TorchNamespace:
    def __init__(self, namespace):
        self.namespace = namespace

    def __getattr__(self, name):
        ember_op = _attribute(getattr(ember.ops, self.namespace), name)
        packet = getattr(getattr(torch.ops, self.namespace), name)
        return types.SimpleNamespace(**{overload: _by_schema(ember_op, getattr(packet, overload)._schema)
                                        for overload in packet.overloads()})


def _helper_on_ember(op):
    namespace, name = _helper_op(op)
    _attribute(getattr(ember.ops, namespace), name)  # Missing when ember lacks it
    fn = op.op
    return types.FunctionType(fn.__code__, {**fn.__globals__, "torch": _TorchOnEmber()}, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def _resolves(name):
    target = ember
    for part in name.split("."):
        target = getattr(target, part, None)
        if target is None:
            return False
    return True


def _on_ember(op):
    """The entry's lambda (``lambda weight, idx, **kw: torch.nn.functional.embedding_bag(idx,
    weight, **kw)``) with ``torch`` bound to ember: the same argument shuffling, ember's function."""
    fn = op.op
    return types.FunctionType(fn.__code__, {**fn.__globals__, "torch": ember, "wrapper_set_seed": _seed_ember},
                              fn.__name__, fn.__defaults__, fn.__closure__)


def is_implemented(op):
    """Whether ember has the entry's function (or, for a lambda entry, the tensor
    methods or the torch function it names), without running it."""
    if getattr(op.op, "__name__", "") == "<lambda>" and (_calls_torch(op) or _seeded(op)):
        return True
    if getattr(op.op, "__name__", "") == "<lambda>":
        names = [name for name in op.op.__code__.co_names if not name.startswith("_")]
        return "torch" not in names and all(hasattr(ember.Tensor, name) or hasattr(ember, name) for name in names)
    try:
        ember_function(op)
    except Missing:
        return False
    return True


# --- converting between torch and ember -----------------------------------------------


def to_ember(value, leaves=None, seen=None):
    """``value`` with every torch tensor, dtype, size and memory format made ember's. A
    tensor keeps its strides where they are a permutation (sliced inputs become dense);
    one that requires grad becomes an ember leaf, appended to ``leaves``. Each torch
    tensor becomes one ember tensor (``seen``): a sample that passes one tensor twice
    gets one leaf, whose gradient sums both uses as torch's does."""
    seen = {} if seen is None else seen
    if isinstance(value, torch.Tensor):
        if id(value) not in seen:
            seen[id(value)] = _tensor_to_ember(value, leaves)
        return seen[id(value)]
    if isinstance(value, torch.dtype):
        return getattr(ember, str(value).removeprefix("torch."))
    if isinstance(value, torch.memory_format):
        return getattr(ember, str(value).removeprefix("torch."))
    if isinstance(value, torch.device):
        return str(value)
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, torch.Generator):
        raise Missing("a sample with a torch.Generator")
    if isinstance(value, torch.nn.Module):
        return _module_to_ember(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # LinearCrossEntropyOptions
        cls = getattr(ember.nn, type(value).__name__, None)
        if cls is None:
            raise Missing(f"a sample passing a torch {type(value).__name__}")
        return cls(**{f.name: to_ember(getattr(value, f.name), leaves, seen) for f in dataclasses.fields(value)})
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(to_ember(v, leaves, seen) for v in value)
    if isinstance(value, dict):
        return {k: to_ember(v, leaves, seen) for k, v in value.items()}
    return value


def _module_to_ember(module):
    """A torch module passed as an argument (a loss's ``distance_function``) as ember's
    module of the same class, when it has torch's default settings and no state."""
    cls = getattr(ember.nn, type(module).__name__, None)
    if cls is None or vars(module) != vars(type(module)()):
        raise Missing(f"a sample passing a torch {type(module).__name__} ember cannot rebuild")
    return cls()


# Dtypes NumPy lacks cross between the libraries as their bits (an integer of their size).
_BITS = {torch.bfloat16: torch.int16, **{d: torch.uint8 for d in (torch.float8_e4m3fn, torch.float8_e5m2,
                                                                    torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)}}


def _sparse_to_ember(value, leaves):
    """A torch sparse COO or CSR tensor as ember's, from its parts (NOTE [ Sparse values
    carry the gradient ] in ember/native/sparse/__init__.py: a leaf's values are the leaf)."""
    if value.layout == torch.sparse_csr:
        crow, col = (ember.from_numpy(part.numpy().copy()) for part in (value.crow_indices(), value.col_indices()))
        values = _tensor_to_ember(value.values().detach(), None)
        out = ember.sparse_csr_tensor(crow, col, values, tuple(value.shape), requires_grad=value.requires_grad)
    else:
        indices = ember.from_numpy(value._indices().numpy().copy())
        values = _tensor_to_ember(value._values().detach(), None)
        out = ember.sparse_coo_tensor(indices, values, tuple(value.shape), is_coalesced=value.is_coalesced(),
                                      requires_grad=value.requires_grad)
    if value.requires_grad and leaves is not None:
        leaves.append(out)
    return out


def _sparse_to_torch(value):
    if value.layout is ember.sparse_csr:
        return torch.sparse_csr_tensor(to_torch(value.crow_indices()), to_torch(value.col_indices()),
                                       to_torch(value.values()), tuple(value.shape))
    return torch.sparse_coo_tensor(to_torch(value._indices()), to_torch(value._values()), tuple(value.shape),
                                   is_coalesced=value.is_coalesced())


def _tensor_to_ember(value, leaves):
    if value.layout != torch.strided:
        return _sparse_to_ember(value, leaves)
    if value.dtype in _BITS:  # no NumPy bfloat16 or float8 in torch: the bits
        bits = value.detach().contiguous().view(_BITS[value.dtype]).numpy().copy()
        tensor = ember.from_numpy(bits).view(to_ember(value.dtype))
    else:
        # torch's lazy conjugate and negative bits (a sample may be a conj() view) are
        # materialised: ember has no such bits (NOTE [ The conjugate bit ] in native/complex.py)
        tensor = ember.from_numpy(value.detach().resolve_conj().resolve_neg().numpy().copy(order="K"))
    if value.requires_grad:
        tensor.requires_grad_(True)
        if leaves is not None:
            leaves.append(tensor)
    return tensor


def torch_leaves(value, leaves):
    """The torch tensors in ``value`` that require grad, each once, in the order
    ``to_ember`` meets them."""
    if isinstance(value, torch.Tensor):
        if value.requires_grad and not any(value is leaf for leaf in leaves):
            leaves.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            torch_leaves(v, leaves)
    elif isinstance(value, dict):
        for v in value.values():
            torch_leaves(v, leaves)
    return leaves


def to_torch(value):
    """An ember result as torch values, for comparison."""
    if isinstance(value, ember.Tensor) and value.layout is not ember.strided:
        return _sparse_to_torch(value)
    if isinstance(value, ember.Tensor):
        dtype = getattr(torch, value.dtype.name, None)
        if dtype in _BITS:  # the bits, as in _tensor_to_ember
            bits = np.array(value.detach().contiguous().view(to_ember(_BITS[dtype])).numpy())
            return torch.from_numpy(bits).view(dtype)
        array = np.asarray(value.detach().numpy())
        return torch.from_numpy(np.array(array))
    if isinstance(value, (list, tuple)):
        return tuple(to_torch(v) for v in value)
    return value


def flat_tensors(value):
    """The tensors of a (nested) result, in order."""
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flat_tensors(v)]
    return []


# --- comparing -------------------------------------------------------------------------


def tolerances(op, dtype):
    """The widest (atol, rtol) the entry declares for ``dtype`` in any test, or None."""
    atol = rtol = None
    for info in op.decorators:
        for decorator in getattr(info, "decorators", ()):
            if isinstance(decorator, toleranceOverride) and dtype in decorator.d:
                tol = decorator.d[dtype]
                atol, rtol = max(atol or 0, tol.atol), max(rtol or 0, tol.rtol)
    return None if atol is None else (atol, rtol)


def compare(actual, expected, op, dtype, what, values=True):
    """Raise AssertionError naming ``what`` where an ember result differs from torch's."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            raise AssertionError(f"{what}: ember gives {type(actual).__name__}, torch a tensor")
        if tuple(actual.shape) != tuple(expected.shape):
            raise AssertionError(f"{what}: shape {tuple(actual.shape)}, torch {tuple(expected.shape)}")
        if actual.dtype != expected.dtype:
            raise AssertionError(f"{what}: dtype {actual.dtype}, torch {expected.dtype}")
        if values:
            tol = tolerances(op, dtype)
            kwargs = {"atol": tol[0], "rtol": tol[1]} if tol else {}
            torch.testing.assert_close(actual, expected.detach(), equal_nan=True, msg=lambda m: f"{what}: {m}",
                                       **kwargs)
    elif isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            raise AssertionError(f"{what}: ember gives {type(actual).__name__}, torch {len(expected)} results")
        for i, (a, e) in enumerate(zip(actual, expected)):
            compare(a, e, op, dtype, f"{what}[{i}]", values)
    elif isinstance(expected, numbers.Number) and values:
        if isinstance(actual, torch.Tensor):
            actual = actual.item()
        if not (actual == expected or (actual != actual and expected != expected)
                or abs(actual - expected) <= 1e-5 + 1.3e-6 * abs(expected)):
            raise AssertionError(f"{what}: {actual!r}, torch {expected!r}")


def seed_cpu(seed):
    """Seed torch's CPU generator alone: ``torch.manual_seed`` also queues a seeding of
    every lazily initialized accelerator module, each with a formatted stack trace, so
    thousands of calls grow a queue and cost far more than the ops they seed."""
    torch.random.default_generator.manual_seed(seed)


def comparable(actual, expected, sample):
    """Both results through the sample's ``output_process_fn_grad``: for a decomposition
    whose factors are unique only up to sign or phase (svd, eigh), it keeps what is
    unique; elsewhere it is the identity."""
    process = sample.output_process_fn_grad
    try:
        return process(actual), process(expected)
    except Exception:
        return actual, expected


def is_random(op, sample):
    """Whether two torch runs of the sample from different seeds differ."""
    return differs_by_seed(lambda: op.op(sample.input, *sample.args, **sample.kwargs))


def differs_by_seed(run):
    """Whether ``run()``'s tensors differ between seeds 0 and 1 (results holding a NaN
    are not compared: NaN never equals itself)."""
    results = []
    for seed in (0, 1):
        seed_cpu(seed)
        results.append([t.to_dense() if t.layout != torch.strided else t for t in flat_tensors(run())])
    return any(not torch.equal(a, b) for a, b in zip(*results) if a.shape == b.shape
               and not (a.is_floating_point() and (a.isnan().any() or b.isnan().any())))


# --- running ---------------------------------------------------------------------------


def run_entry(op, dtypes=DTYPES):
    """Check every sample of the entry in each of ``dtypes``; return the number of
    comparisons made. Raises AssertionError (a difference) or the error ember raised
    where torch did not."""
    function = ember_function(op)
    checked = 0
    supported = op.supported_dtypes("cpu")
    if dtypes is DTYPES and not supported.intersection(DTYPES):  # float8 only (_scaled_mm): its own dtypes
        dtypes = sorted(supported, key=str)
    for dtype in dtypes:
        if dtype not in supported:
            continue
        grad = dtype in GRADIENT_DTYPES and op.supports_autograd
        for i, sample in enumerate(op.sample_inputs("cpu", dtype, requires_grad=grad)):
            checked += run_sample(op, function, sample, dtype, grad, f"{dtype} sample {i} ({sample.name or 'unnamed'})")
    return checked


def run_sample(op, function, sample, dtype, grad, label):
    leaves = []
    try:  # before torch runs: an in-place entry (Tensor.cauchy_) changes its input
        inputs = to_ember([sample.input, list(sample.args), dict(sample.kwargs)], leaves)
    except Missing:
        return 0
    try:
        seed_cpu(0)
        expected = op.op(sample.input, *sample.args, **sample.kwargs)
    except Exception:
        return 0  # torch refuses the sample: nothing to compare
    random = op.has_nondeterministic_output or is_random(op, sample)
    call = function if function is not None else op.op
    try:
        actual = call(inputs[0], *inputs[1], **inputs[2])
    except Exception as error:
        raise AssertionError(f"{label}: ember raises {type(error).__name__}: {error}") from error
    compare(*comparable(to_torch(actual), expected, sample), op, dtype, f"{label}, function", values=not random)
    checked = 1 + run_method(op, sample, dtype, expected, random, label)
    if grad and not random:
        checked += run_gradient(op, sample, expected, inputs, actual, leaves, dtype, label)
    return checked


def run_method(op, sample, dtype, expected, random, label):
    """The method form, where the entry has one and ember's tensor has it."""
    method = op.method_variant
    name = getattr(method, "__name__", None)
    if method is None or name is None or name == "<lambda>" or not isinstance(sample.input, torch.Tensor):
        return 0
    if not hasattr(ember.Tensor, name):
        raise AssertionError(f"{label}: ember.Tensor has no method {name}")
    inputs = to_ember([sample.input.detach(), list(sample.args), dict(sample.kwargs)])
    try:
        actual = getattr(inputs[0], name)(*inputs[1], **inputs[2])
    except Exception as error:
        raise AssertionError(f"{label}: Tensor.{name} raises {type(error).__name__}: {error}") from error
    compare(*comparable(to_torch(actual), expected, sample), op, dtype, f"{label}, Tensor.{name}", values=not random)
    return 1 + run_inplace(op, sample, dtype, random, label)


def run_inplace(op, sample, dtype, random, label):
    """The in-place form, on a sample torch accepts it for: the result and the input."""
    inplace = op.inplace_variant
    name = getattr(inplace, "__name__", None)
    if inplace is None or name is None or name == "<lambda>":
        return 0
    base = sample.input.detach().clone()
    try:
        seed_cpu(0)
        expected = inplace(base, *sample.args, **sample.kwargs)
    except Exception:
        return 0
    if not hasattr(ember.Tensor, name):
        raise AssertionError(f"{label}: ember.Tensor has no in-place method {name}")
    inputs = to_ember([sample.input.detach(), list(sample.args), dict(sample.kwargs)])
    try:
        actual = getattr(inputs[0], name)(*inputs[1], **inputs[2])
    except Exception as error:
        raise AssertionError(f"{label}: Tensor.{name} raises {type(error).__name__}: {error}") from error
    compare(to_torch(actual), expected, op, dtype, f"{label}, Tensor.{name}", values=not random)
    compare(to_torch(inputs[0]), base, op, dtype, f"{label}, Tensor.{name}'s input", values=not random)
    return 1


def processed_for_gradient(actual, expected, sample):
    """Both results through the sample's ``output_process_fn_grad`` before they are
    differentiated, as torch's own gradient tests do: a decomposition's factors (eig,
    eigh, svd) are unique only up to a phase per vector, and a loss of the raw factors
    depends on it (torch's eig backward refuses such a loss); the processed outputs
    (``abs`` of the vectors) do not. A process ember's results cannot go through (one
    calling torch's functions) leaves both raw."""
    process = sample.output_process_fn_grad
    try:
        return process(actual), process(expected)
    except Exception:
        return actual, expected


def differentiable(tensor):
    """Whether autograd carries a gradient through ``tensor``'s dtype."""
    return tensor.is_floating_point() or tensor.is_complex()


def run_gradient(op, sample, expected, inputs, actual, leaves, dtype, label):
    """The gradients of every input that requires grad, for one fixed cotangent of each
    floating output."""
    torch_inputs = torch_leaves([sample.input, list(sample.args), dict(sample.kwargs)], [])
    actual, expected = processed_for_gradient(actual, expected, sample)
    outputs = [t for t in flat_tensors(expected) if t.requires_grad and differentiable(t)]
    if not torch_inputs or not outputs or len(torch_inputs) != len(leaves):
        return 0
    generator = torch.Generator().manual_seed(0)
    cotangents = [torch.randn(t.shape, dtype=t.dtype, generator=generator) for t in outputs]
    expected_grads = torch.autograd.grad(outputs, torch_inputs, cotangents, allow_unused=True)
    ember_outputs = [t for t, e in zip(flat_tensors(actual), flat_tensors(expected))
                     if e.requires_grad and differentiable(e)]
    if len(ember_outputs) != len(outputs) or any(not t.requires_grad for t in ember_outputs):
        raise AssertionError(f"{label}: ember's output does not require grad where torch's does")
    try:
        grads = ember.autograd.grad(ember_outputs, leaves, [to_ember(c) for c in cotangents], allow_unused=True)
    except Exception as error:
        raise AssertionError(f"{label}: ember's backward raises {type(error).__name__}: {error}") from error
    for i, (g, e) in enumerate(zip(grads, expected_grads)):
        if e is None:
            continue
        if g is None:
            g = ember.zeros(tuple(e.shape), dtype=ember.float64)
        compare(to_torch(g), e, op, dtype, f"{label}, gradient of input {i}")
    return 1
