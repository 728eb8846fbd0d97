"""The checkpoint writer's pickler: ember objects as protocol-2 opcodes naming torch globals.

PyTorch counterpart: the ``persistent_id`` half of ``_save`` in torch/serialization.py and
``Tensor._reduce_ex_internal`` in torch/_tensor.py (v2.13).

The opcodes are emitted by hand, so the file names ``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage`` and friends without ember importing torch. Only what ember's own
loader accepts are written by this file: tensors, Parameters, dicts/OrderedDicts (with a
state_dict's ``_metadata``), lists, tuples, sets, numbers, strings, bytes, ``None``,
dtypes, devices and sizes. Any other object is written by its reduction (objects.py), as
``torch.save`` does; such a file loads only with ``weights_only=False``.

Each tensor is written as a view of its storage (the memory its backend array lives in):
views that share memory share one ``data/<key>`` record, as in PyTorch.
"""

import collections
import struct

import numpy as np

from ember.device import device as ember_device
from ember.dtypes import dtype as ember_dtype
from ember.dtypes import is_ml_dtype
from ember.layout import strided
from ember.serialization import quantized
from ember.serialization.torch_globals import LEGACY_STORAGE_NAMES
from ember.storage import _root_array
from ember.tensor import Size, Tensor, _array_address

_BATCH = 1000  # items per APPENDS/SETITEMS, as CPython's pickler does


class SavedStorage:
    """One storage to write as ``data/<key>``: the root array whose memory it is."""

    __slots__ = ("key", "root", "dtype", "device", "numel")

    def __init__(self, key, root, dtype, device, numel):
        self.key = key
        self.root = root
        self.dtype = dtype
        self.device = device
        self.numel = numel

    def payload(self):
        """The storage bytes in memory order, little-endian, as a flat uint8 host
        array."""
        host = self.device.backend.to_host(self.root)
        flat = host.T.reshape(-1) if not host.flags.c_contiguous else host.reshape(-1)
        flat = flat.view(np.uint8).view(self.dtype.np)
        if is_ml_dtype(flat.dtype):
            # ml_dtypes' bfloat16 and float8 have no byte order: write their bits
            flat = flat.view(f"u{flat.dtype.itemsize}")
        return flat.astype(flat.dtype.newbyteorder("<"), copy=False).view(np.uint8)


