"""The table of torch global names a weights-only checkpoint may use, mapped to ember.

PyTorch counterpart: ``_get_allowed_globals`` in torch/_weights_only_unpickler.py and
the rebuild functions of torch/_utils.py (``_rebuild_tensor_v2``, ``_rebuild_tensor_v3``,
``_rebuild_parameter``, ``_rebuild_sparse_tensor``) (v2.13).

Nothing here is imported by name: each allowed ``(module, name)`` maps to an ember value
(a dtype, ``ember.Size``, a storage marker) or to a :class:`SafeCallable` that checks its
arguments and builds the ember object. A name that is not in the table is refused.
"""

import collections

import numpy as np

from ember import dtypes
from ember.device import device as ember_device
from ember.layout import layout as layout_type
from ember.layout import sparse_coo, sparse_csr
from ember.layout import strided as strided_layout
from ember.native.shape.views import strided
from ember.serialization import quantized
from ember.serialization.errors import CheckpointError, describe
from ember.serialization.limits import check_addressable, check_view
from ember.serialization.unpickler import Refused, SafeCallable
from ember.tensor import Size, Tensor, _make_tensor


# NOTE [ bfloat16 checkpoints ]
# A torch.BFloat16Storage loads as an ember.bfloat16 tensor with the same bits: the
# record is read as little-endian uint16 (ml_dtypes' bfloat16 has no byte order of its
# own) and viewed as bfloat16. ember writes bfloat16 tensors back as BFloat16Storage,
# so torch.load(weights_only=True) reads them as torch.bfloat16. The same holds for
# safetensors' BF16.
class StorageType:
    """A legacy ``torch.<Name>Storage`` class: how the bytes of a storage are typed."""

    __slots__ = ("name", "file_dtype", "dtype", "refusal")

    def __init__(self, name, file_dtype=None, dtype=None, refusal=None):
        self.name = name
        self.file_dtype = np.dtype(file_dtype) if file_dtype is not None else None  # as stored, little-endian
        self.dtype = dtype  # the ember dtype it loads as
        self.refusal = refusal

    def __repr__(self):
        return f"<torch.{self.name}>"


