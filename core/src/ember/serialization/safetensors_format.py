"""``ember.save_safetensors`` / ``ember.load_safetensors``: the safetensors format.

PyTorch counterpart: none in torch; the format is huggingface/safetensors'
(``safetensors/src/tensor.rs``, read by ``safetensors.torch.load_file``). ember reads and
writes the raw bytes itself, so it needs no extra package at run time; the
``safetensors`` package is the oracle in the tests.

Layout: an 8-byte little-endian header length N, N bytes of JSON, then the data.
The JSON maps each tensor name to ``{"dtype", "shape", "data_offsets": [begin, end]}``
(offsets relative to the data) and may hold ``"__metadata__"`` (str -> str).

The reader enforces every rule of the reference implementation before allocating:
N at most 100,000,000 and inside the file, UTF-8 JSON object, known dtypes, no repeated
names, tensors that tile the data without gap or overlap, each span equal to
``prod(shape) * itemsize``, and the data ending exactly at the end of the file. BF16
loads as ``ember.bfloat16`` with the same bits (see NOTE [ bfloat16 checkpoints ] in
torch_globals.py).
"""

import io
import json
import os
import struct

import numpy as np

from ember import dtypes
from ember.device import device as ember_device
from ember.serialization.atomic import atomic_write
from ember.serialization.errors import CheckpointError, describe
from ember.serialization.limits import check_addressable
from ember.tensor import Tensor, _make_tensor

MAX_HEADER_SIZE = 100_000_000
_TENSOR_FIELDS = {"dtype", "shape", "data_offsets"}
# safetensors dtype name -> (stored NumPy dtype, ember dtype)
_DTYPES = {
    "BOOL": ("<u1", dtypes.bool_), "U8": ("<u1", dtypes.uint8), "I8": ("<i1", dtypes.int8),
    "I16": ("<i2", dtypes.int16), "I32": ("<i4", dtypes.int32), "I64": ("<i8", dtypes.int64),
    "F16": ("<f2", dtypes.float16), "F32": ("<f4", dtypes.float32), "F64": ("<f8", dtypes.float64),
    "BF16": ("<u2", dtypes.bfloat16),  # the bits as uint16: ml_dtypes' bfloat16 has no byte order
    "U16": ("<u2", dtypes.uint16), "U32": ("<u4", dtypes.uint32), "U64": ("<u8", dtypes.uint64),
    "C64": ("<c8", dtypes.complex64),
    # float8: one byte, its bits (NOTE [ Barebones dtypes ] in ember/dtypes.py)
    "F8_E4M3": ("<u1", dtypes.float8_e4m3fn), "F8_E5M2": ("<u1", dtypes.float8_e5m2),
    "F8_E4M3FNUZ": ("<u1", dtypes.float8_e4m3fnuz), "F8_E5M2FNUZ": ("<u1", dtypes.float8_e5m2fnuz),
    "F8_E8M0": ("<u1", dtypes.float8_e8m0fnu),
}
_UNSUPPORTED = {"F4", "F6_E2M3", "F6_E3M2", "C128"}
_NAMES = {ember: name for name, (_, ember) in _DTYPES.items()}


