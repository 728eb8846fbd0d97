"""The operator registry and the dispatcher: from a call such as ``ember.mul(a, b)``
to a backend kernel, with type promotion and the autograd record.

PyTorch counterpart: aten/src/ATen/native/native_functions.yaml (schemas),
tools/autograd/derivatives.yaml (backward formulas), aten/src/ATen/core/dispatch/
Dispatcher.cpp (kernel per dispatch key) and torch/csrc/autograd/generated/
VariableType (the autograd record around each call) (v2.13).

An ``Op`` is one schema: a qualified name (``aten::mul``), a generic kernel written
against an array namespace (``xp`` is numpy or cupy), optional kernels per device
type, and a backward formula written with ember ops, so higher-order gradients come
for free. Calling the op runs ``dispatch``; see NOTE [ The dispatch path ].
"""

import functools
import inspect

import numpy as np

from ember import dtypes, opmath
from ember.autograd import anomaly_mode, graph, inference
from ember.autograd.forward_grad import AUTO_LINEAR
from ember.autograd.grad_mode import grad_state
from ember.autograd.graph import OpNode, SavedTensor
from ember.autograd.inference import INFERENCE
from ember.autograd.views import mark_views
from ember.memory_format import elementwise_layout

# Promotion rules an op can declare (torch/_prims_common ELEMENTWISE_TYPE_PROMOTION_KIND).
NONE = "none"            # inputs are used as they are (shape ops, indexing)
DEFAULT = "default"      # common dtype of all operands (add, mul, where)
INT_TO_FLOAT = "int_to_float"  # common dtype, integers and bool become the default float (div, exp)
COMPARE = "compare"      # common dtype for the comparison, output bool (eq, lt)

_ALL_OPS = []


