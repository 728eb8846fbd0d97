"""``ember.Tensor``: an n-dimensional array on a device, with autograd metadata.

PyTorch counterpart: c10/core/TensorImpl.h (sizes, strides, storage offset, version
counter), torch/csrc/autograd/variable.h (grad, grad_fn, output_nr, hooks, the view's
base) and torch/_tensor.py (the Python methods) (v2.13).

The data is one backend array (a NumPy or CuPy ndarray). A view is another ndarray
over the same memory, so a write through a view is seen by its base, as in PyTorch;
``stride()``, ``storage_offset()`` and ``untyped_storage()`` read that memory layout.
The operator methods (``add``, ``sum``, ...) are attached by
``ember/tensor_methods.py`` from the op modules in ``ember/native/``.
"""

import weakref

import numpy as np

from ember import dispatcher, dtypes, legacy_tensor_types, opmath
from ember.autograd import inference
from ember.autograd.grad_mode import grad_state
from ember.autograd.graph import AccumulateGrad
from ember.autograd.inference import INFERENCE
from ember.dispatch_modes import modes
from ember.dtypes import is_differentiable_array, is_floating_array
from ember.layout import strided
from ember.memory_format import contiguous_strides


class Tensor:
    """A multi-dimensional array with autograd support."""

    # -- the fields of a tensor --
    # Every tensor sets these slots (dispatcher._wrap); the attributes below them are
    # rarely set, so they live as class-level defaults until an instance sets its own.
    __slots__ = ("_data", "_device", "_requires_grad", "_grad_fn", "_output_nr",
                 "_version_counter", "__weakref__", "__dict__")
    grad = None

    # A view's autograd metadata (PyTorch's DifferentiableViewMeta), set by
    # ember.autograd.views.mark_view: see NOTE [ Views and in-place writes ] there.
    _base = None  # the root tensor whose memory this view shares
    # how to replay this view from _base: (parent's _view_fn, op, attrs, output index)
    _view_fn = None
    # the version counter's value when grad_fn was last set (PyTorch's attr_version)
    _view_version = 0
    _creation_meta = 0  # views.DEFAULT, NO_GRAD_MODE or MULTI_OUTPUT_NODE
    _grad_accumulator = None  # weakref to this leaf's AccumulateGrad
    _kept_accumulator = None  # a strong ref, once hooks are registered on the leaf
    _fw_grads = None  # {dual level: tangent} (NOTE [ Forward grads at the dispatcher ])
    # -- end of the fields --

    # A strided tensor; ember/native/sparse/ holds the sparse layouts, whose classes
    # override these.
    layout = strided
    is_sparse = False
    is_sparse_csr = False

    def __new__(cls, *args, device=None):
        """PyTorch's legacy constructor, kept for old scripts: ``ember.Tensor(data)`` is a
        float32 copy of ``data`` (a list, an array, a scalar sequence), ``ember.Tensor(2, 3)``
        an uninitialised float32 tensor of that shape, ``ember.Tensor()`` an empty one,
        ``ember.Tensor(t)`` ``t`` itself (detached). Ops make tensors without this path."""
        if cls is not Tensor:
            return object.__new__(cls)
        return legacy_tensor_types.legacy_new(args, device)

    # --- metadata -----------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self):
        return dtypes._BY_NUMPY[self._data.dtype]

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    # The other device-type probes of torch.Tensor: ember's devices are cpu and cuda.
    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    is_xpu = is_mps = is_meta = is_ipu = is_mtia = is_xla = is_vulkan = is_maia = property(
        lambda self: False)

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def is_floating_point(self):
        return is_floating_array(self._data.dtype)

    def stride(self, dim=None):
        itemsize = self._data.itemsize
        strides = tuple(s // itemsize for s in self._data.strides)
        # NOTE [ The strides of an empty tensor ]: NumPy's all-zero default is row-major.
        if self._data.ndim == 0 or self._data.size == 0 and not any(strides):
            strides = contiguous_strides(self._data.shape)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim)]

    def untyped_storage(self):
        from ember.storage import UntypedStorage

        return UntypedStorage._of(self)

    def storage_offset(self):
        storage = self.untyped_storage()
        return (self.data_ptr() - storage.data_ptr()) // self._data.itemsize

    def data_ptr(self):
        return _array_address(self._data)

    def is_contiguous(self, memory_format=None):
        if memory_format is not None:
            from ember.memory_format import is_contiguous_as

            return is_contiguous_as(self, memory_format)
        return bool(self._data.flags.c_contiguous)

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def requires_grad(self):
        # A view requires grad when its base does (PyTorch's DifferentiableViewMeta).
        base = self._base
        return self._requires_grad or (base is not None and base._requires_grad
                                       and is_differentiable_array(self._data.dtype))

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want "
                                   "to use a computed variable in a subgraph that doesn't require "
                                   "differentiation use var_no_grad = var.detach().")
            return self
        if requires_grad and not is_differentiable_array(self._data.dtype):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self._version_counter is INFERENCE and not grad_state.inference:
            raise RuntimeError(inference.REQUIRES_GRAD_MESSAGE)
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version(self):
        """How many in-place writes this memory has seen (shared by all views of it);
        an inference tensor counts none (NOTE [ Inference tensors ])."""
        if self._version_counter is INFERENCE:
            raise RuntimeError(inference.VERSION_MESSAGE)
        return self._version_counter[0]

    def is_inference(self):
        """True for a tensor made inside ``inference_mode`` (or a view of one), which
        autograd will not save and which cannot be written in place outside it
        (NOTE [ Inference tensors ] in ember/autograd/inference.py)."""
        return self._version_counter is INFERENCE

    @property
    def grad_fn(self):
        """The node that computed this tensor (None for a leaf). A view whose base was
        written in place since is given a fresh one first (NOTE [ Views and in-place writes ])."""
        fn = self._grad_fn
        if self._base is not None and self._view_version != self._version_counter[0]:
            from ember.autograd.views import regenerate_grad_fn

            fn = regenerate_grad_fn(self)
        return fn

    @grad_fn.setter
    def grad_fn(self, node):
        self._grad_fn = node

    def _is_view(self):
        """True for the output of a view op (PyTorch's ``Tensor._is_view``)."""
        return self._base is not None

    @property
    def data(self):
        """The same memory as a new leaf that does not require grad, with its own
        version counter (changes through it escape autograd's checks, as in PyTorch);
        an inference tensor's is one too."""
        out = dispatcher._wrap(self._data, self._device)
        if self._version_counter is INFERENCE:
            out._version_counter = INFERENCE
        return out

    @data.setter
    def data(self, value):
        self._data = value._data
        self._device = value._device

    @property
    def T(self):
        if self.ndim > 2:
            import warnings

            warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                          "deprecated and it will throw an error in a future release.", stacklevel=2)
        return self.permute(*range(self.ndim - 1, -1, -1))

    @property
    def mT(self):
        if self.ndim == 0:
            import warnings

            warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
                          UserWarning, stacklevel=2)
            return self
        if self.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return self.transpose(-2, -1)

    @property
    def H(self):
        return self.T.conj()

    @property
    def mH(self):
        return self.mT.conj()

    # --- complex parts (ember/native/complex.py) ---------------------------------------
    @property
    def real(self):
        from ember.native.complex import real

        return real(self)

    @real.setter
    def real(self, value):
        self.real.copy_(value)

    @property
    def imag(self):
        from ember.native.complex import imag

        return imag(self)

    @imag.setter
    def imag(self, value):
        self.imag.copy_(value)

    def is_complex(self):
        return self._data.dtype.kind == "c"

    # --- autograd -----------------------------------------------------------------
    def _get_grad_accumulator(self):
        ref = self._grad_accumulator
        acc = ref() if ref is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._grad_accumulator = weakref.ref(acc)
        return acc

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the leaves' ``.grad``."""
        from ember.autograd.engine import backward

        backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        """``hook(grad)`` runs when this tensor's gradient is computed; may return a new one."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_hook(self._output_nr, hook)
        return self._get_grad_accumulator_strong()._register_tensor_hook(0, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after a leaf's ``.grad`` has been updated."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        acc = self._get_grad_accumulator_strong()
        if acc._post_accumulate_hooks is None:
            acc._post_accumulate_hooks = {}
        from ember.autograd.graph import _add_hook

        return _add_hook(acc._post_accumulate_hooks, hook)

    def _get_grad_accumulator_strong(self):
        # A leaf with hooks keeps its AccumulateGrad alive (PyTorch keeps the hooks on
        # the tensor itself); otherwise the node, and its hooks, die with the graph.
        acc = self._get_grad_accumulator()
        if self._kept_accumulator is None:
            self._kept_accumulator = acc
        return acc

    def retain_grad(self):
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None:
            return
        node = self.grad_fn
        if node._retains_grad is None:
            node._retains_grad = {}
            node._any_hooks = True
        node._retains_grad[self._output_nr] = weakref.ref(self)

    @property
    def retains_grad(self):
        node = self.grad_fn
        return bool(node is not None and node._retains_grad and self._output_nr in node._retains_grad)

    def detach(self):
        """A new leaf over the same memory and version counter, outside the graph."""
        out = dispatcher._wrap(self._data, self._device)
        out._version_counter = self._version_counter
        if modes.trace is not None:  # ember.jit.trace: the same value (NOTE [ Tracing at the dispatcher ])
            modes.trace.rebind(out, self)
        return out

    def detach_(self):
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    # --- conversion ---------------------------------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._host().reshape(()).item()

    def tolist(self):
        return self._host().tolist()

    def numpy(self, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._device.type != "cpu" and not force:
            raise TypeError(f"can't convert {self._device.type} device type tensor to numpy. "
                            "Use Tensor.cpu() to copy the tensor to host memory first.")
        if dtypes.is_ml_dtype(self._data.dtype):
            _refuse_numpy(self._data.dtype)
        return self._host()

    def _host(self):
        return self._device.backend.to_host(self._data)

    # NOTE [ NumPy operands of Tensor operators ]
    # ``np.float64(2.) * x`` first asks the NumPy scalar, which would turn the tensor
    # into an array and return an ndarray. A high ``__array_priority__`` makes NumPy's
    # scalars (and arrays) step aside for the tensor's reflected operator, as PyTorch's
    # Tensor does (it sets 1000): the scalar is then read as a Python number (NOTE [
    # NumPy scalars are Python numbers ] in dtypes.py), so both orders agree. A NumPy
    # array is no scalar: ops refuse it with a TypeError, and the forward operators let
    # NumPy compute (NOTE [ NumPy arrays as operator operands ] in tensor_methods.py).
    __array_priority__ = 1000

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # NumPy's result, computed from this tensor, back as a tensor (NOTE [ NumPy arrays
        # as operator operands ] in tensor_methods.py).
        from ember.native.factory import from_numpy

        return from_numpy(np.asarray(array) if array.flags.c_contiguous else array.copy())

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:  # as numpy(): the array would leave the graph unnoticed
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if dtypes.is_ml_dtype(self._data.dtype):
            _refuse_numpy(self._data.dtype)
        a = self._host()
        return a if dtype is None else a.astype(dtype)

    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)`` or ``to(other)``; returns
        ``self`` when nothing changes and ``copy`` is False."""
        from ember.native.copy import to

        return to(self, *args, **kwargs)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)

    def pin_memory(self, device=None):
        """A copy in pinned host memory for fast uploads (see ember/native/support/memory.py)."""
        from ember.native.support.memory import pin_memory

        return pin_memory(self)

    def is_pinned(self, device=None):
        from ember.native.support.memory import is_pinned

        return is_pinned(self)

    def resize_(self, *sizes, memory_format=None):
        """Give this tensor the shape ``sizes`` over its storage from its offset: the
        first elements in storage order, the storage grown (new elements uninitialised)
        when it is too small, as torch's ``resize_``."""
        from ember.native.factory import _shape
        from ember.storage import _root_array

        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        shape = _shape(sizes, "resize_")
        count = int(np.prod(shape, dtype=np.int64))
        data = self._data
        root, offset = _root_array(data), self.storage_offset()
        if root.flags.c_contiguous and root.nbytes % data.itemsize == 0:
            flat = root.reshape(-1).view(data.dtype)
        else:  # memory NumPy cannot view as one run: start over from this tensor's values
            flat, offset = data.copy().reshape(-1), 0
        if offset + count > flat.size:
            grown = np.empty_like(flat, shape=(offset + count,))  # CuPy's for a CuPy array (NEP 18)
            grown[:flat.size] = flat
            flat = grown
        self._data = flat[offset:offset + count].reshape(shape)
        if memory_format is not None:
            self._data = self.contiguous(memory_format=memory_format)._data
        self._version_counter[0] += 1
        return self

    def resize_as_(self, other, memory_format=None):
        return self.resize_(other.shape, memory_format=memory_format)

    def is_nonzero(self):
        """``bool(self)`` for one element; torch's errors for none or several."""
        if self.numel() != 1:
            which = "no values" if self.numel() == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {which} is ambiguous")
        return bool(self.item())

    def new(self, *args, device=None):
        """The legacy constructor with this tensor's dtype and device: ``x.new(2, 3)`` is
        uninitialised, ``x.new([1, 2])`` a copy of the data (NOTE [ Legacy tensor types ])."""
        return legacy_tensor_types.legacy_new(args, device or self.device, self.dtype)

    def type(self, dtype=None):
        """The legacy type name (``'ember.FloatTensor'``), or a conversion to ``dtype``
        (a dtype or such a name)."""
        if dtype is None:
            return legacy_tensor_types.legacy_type_name(self)
        if isinstance(dtype, str):
            dtype = legacy_tensor_types.dtype_of_legacy_name(dtype)
        elif isinstance(dtype, legacy_tensor_types.tensortype):
            dtype = dtype.dtype
        return self.to(dtype)

    def float(self, memory_format=None):
        return self.to(dtypes.float32, memory_format=memory_format)

    def double(self, memory_format=None):
        return self.to(dtypes.float64, memory_format=memory_format)

    def half(self, memory_format=None):
        return self.to(dtypes.float16, memory_format=memory_format)

    def cfloat(self, memory_format=None):
        return self.to(dtypes.complex64, memory_format=memory_format)

    def cdouble(self, memory_format=None):
        return self.to(dtypes.complex128, memory_format=memory_format)

    def bfloat16(self, memory_format=None):
        return self.to(dtypes.bfloat16, memory_format=memory_format)

    def long(self, memory_format=None):
        return self.to(dtypes.int64, memory_format=memory_format)

    def int(self, memory_format=None):
        return self.to(dtypes.int32, memory_format=memory_format)

    def short(self, memory_format=None):
        return self.to(dtypes.int16, memory_format=memory_format)

    def char(self, memory_format=None):
        return self.to(dtypes.int8, memory_format=memory_format)

    def byte(self, memory_format=None):
        return self.to(dtypes.uint8, memory_format=memory_format)

    def bool(self, memory_format=None):
        return self.to(dtypes.bool_, memory_format=memory_format)

    def type_as(self, other):
        return self.to(other.dtype)

    # --- Python protocol ----------------------------------------------------------
    def __repr__(self, *, tensor_contents=None):
        from ember._tensor_str import tensor_repr

        return tensor_repr(self)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __contains__(self, element):
        # `2 in t` asks whether any element equals 2, as in PyTorch.
        return bool((self == element).any())

    def __float__(self):
        return float(self._python_scalar())

    def __int__(self):
        return int(self._python_scalar())

    def _python_scalar(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __format__(self, format_spec):
        # A 0-d tensor formats like its value (f"{loss:.3f}"); others print as repr.
        if self._data.ndim == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    __hash__ = object.__hash__

    def __reduce_ex__(self, protocol):
        # Pickling (DataLoader workers, copy.deepcopy): data on the host, plus leaf state;
        # a tensor in shared memory sends its block's name (ember/multiprocessing/reductions.py).
        from ember.multiprocessing.reductions import reduce_shared

        shared = reduce_shared(self)
        if shared is not None:
            return shared
        return (_rebuild_tensor, (self._host(), str(self._device), self._requires_grad))

    def share_memory_(self):
        """Move the data into shared memory (in place), so processes started afterwards,
        or that receive this tensor, read and write the same numbers. CPU tensors only."""
        from ember.multiprocessing.reductions import share_

        return share_(self)

    def is_shared(self):
        """Whether the data lives in shared memory."""
        from ember.multiprocessing.reductions import block_of

        return block_of(self) is not None

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the "
                               "deepcopy protocol at the moment.")
        out = self.detach().clone().requires_grad_(self._requires_grad)
        if self.grad is not None:
            out.grad = self.grad.detach().clone()
        memo[id(self)] = out
        return out

    def __dir__(self):
        return sorted(set(super().__dir__()))