class TypeMarker:
    """``torch.Tensor`` or ``torch.nn.parameter.Parameter``, only as ``_rebuild_from_type_v2``'s type."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<torch type {self.name}>"


class LoadedStorage:
    """One ``data/<key>`` record: a flat backend array typed by its storage class."""

    __slots__ = ("key", "storage_type", "array", "device", "numel", "byteorder")

    def __init__(self, key, storage_type, array, device, numel, byteorder="<"):
        self.key = key
        self.storage_type = storage_type
        self.array = array
        self.device = device
        self.numel = numel
        self.byteorder = byteorder  # the file's: an UntypedStorage's bytes are typed later

    def typed(self, dtype):
        """This UntypedStorage's bytes as a storage of ``dtype`` (``_rebuild_tensor_v3``)."""
        itemsize = dtype.itemsize
        if self.numel % itemsize:
            raise CheckpointError(f"storage {self.key} holds {self.numel} bytes, not a whole number of "
                                  f"{dtype} elements")
        # NumPy's own types carry a byte order; ml_dtypes' (bfloat16, float8) do not: read
        # their bits as the unsigned integer of their size (NOTE [ bfloat16 checkpoints ])
        bits = dtypes.is_ml_dtype(dtype.np)
        file_dtype = (np.dtype(f"u{itemsize}") if bits else dtype.np).newbyteorder(self.byteorder)
        array = self.array.view(file_dtype)
        if not file_dtype.isnative:
            array = array.byteswap().view(file_dtype.newbyteorder("="))
        return LoadedStorage(self.key, self.storage_type, array.view(dtype.np), self.device, self.numel // itemsize)

    def __repr__(self):
        return f"<checkpoint storage {self.key} ({self.storage_type.name}, {self.numel} elements)>"


STORAGE_TYPES = {
    "FloatStorage": StorageType("FloatStorage", "<f4", dtypes.float32),
    "DoubleStorage": StorageType("DoubleStorage", "<f8", dtypes.float64),
    "HalfStorage": StorageType("HalfStorage", "<f2", dtypes.float16),
    "BFloat16Storage": StorageType("BFloat16Storage", "<u2", dtypes.bfloat16),  # bits as uint16, see the NOTE
    "LongStorage": StorageType("LongStorage", "<i8", dtypes.int64),
    "IntStorage": StorageType("IntStorage", "<i4", dtypes.int32),
    "ShortStorage": StorageType("ShortStorage", "<i2", dtypes.int16),
    "CharStorage": StorageType("CharStorage", "<i1", dtypes.int8),
    "ByteStorage": StorageType("ByteStorage", "<u1", dtypes.uint8),
    "BoolStorage": StorageType("BoolStorage", "<u1", dtypes.bool_),
    "ComplexFloatStorage": StorageType("ComplexFloatStorage", "<c8", dtypes.complex64),
    "ComplexDoubleStorage": StorageType("ComplexDoubleStorage", "<c16", dtypes.complex128),
}
# The bytes of a tensor whose dtype has no typed storage class (uint16, float8, ...):
# ``_rebuild_tensor_v3`` names the dtype.
UNTYPED_STORAGE = StorageType("UntypedStorage", "<u1", dtypes.uint8)
for _name in ("QUInt4x2Storage", "QUInt2x4Storage"):
    STORAGE_TYPES[_name] = StorageType(_name, refusal=f"torch.{_name} has no ember dtype")
LEGACY_STORAGE_NAMES = {st.dtype.name: name for name, st in STORAGE_TYPES.items() if st.dtype is not None}
for _name, (_file_dtype, _int_dtype, _) in quantized.QUANTIZED_STORAGES.items():  # after the map: not the default
    STORAGE_TYPES[_name] = StorageType(_name, _file_dtype, getattr(dtypes, _int_dtype))


# --- argument checks -----------------------------------------------------------------------
def _is_int(value):
    return type(value) is int


_MAX_DIMS = 64  # NumPy's limit
_MAX_EXTENT = 2**62  # far beyond any file; keeps NumPy's index arithmetic in range


def _check_int_tuple(value, what):
    if (type(value) is not tuple or len(value) > _MAX_DIMS
            or not all(_is_int(v) and 0 <= v < _MAX_EXTENT for v in value)):
        raise CheckpointError(f"{what} must be a tuple of at most {_MAX_DIMS} non-negative ints below 2**62, "
                              f"got {describe(value)}")
    return value


def _check_empty_mapping(value, what):
    if value is not None and (type(value) not in (dict, collections.OrderedDict) or value):
        raise CheckpointError(f"{what} must be empty, got {describe(value)}")


# --- the rebuild functions -------------------------------------------------------------------
def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
                      backward_hooks, metadata=None):
    """A tensor viewing ``storage``, after checking the view stays inside it."""
    if type(storage) is not LoadedStorage:
        raise CheckpointError(f"_rebuild_tensor_v2 needs a storage, got "
                              f"{type(storage).__name__}")
    if not _is_int(storage_offset) or not 0 <= storage_offset < _MAX_EXTENT:
        raise CheckpointError(f"storage offset must be a non-negative int, got "
                              f"{describe(storage_offset)}")
    _check_int_tuple(size, "tensor size")
    _check_int_tuple(stride, "tensor stride")
    if len(size) != len(stride):
        raise CheckpointError(f"tensor size {size} and stride {stride} have different "
                              "lengths")
    if type(requires_grad) is not bool:
        raise CheckpointError(f"requires_grad must be a bool, got "
                              f"{describe(requires_grad)}")
    _check_empty_mapping(backward_hooks, "backward_hooks")
    _check_empty_mapping(metadata, "tensor metadata")
    numel = 1
    for n in size:
        numel *= n
    # Python ints do not overflow, so a huge size is simply out of the storage's range.
    extent = (storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
              if numel else storage_offset)
    if extent > storage.numel:
        raise CheckpointError(f"tensor of size {list(size)}, stride {list(stride)} and "
                              f"offset {storage_offset} reaches element {extent - 1} of "
                              f"storage {storage.key}, which has {storage.numel}")
    itemsize = storage.array.itemsize
    # NOTE [ What a checkpoint may declare ]
    check_addressable(size, itemsize, f"tensor of storage {storage.key}")
    check_view(numel, storage.numel, size, f"tensor of storage {storage.key}")
    xp = storage.device.backend.xp
    byte_strides = tuple(s * itemsize for s in stride)
    view = strided(xp, storage.array[storage_offset:], size, byte_strides)
    tensor = _make_tensor(view, storage.device)
    return _set_requires_grad(tensor, requires_grad)


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad,
                      backward_hooks, dtype, metadata=None):
    """A tensor of ``dtype`` viewing an UntypedStorage: torch's form for the dtypes that
    have no typed storage class (uint16, uint32, uint64, float8)."""
    untyped = type(storage) is LoadedStorage and storage.storage_type is UNTYPED_STORAGE
    if not untyped:
        raise CheckpointError(f"_rebuild_tensor_v3 needs an UntypedStorage, "
                              f"got {describe(storage)}")
    if type(dtype) is not dtypes.dtype:
        raise CheckpointError(f"_rebuild_tensor_v3 needs a dtype, "
                              f"got {describe(dtype)}")
    return rebuild_tensor_v2(storage.typed(dtype), storage_offset, size, stride,
                             requires_grad, backward_hooks, metadata)