class Op:
    """One operator schema.

    Args:
        qualname: ``"namespace::name"``.
        generic: ``kernel(xp, *arrays, **attrs)`` returning an array or a tuple of arrays.
        backward: ``formula(ctx, *grads)`` returning one gradient per input (or None).
        jvp: the forward-derivative rule ``rule(ctx, *tangents)`` returning the output's
            tangent (a tuple for several outputs), or ``AUTO_ELEMENT_WISE`` /
            ``AUTO_LINEAR`` (NOTE [ Forward grads at the dispatcher ] in
            autograd/forward_grad.py).
        promote: one of NONE, DEFAULT, INT_TO_FLOAT, COMPARE.
        save: which tensors backward reads: ``"inputs"``, ``"outputs"``, ``"both"`` or None.
        num_outputs: how many tensors the kernel returns (None: as many as it returns).
        view: the output is a view of the first input (shares storage and version).
        opmath: on float16 (and bfloat16) the op computes in float32 and rounds its
            result once, as PyTorch's kernels do (NOTE [ opmath ] in opmath.py);
            ``opmath.UNROUNDED``: it computes in float32 and returns float32 (statistics
            that the next opmath op reads, so the pair rounds once).
        elementwise: the result is laid out as TensorIterator lays out an elementwise
            op's output (NOTE [ The layout of an elementwise result ] in memory_format.py);
            ``"tensors"`` where Python numbers are parameters of the kernel, not operands.
        inplace_of: set on ``add_``-style ops by ``inplace_variant``.
    """

    __slots__ = ("qualname", "namespace", "name", "generic", "kernels", "backward", "promote",
                 "save", "num_outputs", "view", "opmath", "elementwise", "_backward_name", "node_class", "plugin",
                 "doc", "ufunc", "jvp",
                 "_resolved", "__weakref__")

    def __init__(self, qualname, generic=None, backward=None, promote=NONE, save=None,
                 num_outputs=1, view=False, backward_name=None, plugin="ember", ufunc=None,
                 opmath=False, elementwise=False, jvp=None):
        namespace, _, name = qualname.partition("::")
        if not name:
            raise ValueError(f"operator name must be 'namespace::name', got {qualname!r}")
        self.qualname = qualname
        self.namespace = namespace
        self.name = name
        self.generic = generic
        self.kernels = {}
        self.backward = backward
        # a view op is linear: its jvp is itself on the tangent (forward_grad.py)
        self.jvp = AUTO_LINEAR if jvp is None and view else jvp
        self.promote = promote
        self.save = save
        self.num_outputs = num_outputs
        self.view = view
        self.opmath = opmath
        self.elementwise = elementwise
        self.backward_name = backward_name or _camel(name) + "Backward0"
        self.plugin = plugin
        self.doc = None
        # The name of an array-namespace function equal to the generic kernel (e.g.
        # "multiply"): dispatch then calls it directly, one Python frame less.
        self.ufunc = ufunc
        self._resolved = {}
        _ALL_OPS.append(self)

    @property
    def backward_name(self):
        """The name of the node this op records (``MulBackward0``), as PyTorch names it."""
        return self._backward_name

    @backward_name.setter
    def backward_name(self, name):
        # Each name is a class of its own, so ``type(y.grad_fn).__name__`` reads as in PyTorch.
        self._backward_name = name
        self.node_class = _node_class(name)

    # __call__ is `dispatch`, assigned below it (`run_in_modes` while a mode is on, NOTE
    # [ Modes at the dispatcher ]): calling an op is one Python frame.

    def __repr__(self):
        return f"<ember op {self.qualname}>"

    def register_kernel(self, device_type, fn=None):
        """Decorator: ``fn(xp, *arrays, **attrs)`` serves this op on ``device_type``; a
        later registration for the same device type replaces it, as in PyTorch 2.13."""
        def add(fn):
            self.kernels[device_type] = fn
            self._resolved.clear()
            return fn
        return add(fn) if fn is not None else add

    def register_backward(self, fn):
        """Decorator: set the backward formula ``fn(ctx, *grads) -> grads per input``."""
        self.backward = fn
        return fn

    def register_jvp(self, fn):
        """Decorator: set the forward-derivative rule ``fn(ctx, *tangents) -> tangent(s)``."""
        self.jvp = fn
        return fn

    def source(self):
        """``(file, line)`` of the generic kernel and of the backward formula."""
        return {"kernel": _where(self.generic), "backward": _where(self.backward),
                **{f"kernel[{k}]": _where(v) for k, v in self.kernels.items()}}

    def kernel_for(self, device):
        """The kernel function this op runs on ``device`` (an override, or the generic one)."""
        entry = self._resolved.get(device)  # a device type's name, resolved before: no device built
        if entry is None:
            from ember.device import device as Device

            device = Device(device)
            entry = self._resolved.get(device.type) or self._resolve(device)
        return entry[1].func

    def _resolve(self, device):
        """The entry dispatch uses on ``device``: (call, kernel, xp, array type).
        ``kernel`` is the chosen kernel with the namespace bound,
        ``kernel(*arrays, **attrs)``; ``call`` is the same, or the namespace's ufunc for
        ops declared with ``ufunc=`` and no override on this device (NOTE [ Direct ufunc
        calls ])."""
        backend = device.backend
        kernel = backend.kernels.get(self.qualname) or self.kernels.get(device.type)
        direct = None
        if kernel is None and self.ufunc is not None:
            direct = getattr(backend.xp, self.ufunc, None)
        kernel = kernel or self.generic
        if kernel is None:
            raise NotImplementedError(
                f"Could not run '{self.qualname}' with arguments from the "
                f"'{device.type}' backend: no kernel is registered for it.")
        bound = functools.partial(kernel, backend.xp)
        entry = (direct or bound, bound, backend.xp, backend.array_type)
        self._resolved[device.type] = entry
        return entry


_NODE_CLASSES = {}


def _node_class(name):
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        cls = _NODE_CLASSES[name] = type(name, (OpNode,), {"__slots__": (), "__module__": "ember.autograd.graph"})
    return cls