class Size(tuple):
    """The shape of a tensor: a tuple that prints as ``ember.Size([2, 3])``."""

    def __repr__(self):
        return f"ember.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        result = tuple.__getitem__(self, key)
        return Size(result) if isinstance(key, slice) else result

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __mul__(self, times):
        return Size(tuple(self) * times)

    __rmul__ = __mul__


def _rebuild_tensor(array, device, requires_grad):
    from ember.native.factory import tensor

    return tensor(array, device=device, requires_grad=requires_grad)


_NP_INTEGER = np.integer


def _wrap_dim(dim, ndim):
    """PyTorch's maybe_wrap_dim: negative dims count from the end; a 0-d tensor
    accepts dims -1 and 0. A NumPy integer is a dim too (``np.int64(0)``), as in PyTorch."""
    if dim.__class__ is not int and isinstance(dim, _NP_INTEGER):
        dim = int(dim)
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _refuse_numpy(np_dtype):
    # PyTorch's message: NumPy has no bfloat16 or float8. ember holds them in ml_dtypes
    # arrays, so it could hand those over, but a PyTorch program must not come to rely on it.
    name = dtypes.SCALAR_TYPE_NAMES[dtypes.from_numpy_dtype(np_dtype).name]
    raise TypeError(f"Got unsupported ScalarType {name}: NumPy has no such dtype, as in PyTorch; "
                    "convert first, e.g. tensor.float().numpy()")


def _array_address(array):
    return array.__array_interface__["data"][0] if hasattr(array, "__array_interface__") else array.data.ptr


def _make_tensor(array, device, requires_grad=False):
    t = dispatcher._wrap(array, device)
    if grad_state.inference:  # a factory inside inference_mode (NOTE [ Inference tensors ])
        t._version_counter = INFERENCE
    t._requires_grad = requires_grad
    return t


dispatcher.Tensor = opmath.Tensor = Tensor