def _set_requires_grad(tensor, requires_grad):
    if requires_grad and not tensor.is_floating_point():
        raise CheckpointError(f"a {tensor.dtype} tensor cannot require grad")
    tensor._requires_grad = requires_grad
    return tensor


def rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    """An ``ember.nn.Parameter`` (or, before ember.nn exists, a tensor that requires grad)."""
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise CheckpointError("_rebuild_parameter needs a tensor and a bool")
    _check_empty_mapping(backward_hooks, "backward_hooks")
    _check_empty_mapping(state, "parameter state")
    if requires_grad and not data.is_floating_point():
        raise CheckpointError(f"a {data.dtype} parameter cannot require grad")
    try:
        from ember.nn.parameter import Parameter
    except ImportError:
        return _set_requires_grad(data, requires_grad)
    return Parameter(data, requires_grad)


def rebuild_from_type_v2(function, new_type, args, state):
    """torch's wrapper for tensors pickled with their Python type; only plain types pass."""
    if function is not _REBUILD_TENSOR_V2 and function is not _REBUILD_PARAMETER:
        raise CheckpointError(f"_rebuild_from_type_v2 of {describe(function)} is not allowed")
    if type(new_type) is not TypeMarker or type(args) is not tuple:
        raise CheckpointError("_rebuild_from_type_v2 needs torch.Tensor or Parameter and an argument tuple")
    _check_empty_mapping(state, "tensor state")
    result = function.function(*args)
    if new_type.name == "Parameter" and function is _REBUILD_TENSOR_V2:
        return rebuild_parameter(result, result.requires_grad, None)
    return result


def _ordered_dict(*args):
    if args:
        raise CheckpointError("collections.OrderedDict is rebuilt empty and filled by SETITEMS")
    return collections.OrderedDict()


def _counter(*args):
    if args == ():
        return collections.Counter()
    if len(args) == 1 and type(args[0]) is dict:
        return collections.Counter(args[0])
    raise CheckpointError("collections.Counter takes one dict")


def _size(*args):
    if len(args) != 1:
        raise CheckpointError("torch.Size takes one tuple")
    return Size(_check_int_tuple(args[0], "torch.Size"))


def _device(*args):
    if not 1 <= len(args) <= 2 or type(args[0]) is not str or (len(args) == 2 and not _is_int(args[1])):
        raise CheckpointError(f"torch.device takes a string and an optional int, got {describe(args)}")
    try:
        return ember_device(*args)
    except (RuntimeError, TypeError) as e:
        raise CheckpointError(f"bad torch.device: {e}") from None


def _codecs_encode(*args):
    if len(args) != 2 or type(args[0]) is not str or type(args[1]) is not str or args[1] not in ("latin1", "latin-1"):
        raise CheckpointError("_codecs.encode is only accepted as (str, 'latin1'), the pickling of bytes")
    try:
        return args[0].encode("latin1")
    except UnicodeEncodeError:
        raise CheckpointError("_codecs.encode: string is not latin-1") from None


def _bytearray(*args):
    if args == ():
        return bytearray()
    if len(args) == 1 and type(args[0]) is bytes:
        return bytearray(args[0])
    raise CheckpointError("bytearray takes one bytes object")


def _set(*args):
    if args == ():
        return set()
    if len(args) == 1 and type(args[0]) is list:
        return set(args[0])
    raise CheckpointError("set takes one list")


def _complex(*args):
    if len(args) != 2 or not all(type(a) in (int, float) for a in args):
        raise CheckpointError("complex takes two real numbers")
    return complex(*args)


_REBUILD_TENSOR_V2 = SafeCallable("torch._utils._rebuild_tensor_v2", rebuild_tensor_v2)
_REBUILD_PARAMETER = SafeCallable("torch._utils._rebuild_parameter", rebuild_parameter)


def rebuild_qtensor(*args):
    """torch._utils._rebuild_qtensor (quantized.py): a QTensor of the ember-quantization plugin."""
    if len(args) != 7:
        raise CheckpointError(f"_rebuild_qtensor takes 7 arguments, got {len(args)}")
    return quantized.rebuild_qtensor(rebuild_tensor_v2, *args)


def _get_layout(*args):
    """torch.serialization._get_layout: a layout from its name (``"torch.sparse_coo"``)."""
    names = {f"torch.{each.name}": each for each in (strided_layout, sparse_coo, sparse_csr)}
    if len(args) != 1 or args[0] not in names:
        raise CheckpointError(f"ember knows the layouts {sorted(names)}, got {describe(args)}")
    return names[args[0]]