def _camel(name):
    return "".join(part[:1].upper() + part[1:] for part in name.rstrip("_").split("_"))


def _where(fn):
    if fn is None:
        return None
    fn = inspect.unwrap(fn)  # a decorated kernel (unary.quiet) is found where it is written
    try:
        return inspect.getsourcefile(fn), inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return None


def forget_kernels():
    """Drop every cached kernel choice (a backend plugin arrived or left)."""
    for op in _ALL_OPS:
        op._resolved.clear()


# NOTE [ Direct ufunc calls ]
# An op whose generic kernel is one ufunc call (add, mul, exp, ...) may name that ufunc
# (`Op(..., ufunc="multiply")`). Without attributes, dispatch then calls the ufunc
# itself, saving the kernel's Python frame (about 0.3 us, a tenth of a small op). The
# generic kernel stays the definition: when the ufunc raises (shapes that do not
# broadcast, an integer out of range), dispatch runs the generic kernel, which raises
# PyTorch's error or handles the case, so behaviour is the generic kernel's.

# NOTE [ The dispatch path ]
# Every op call goes through `dispatch`, which does in order what PyTorch spreads over
# the Python arg parser, TensorIterator's type promotion, the dispatcher and the
# generated VariableType code:
#   1. find the device of the tensor inputs; mixing devices is an error;
#   2. promote: pick the computation dtype and cast the arrays (Python scalars stay
#      Python numbers, which NumPy and CuPy treat as "weak", as PyTorch does); float16
#      opmath ops and bfloat16 compute in float32 (NOTE [ opmath ] in opmath.py);
#   3. run the kernel chosen for (op, device type), cached in `op._resolved`;
#   4. wrap the arrays in tensors;
#   5. if grad mode is on (and inference mode off) and an input requires grad,
#      record an OpNode.
# The hot path is plain attribute and dict access: no pluggy, no inspection. The rare
# modes (autocast, jit.trace) live in their own modules and cost it nothing: while one
# is on, `Op.__call__` is `run_in_modes`, which calls dispatch inside them (NOTE [ Modes
# at the dispatcher ] in dispatch_modes.py).


def _tensor_type():
    from ember.tensor import Tensor

    return Tensor


Tensor = None  # bound by ember.tensor on import, to avoid a circular import


def dispatch(op, *inputs, **attrs):
    """``op(*inputs, **attrs)`` in the five steps of NOTE [ The dispatch path ]."""
    # -- 1. the device, dtypes and requires_grad of the tensor inputs --
    device = common = None  # common: the tensors' dtype, while they all agree
    requires_grad, uniform, arrays = False, True, []
    for x in inputs:
        if isinstance(x, Tensor):
            a = x._data
            if device is None:
                device = x._device
                common = a.dtype
            else:
                if x._device is not device:
                    _check_same_device(op, inputs)
                uniform = uniform and a.dtype == common
            requires_grad = requires_grad or x._requires_grad
        else:
            a = x
            if x.__class__ not in _WEAK_SCALARS:
                if isinstance(x, _NUMPY_SCALAR) and op.promote is not NONE:
                    # read as a Python number: NOTE [ NumPy scalars are
                    # Python numbers ] in dtypes.py
                    return dispatch(op, *dtypes.python_numbers(inputs), **attrs)
                uniform = False
        arrays.append(a)
    if device is None:
        raise TypeError(f"{op.qualname}() expected at least one Tensor argument")
    call, kernel, xp, array_type = op._resolved.get(device.type) or op._resolve(device)

    # -- 2. promote (not needed by floating tensors of one dtype with Python scalars) --
    if op.promote is not NONE and not (uniform and common in _FAST_FLOATS):
        call, kernel, arrays, attrs = _promote(op, call, kernel, inputs, arrays, attrs)
    elif (common is _BFLOAT16 or common is _FLOAT16 and op.opmath) and not op.view:
        # bfloat16 matmul, conv, and float16 opmath ops that do not promote (norms, pooling)
        call, kernel, arrays = opmath.unpromoted(op, kernel, arrays, array_type, common)

    # -- 3. run the kernel --
    try:
        out = kernel(*arrays, **attrs) if attrs else call(*arrays)
    except (ValueError, TypeError, OverflowError):
        if attrs or call is kernel:
            raise
        out = kernel(*arrays)  # the generic kernel reports (or handles) the odd case

    # -- 4. wrap the arrays in tensors --
    if op.num_outputs == 1:
        if out.__class__ is not array_type:
            out = xp.asarray(out)
        if op.elementwise and out.ndim > 1:
            for a in arrays:  # row-major inputs (no size-1 dim) give PyTorch's layout
                if a.__class__ is array_type and (not a.flags.c_contiguous or 1 in a.shape):
                    out = elementwise_layout(xp, out, arrays, op.elementwise is True)
                    break
        t = _new_tensor(Tensor)  # _wrap, inlined: this runs for every op ember executes
        t._data = out
        t._device = device
        t._requires_grad = False
        t._grad_fn = None
        t._output_nr = 0
        t._version_counter = [0]
        outputs = (t,)
    else:  # a loop, not a generator (a frame of its own, resumed per output)
        outputs = []
        for o in out:
            o = o if o.__class__ is array_type else xp.asarray(o)
            outputs.append(_wrap(o, device))
        outputs = tuple(outputs)
    if op.view:
        mark_views(op, inputs[0], outputs)

    # -- 5. record the autograd node --
    if requires_grad and op.backward is not None and grad_state.enabled:
        _record(op, inputs, outputs, attrs)
    return outputs[0] if op.num_outputs == 1 else outputs