# --- write ----------------------------------------------------------------------------------
def save_safetensors(tensors, filename, metadata=None):
    """Write ``{name: tensor}`` to ``filename`` (atomically) in the safetensors format.

    >>> ember.save_safetensors({"w": ember.ones(2)}, "w.safetensors")   # doctest: +SKIP
    """
    _check_save_arguments(tensors, metadata)
    # Larger items first, then by name (safetensors' own order): every offset stays aligned.
    names = sorted(tensors, key=lambda name: (-tensors[name].element_size(), name))
    header = {"__metadata__": dict(metadata)} if metadata else {}
    payloads = []
    offset = 0
    for name in names:
        tensor = tensors[name]
        payload = _little_endian_bytes(tensor)
        header[name] = {"dtype": _NAMES[tensor.dtype], "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + payload.nbytes]}
        payloads.append(payload)
        offset += payload.nbytes
    header_bytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    header_bytes += b" " * (-len(header_bytes) % 8)
    with atomic_write(filename) as out:
        out.write(struct.pack("<Q", len(header_bytes)))
        out.write(header_bytes)
        for payload in payloads:
            out.write(memoryview(payload))


def _check_save_arguments(tensors, metadata):
    if not isinstance(tensors, dict):
        raise TypeError(f"save_safetensors expects a dict of tensors, got {type(tensors).__name__}")
    for name, tensor in tensors.items():
        if type(name) is not str or name == "__metadata__":
            raise ValueError(f"bad tensor name {name!r}: names are strings other than '__metadata__'")
        if not isinstance(tensor, Tensor):
            raise TypeError(f"save_safetensors: '{name}' is a {type(tensor).__name__}, not a tensor")
    if metadata is not None and not (isinstance(metadata, dict)
                                     and all(type(k) is str and type(v) is str for k, v in metadata.items())):
        raise TypeError("safetensors metadata must be a dict of str to str")


def _little_endian_bytes(tensor):
    host = np.array(tensor.detach().cpu()._host(), order="C")  # np.array keeps 0-d as 0-d
    if dtypes.is_ml_dtype(host.dtype):
        host = host.view(f"u{host.itemsize}")  # ml_dtypes' bfloat16 and float8 have no byte order: their bits
    return host.astype(host.dtype.newbyteorder("<"), copy=False).reshape(-1).view(np.uint8)


# --- read -----------------------------------------------------------------------------------
def load_safetensors(f, device="cpu"):
    """Read a safetensors file (a path, bytes, or a binary file) into ``{name: tensor}``.

    Raises:
        CheckpointError: the file breaks any rule of the format.
    """
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return _load(file, ember_device(device))
    if isinstance(f, (bytes, bytearray, memoryview)):
        return _load(io.BytesIO(f), ember_device(device))
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load(f, ember_device(device))


def _load(fileobj, device):
    file_size = fileobj.seek(0, io.SEEK_END)
    fileobj.seek(0)
    entries, data_start = _read_header(fileobj, file_size)
    tensors = {}
    for name, (file_dtype, dtype, shape, begin, end) in entries.items():
        buffer = bytearray(end - begin)
        fileobj.seek(data_start + begin)
        if fileobj.readinto(buffer) != len(buffer):
            raise CheckpointError(f"safetensors data of '{name}' is truncated")
        array = np.frombuffer(buffer, dtype=file_dtype)
        array = array if array.dtype.isnative else array.byteswap(inplace=True).view(array.dtype.newbyteorder("="))
        if dtypes.is_ml_dtype(dtype.np):  # bfloat16, float8: read as bits
            array = array.view(dtype.np)
        elif dtype is dtypes.bool_:
            if array.size and array.max() > 1:
                raise CheckpointError(f"bool tensor '{name}' holds bytes other than 0 and 1")
            array = array.view(np.bool_)
        array = array.reshape(shape)
        if device.type != "cpu":
            array = device.backend.from_host(array, device.index)
        tensors[name] = _make_tensor(array, device)
    return tensors


def _read_header(fileobj, file_size):
    """``({name: (file dtype, ember dtype, shape, begin, end)}, data start)``, all rules checked."""
    if file_size < 8:
        raise CheckpointError(f"not a safetensors file: {file_size} bytes, shorter than the 8-byte header size")
    (header_size,) = struct.unpack("<Q", fileobj.read(8))
    if header_size > MAX_HEADER_SIZE:
        raise CheckpointError(f"safetensors header of {header_size} bytes exceeds the {MAX_HEADER_SIZE} limit")
    if 8 + header_size > file_size:
        raise CheckpointError(f"safetensors header of {header_size} bytes runs past the end of the "
                              f"{file_size}-byte file")
    raw = fileobj.read(header_size)
    header = _parse_json(raw)
    entries = {name: _check_entry(name, info) for name, info in header.items() if name != "__metadata__"}
    _check_metadata(header.get("__metadata__"))
    data_size = _check_tiling(entries)
    if 8 + header_size + data_size != file_size:
        raise CheckpointError(f"safetensors data ends at byte {8 + header_size + data_size} but the file has "
                              f"{file_size} bytes")
    return entries, 8 + header_size


def _parse_json(raw):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CheckpointError("safetensors header is not valid UTF-8") from None
    if not text.startswith("{"):
        raise CheckpointError("safetensors header does not start with '{'")
    try:
        header = json.loads(text, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError) as e:
        raise CheckpointError(f"safetensors header is not valid JSON: {str(e)[:200]}") from None
    if type(header) is not dict:
        raise CheckpointError("safetensors header is not a JSON object")
    return header


def _no_duplicates(pairs):
    result = {}
    for key, value in pairs:
        if key in result:
            raise CheckpointError(f"safetensors header repeats the name {describe(key)}")
        result[key] = value
    return result


def _check_entry(name, info):
    if type(info) is not dict or set(info) != _TENSOR_FIELDS:
        raise CheckpointError(f"safetensors entry {describe(name)} must have exactly the fields dtype, shape and "
                              "data_offsets")
    dtype_name, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if dtype_name in _UNSUPPORTED:
        raise CheckpointError(f"safetensors dtype {dtype_name} of {describe(name)} has no ember dtype")
    if dtype_name not in _DTYPES:
        raise CheckpointError(f"unknown safetensors dtype {describe(dtype_name)} for {describe(name)}")
    if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape) or len(shape) > 64:
        raise CheckpointError(f"bad shape {describe(shape)} for {describe(name)}")
    if (type(offsets) is not list or len(offsets) != 2
            or not all(type(n) is int and 0 <= n < 2**64 for n in offsets)):
        raise CheckpointError(f"bad data_offsets {describe(offsets)} for {describe(name)}")
    begin, end = offsets
    if end < begin:
        raise CheckpointError(f"data_offsets of {describe(name)} end before they begin: {offsets}")
    file_dtype, dtype = _DTYPES[dtype_name]
    check_addressable(shape, np.dtype(file_dtype).itemsize, describe(name))  # NOTE [ What a checkpoint may declare ]
    nbytes = np.dtype(file_dtype).itemsize
    for n in shape:
        nbytes *= n
        if nbytes >= 2**64:
            raise CheckpointError(f"shape {shape} of {describe(name)} overflows")
    if nbytes != end - begin:
        raise CheckpointError(f"{describe(name)} has shape {shape} of {dtype_name} ({nbytes} bytes) but its "
                              f"data_offsets span {end - begin} bytes")
    return file_dtype, dtype, tuple(shape), begin, end


def _check_metadata(metadata):
    if metadata is None:
        return
    if type(metadata) is not dict or not all(type(v) is str for v in metadata.values()):
        raise CheckpointError("safetensors __metadata__ must map strings to strings")


def _check_tiling(entries):
    """The data size, after checking the tensors cover it with no gap and no overlap."""
    position = 0
    for name, (_, _, _, begin, end) in sorted(entries.items(), key=lambda item: (item[1][3], item[1][4])):
        if begin != position:
            kind = "gap" if begin > position else "overlap"
            raise CheckpointError(f"safetensors data has a {kind} before {describe(name)} (offset {begin}, "
                                  f"expected {position})")
        position = end
    return position