def rebuild_sparse_tensor(*args):
    """torch._utils._rebuild_sparse_tensor: a COO tensor from (indices, values, size[,
    is_coalesced]), a CSR one from (crow_indices, col_indices, values, size)."""
    from ember.native.sparse.csr import sparse_csr_tensor
    from ember.native.sparse.sparse_tensor import sparse_coo_tensor

    if len(args) != 2 or not isinstance(args[0], layout_type) or type(args[1]) is not tuple:
        raise CheckpointError(f"_rebuild_sparse_tensor takes a layout and a tuple, got {describe(args)}")
    kind, parts = args
    tensors = [part for part in parts if isinstance(part, Tensor)]
    if kind is sparse_coo and len(parts) in (3, 4) and len(tensors) == 2:
        coalesced = parts[3] if len(parts) == 4 else None
        return sparse_coo_tensor(parts[0], parts[1], _check_int_tuple(tuple(parts[2]), "size"), is_coalesced=coalesced)
    if kind is sparse_csr and len(parts) == 4 and len(tensors) == 3:
        return sparse_csr_tensor(parts[0], parts[1], parts[2], _check_int_tuple(tuple(parts[3]), "size"))
    raise CheckpointError(f"ember rebuilds sparse_coo and sparse_csr tensors only, got {kind} with "
                          f"{describe(parts)}")


def _build_table():
    table = {
        ("collections", "OrderedDict"): SafeCallable("collections.OrderedDict", _ordered_dict, is_class=True),
        ("collections", "Counter"): SafeCallable("collections.Counter", _counter, is_class=True),
        ("torch._utils", "_rebuild_tensor_v2"): _REBUILD_TENSOR_V2,
        ("torch._utils", "_rebuild_tensor_v3"): SafeCallable("torch._utils._rebuild_tensor_v3", rebuild_tensor_v3),
        ("torch.storage", "UntypedStorage"): UNTYPED_STORAGE,
        ("torch", "UntypedStorage"): UNTYPED_STORAGE,
        ("torch._utils", "_rebuild_parameter"): _REBUILD_PARAMETER,
        ("torch._utils", "_rebuild_parameter_with_state"):
            SafeCallable("torch._utils._rebuild_parameter_with_state", rebuild_parameter),
        ("torch._tensor", "_rebuild_from_type_v2"):
            SafeCallable("torch._tensor._rebuild_from_type_v2", rebuild_from_type_v2),
        ("torch", "Tensor"): TypeMarker("Tensor"),
        ("torch.nn.parameter", "Parameter"): TypeMarker("Parameter"),
        ("torch", "Size"): SafeCallable("torch.Size", _size, is_class=True),
        ("torch", "device"): SafeCallable("torch.device", _device, is_class=True),
        ("_codecs", "encode"): SafeCallable("_codecs.encode", _codecs_encode),
        ("torch._utils", "_rebuild_qtensor"): SafeCallable("torch._utils._rebuild_qtensor", rebuild_qtensor),
        ("torch._utils", "_rebuild_sparse_tensor"):
            SafeCallable("torch._utils._rebuild_sparse_tensor", rebuild_sparse_tensor),
        ("torch.serialization", "_get_layout"): SafeCallable("torch.serialization._get_layout", _get_layout),
    }
    for scheme in quantized.QSCHEMES:
        table["torch", scheme] = quantized.QSchemeMarker(scheme)
    for qdtype in quantized.STORAGE_FOR_QDTYPE:
        table["torch", qdtype] = quantized.QDtypeMarker(qdtype)
    for builtins_name in ("builtins", "__builtin__"):  # protocol 2 writes Python 2's module name
        table[builtins_name, "set"] = SafeCallable("builtins.set", _set, is_class=True)
        table[builtins_name, "complex"] = SafeCallable("builtins.complex", _complex, is_class=True)
        table[builtins_name, "bytearray"] = SafeCallable("builtins.bytearray", _bytearray, is_class=True)
    for name, storage_type in STORAGE_TYPES.items():
        table["torch", name] = storage_type
    for dtype in dtypes.ALL_DTYPES + dtypes.BAREBONES_DTYPES:
        table["torch", dtype.name] = dtype
    for alias, dtype in dtypes.ALIASES.items():
        table["torch", alias] = dtype
    table.update(UNSUPPORTED)
    return table


# Valid torch checkpoints that ember cannot load with weights_only=True or False: the
# refusal names what is missing, and never suggests weights_only=False (which torch's
# message does, for names it merely does not trust).
_EITHER_WAY = "ember cannot load it, with weights_only=True or False"
UNSUPPORTED = {
    ("torch._utils", "_rebuild_nested_tensor"): Refused(
        f"the checkpoint holds a nested tensor (torch._utils._rebuild_nested_tensor); ember has none, so "
        f"{_EITHER_WAY}"),
}


TORCH_GLOBALS = _build_table()