class CheckpointPickler:
    """Writes one object tree as ``data.pkl`` bytes and collects the storages it references."""

    def __init__(self):
        self._out = bytearray()
        self._memo = {}  # id(obj) -> memo index
        self._building = set()  # ids of tuples being written (a tuple cannot contain itself)
        self.storages = {}  # id(root array) -> SavedStorage

    def dump(self, obj):
        self._out += b"\x80\x02"
        self._save(obj)
        self._out += b"."
        return bytes(self._out)

    # --- primitives -----------------------------------------------------------------------
    def _global(self, module, name):
        """GLOBAL the first time, a memo GET after, as CPython's pickler memoizes globals
        (a state dict names ``_rebuild_tensor_v2`` and a storage type once per tensor)."""
        key = ("global", module, name)  # a tuple: never equal to an id(obj) key
        memo = self._memo.get(key)
        if memo is not None:
            self._get(memo[0])
            return
        self._out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"
        self._put(key, None)

    def _memoize(self, obj):
        self._put(id(obj), obj)  # keep obj alive so its id is not reused

    def _put(self, key, obj):
        index = len(self._memo)
        self._memo[key] = (index, obj)
        self._out += b"q" + bytes([index]) if index < 256 else b"r" + struct.pack("<I", index)

    def _get(self, index):
        self._out += b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index)

    def _int(self, value):
        if 0 <= value < 256:
            self._out += b"K" + bytes([value])
        elif 0 <= value < 65536:
            self._out += b"M" + struct.pack("<H", value)
        elif -(2**31) <= value < 2**31:
            self._out += b"J" + struct.pack("<i", value)
        else:
            encoded = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
            if len(encoded) > 255:
                raise TypeError("ember.save can't save an int of more than 255 bytes")
            self._out += b"\x8a" + bytes([len(encoded)]) + encoded

    def _str(self, value):
        encoded = value.encode("utf-8", "surrogatepass")
        self._out += b"X" + struct.pack("<I", len(encoded)) + encoded

    def _reduce(self, module, name, args):
        self._global(module, name)
        self._save(tuple(args))
        self._out += b"R"

    # --- objects ----------------------------------------------------------------------------
    def _save(self, obj):
        memo = self._memo.get(id(obj))
        if memo is not None:
            self._get(memo[0])
            return
        kind = type(obj)
        if obj is None:
            self._out += b"N"
        elif kind is bool:
            self._out += b"\x88" if obj else b"\x89"
        elif kind is int:
            self._int(obj)
        elif kind is float:
            self._out += b"G" + struct.pack(">d", obj)
        elif kind is str:
            self._str(obj)
        elif kind is bytes:
            self._reduce("_codecs", "encode", (obj.decode("latin1"), "latin1"))
        elif kind is bytearray:
            self._reduce("__builtin__", "bytearray", (bytes(obj),))
        elif kind is complex:
            self._reduce("__builtin__", "complex", (obj.real, obj.imag))
        elif isinstance(obj, Tensor) and obj.layout is not strided:
            self._save_sparse(obj)
        elif isinstance(obj, Tensor):
            self._save_tensor(obj)
        elif quantized.is_qtensor(obj):
            self._save_qtensor(obj)
        elif quantized.is_qdtype(obj):
            self._global("torch", obj.name)
        elif kind is Size:
            self._reduce("torch", "Size", (tuple(obj),))
        elif kind is ember_device:
            self._reduce("torch", "device", (str(obj),))
        elif kind is ember_dtype:
            self._global("torch", obj.name)
        elif kind is tuple:
            self._save_tuple(obj)
        elif kind is list:
            self._save_list(obj)
        elif kind in (dict, collections.OrderedDict):
            self._save_dict(obj)
        elif kind is set:
            self._reduce("__builtin__", "set", (list(obj),))
        else:  # any other picklable object, as torch.save writes it (objects.py; loads with weights_only=False)
            from ember.serialization.objects import save_object

            save_object(self, obj)

    def _save_tuple(self, obj):
        if id(obj) in self._building:
            raise ValueError("ember.save can't save a tuple that contains itself")
        self._building.add(id(obj))
        if not obj:
            self._out += b")"
        elif len(obj) <= 3:
            for item in obj:
                self._save(item)
            self._out += bytes([0x84 + len(obj)])  # TUPLE1..TUPLE3
        else:
            self._out += b"("
            for item in obj:
                self._save(item)
            self._out += b"t"
        self._building.discard(id(obj))
        if id(obj) in self._memo:  # an item referred back to this tuple through a list or dict
            raise ValueError("ember.save can't save a tuple that contains itself")
        self._memoize(obj)

    def _save_list(self, obj):
        self._out += b"]"
        self._memoize(obj)
        for start in range(0, len(obj), _BATCH):
            self._out += b"("
            for item in obj[start:start + _BATCH]:
                self._save(item)
            self._out += b"e"

    def _save_dict(self, obj):
        if type(obj) is collections.OrderedDict:
            self._global("collections", "OrderedDict")
            self._out += b")R"
        else:
            self._out += b"}"
        self._memoize(obj)
        items = list(obj.items())
        for start in range(0, len(items), _BATCH):
            self._out += b"("
            for key, value in items[start:start + _BATCH]:
                self._save(key)
                self._save(value)
            self._out += b"u"
        self._save_metadata(obj)

    def _save_metadata(self, obj):
        attributes = getattr(obj, "__dict__", None)
        if not attributes:
            return
        if list(attributes) != ["_metadata"]:
            raise TypeError(f"ember.save can only save the '_metadata' attribute of an OrderedDict, "
                            f"found {sorted(attributes)}")
        self._save({"_metadata": attributes["_metadata"]})
        self._out += b"b"

    # --- tensors ----------------------------------------------------------------------------
    def _save_tensor(self, tensor):
        if _is_parameter(tensor):
            self._global("torch._utils", "_rebuild_parameter")
            self._out += b"("
            self._save_tensor_data(tensor, requires_grad=False)
            self._save(tensor.requires_grad)
            self._reduce("collections", "OrderedDict", ())
            self._out += b"tR"
        else:
            self._save_tensor_data(tensor, tensor.requires_grad)
        self._memoize(tensor)

    def _save_sparse(self, tensor):
        """A sparse tensor as torch's ``__reduce_ex__`` writes one:
        ``_rebuild_sparse_tensor(layout, parts)``, its parts ordinary tensors (COO:
        indices, values, size, is_coalesced; CSR: crow and col indices, values, size)."""
        if tensor.is_sparse:
            parts = (tensor._indices(), tensor._values().detach(), tensor.shape, tensor.is_coalesced())
        else:
            parts = (tensor.crow_indices(), tensor.col_indices(), tensor.values().detach(), tensor.shape)
        self._global("torch._utils", "_rebuild_sparse_tensor")
        self._out += b"("
        self._reduce("torch.serialization", "_get_layout", (f"torch.{tensor.layout.name}",))  # copyreg's form
        self._save(parts)
        self._out += b"tR"
        self._memoize(tensor)

    def _save_tensor_data(self, tensor, requires_grad):
        storage, offset, size, stride = self._storage_view(tensor)
        # a dtype without a typed storage class (uint16, float8) is written as torch
        # writes it: _rebuild_tensor_v3 over an UntypedStorage of bytes, naming the dtype
        legacy = LEGACY_STORAGE_NAMES.get(storage.dtype.name)
        rebuild = "_rebuild_tensor_v2" if legacy else "_rebuild_tensor_v3"
        self._global("torch._utils", rebuild)
        self._out += b"(("  # the argument tuple, then the persistent id tuple
        self._str("storage")
        if legacy:
            self._global("torch", legacy)
        else:
            self._global("torch.storage", "UntypedStorage")
        self._str(storage.key)
        self._str(str(storage.device))
        # a typed storage counts elements, an untyped one bytes
        self._int(storage.numel if legacy else storage.numel * storage.dtype.itemsize)
        self._out += b"tQ"  # TUPLE, BINPERSID
        self._int(offset)
        self._save(size)
        self._save(stride)
        self._save(bool(requires_grad))
        self._reduce("collections", "OrderedDict", ())  # backward_hooks
        if not legacy:
            self._save(storage.dtype)
        self._out += b"tR"

    def _save_qtensor(self, qtensor):
        """torch._utils._rebuild_qtensor over a Q*Storage of the integers (quantized.py)."""
        int_repr = qtensor._int_repr
        storage, offset, size, stride = self._storage_view(int_repr)
        self._global("torch._utils", "_rebuild_qtensor")
        self._out += b"(("
        self._str("storage")
        self._global("torch", quantized.STORAGE_FOR_QDTYPE[qtensor.dtype.name])
        self._str(storage.key)
        self._str(str(storage.device))
        self._int(storage.numel)
        self._out += b"tQ"
        self._int(offset)
        self._save(size)
        self._save(stride)
        self._out += b"("  # quantizer_params: (qscheme, scale, zero_point) or (qscheme, scales, zero_points, axis)
        self._global("torch", qtensor.qscheme().name)
        if qtensor._axis is None:
            self._save(float(qtensor._scale))
            self._int(int(qtensor._zero_point))
        else:
            self._save(qtensor._scale)
            self._save(qtensor._zero_point)
            self._int(int(qtensor._axis))
        self._out += b"t"
        self._save(False)
        self._reduce("collections", "OrderedDict", ())
        self._out += b"tR"
        self._memoize(qtensor)

    def _storage_view(self, tensor):
        """``(storage, offset, size, stride)`` locating ``tensor`` in the storage it shares."""
        array = tensor._data
        root = _root_array(array)
        layout = _layout_in(array, root)
        if layout is None:  # memory ember cannot describe as a torch storage: save a compact copy
            root = array.copy(order="C")
            layout = (0, tuple(array.shape), tensor.stride())
        storage = self.storages.get(id(root))
        if storage is None:
            numel = root.nbytes // array.itemsize
            storage = SavedStorage(str(len(self.storages)), root, tensor.dtype, tensor.device, numel)
            self.storages[id(root)] = storage
        elif storage.dtype is not tensor.dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different "
                               f"types: {storage.dtype} and {tensor.dtype}")
        return (storage, *layout)


def _layout_in(array, root):
    """``(offset, size, stride)`` in elements of ``array`` inside ``root``'s memory, or None
    when torch could not express it (negative or misaligned strides, a non-contiguous root)."""
    itemsize = array.itemsize
    if array.size == 0 or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    if not array.dtype.isnative or root.nbytes % itemsize:
        return None
    byte_offset = _array_address(array) - _array_address(root)
    if byte_offset < 0 or byte_offset % itemsize or any(s < 0 or s % itemsize for s in array.strides):
        return None
    end = byte_offset + sum((n - 1) * s for n, s in zip(array.shape, array.strides)) + itemsize
    if end > root.nbytes:
        return None
    return byte_offset // itemsize, tuple(array.shape), tuple(s // itemsize for s in array.strides)


def _is_parameter(tensor):
    try:
        from ember.nn.parameter import Parameter
    except ImportError:
        return type(tensor).__name__ == "Parameter"
    return isinstance(tensor, Parameter)