# While autocast or a jit.trace is on, Op.__call__ is `run_in_modes` instead, which calls
# dispatch inside the modes (NOTE [ Modes at the dispatcher ] in dispatch_modes.py).
Op.__call__ = dispatch


def _wrap(array, device):
    # Only the slots every tensor needs are set here; grad, _base and the rest are
    # class-level defaults on Tensor (see ember/tensor.py).
    t = _new_tensor(Tensor)
    t._data = array
    t._device = device
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    t._version_counter = [0]
    return t


_new_tensor = object.__new__
graph._wrap = _wrap  # SavedTensor.unpack's, which cannot import this module


def computation_dtype(inputs, promote):
    """The NumPy dtype an op computes in, per PyTorch's promotion rules, cached by
    the operands' dtypes, dimensionality and scalar types."""
    key = [promote]
    for x in inputs:
        if isinstance(x, Tensor):
            a = x._data
            key.append(a.dtype)
            key.append(a.ndim != 0)
        else:
            key.append(x.__class__)
    key = tuple(key)
    target = dtypes._promotion_cache.get(key)
    if target is None:
        target = dtypes._promotion_cache[key] = _slow_computation_dtype(inputs, promote)
    return target


_WEAK_SCALARS = frozenset((float, int, bool, complex, type(None)))
_NUMPY_SCALAR = np.generic
_FAST_FLOATS = frozenset((dtypes.float32.np, dtypes.float64.np))
_BFLOAT16 = dtypes.bfloat16.np
_FLOAT16 = dtypes.float16.np
_FLOAT32 = np.float32
_FLOATING = dtypes.DIFFERENTIABLE_NP  # dtypes.is_differentiable_array, inlined on the record path


def _slow_computation_dtype(inputs, promote):
    keys = []
    for x in inputs:
        if isinstance(x, Tensor):
            keys.append((2 if x._data.ndim else 1, dtypes._BY_NUMPY[x._data.dtype]))
        elif x is not None:
            keys.append((0, dtypes.scalar_dtype(x)))
    common = dtypes.result_type_from_keys(tuple(keys))
    if common.np in dtypes.BAREBONES_NP:
        raise dtypes.NoKernel(dtypes.SCALAR_TYPE_NAMES[common.name])
    if promote is INT_TO_FLOAT and common.category < dtypes.FLOATING:
        common = dtypes._default_dtype[0]
    return common.np


def _promote(op, call, kernel, inputs, arrays, attrs):
    """Step 2 of dispatch: ``(call, kernel, arrays, attrs)`` for the op's computation
    dtype, by PyTorch's promotion rules; float16 opmath ops and every bfloat16 op
    compute in float32 (ember/opmath.py)."""
    try:
        target = computation_dtype(inputs, op.promote)
    except dtypes.NoKernel as error:  # NOTE [ Barebones dtypes ] in dtypes.py
        message = f'"{op.name}" not implemented for \'{error}\' {_NO_KERNEL}'
        raise NotImplementedError(message) from None
    # float16 add and sub with alpha too: NOTE [ alpha in the two loops ] in opmath.py
    if target is _BFLOAT16 or (op.opmath and target in dtypes.REDUCED_FLOATS) or (
            target is _FLOAT16 and attrs and op.qualname in opmath.ALPHA_OPS):
        return opmath.promote(op, kernel, inputs, arrays, attrs, target)
    cast = []  # a loop, not a comprehension: one Python frame less per promoted op
    for x, a in zip(inputs, arrays):
        if isinstance(x, Tensor) and a.dtype != target:
            a = dtypes.cast_array(a, target)
        elif a.__class__ is int:
            a = dtypes.fit_int(a, target)  # wraps as PyTorch does (NOTE in dtypes.py)
        elif a.__class__ is float and target is _FLOAT16:
            a = float(_FLOAT32(a))  # through float32, as torch (NOTE in dtypes.py)
        cast.append(a)
    return call, kernel, cast, attrs


_NO_KERNEL = ("(ember keeps uint16, uint32, uint64 and float8 tensors to store and convert, not to compute in: "
              "convert it first, e.g. t.to(torch.int64) or t.float())")


def _check_same_device(op, inputs):
    devices = [x._device for x in inputs if isinstance(x, Tensor)]
    first = devices[0]
    for d in devices[1:]:
        if d != first:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                               f"devices, {first} and {d}! (when checking arguments for {op.name})")


def _record(op, inputs, outputs, attrs):
    next_functions = []
    meta = []
    needs = []
    for x in inputs:
        if isinstance(x, Tensor) and x._requires_grad:
            fn = x._grad_fn if x._base is None else x.grad_fn  # a view's may need regenerating
            next_functions.append((fn, x._output_nr) if fn is not None else (x._get_grad_accumulator(), 0))
            meta.append((x._data.shape, x._data.dtype))
            needs.append(True)
        else:
            next_functions.append(_NO_EDGE)
            meta.append(None)
            needs.append(False)
    node = op.node_class(op, tuple(next_functions), attrs, tuple(meta), tuple(needs), len(outputs))
    save = op.save
    if save is not None:
        saved_outputs = []
        if save != "inputs":
            for i, o in enumerate(outputs):  # a loop: a comprehension is a frame
                saved_outputs.append(SavedTensor(o, True, node, i))
        saved_outputs = tuple(saved_outputs)
        if save == "outputs":
            node._saved = ((), (), saved_outputs)
        else:
            versions = []
            for x in inputs:
                if isinstance(x, Tensor):
                    counter = x._version_counter
                    if counter is INFERENCE:  # NOTE [ Inference tensors ] in autograd/inference.py
                        raise RuntimeError(inference.SAVE_MESSAGE)
                    versions.append(counter[0])
                else:
                    versions.append(None)
            node._saved = (inputs, tuple(versions), saved_outputs)
    output_nr = 0
    for o in outputs:
        if o._data.dtype in _FLOATING:  # integer and bool outputs are not differentiable
            o._grad_fn = node
            o._output_nr = output_nr
            o._requires_grad = True
        output_nr += 1
    if anomaly_mode.state.enabled:
        anomaly_mode.record_creation(node)
    return node


_NO_EDGE = (None, 0)
