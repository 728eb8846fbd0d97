"""``ember.save`` and ``ember.load``: checkpoints in PyTorch's zip format.

PyTorch counterpart: torch/serialization.py (``save``, ``load``, ``_save``, ``_load``) (v2.13).

A checkpoint is a zip archive with one top folder holding ``data.pkl`` (the object tree,
pickle protocol 2), ``data/<key>`` (the raw little-endian bytes of each storage),
``byteorder`` and ``version``. ``torch.load(f, weights_only=True)`` reads ember's files
and ``ember.load`` reads ``torch.save``'s.

Any picklable object saves, as with ``torch.save`` (objects.py); what lies outside the
weights-only subset loads only with ``weights_only=False``, the caller's explicit trust
(trusted_load.py), and the default load refuses it with torch's guidance.
ember leaves out: ``pickle_module``, ``mmap``, the legacy tar format, TorchScript archives
and complex storages (``add_safe_globals`` is safe_globals.py, quantized storages
quantized.py). bfloat16 storages load as
``ember.bfloat16`` with the same bits (see NOTE [ bfloat16 checkpoints ] in torch_globals.py).

NOTE [ Stricter than torch.load ]
torch 2.13 still loads files with a wrong CRC-32, DEFLATE members, duplicate members and
one storage key declared with two dtypes. ember refuses all of them, and decides every
size before allocating: each ``data/<key>`` must hold exactly ``numel * itemsize``
bytes, each view must lie inside its storage, and members may neither overlap nor be
compressed, so tensor memory is bounded by the file's real content.
The Python objects data.pkl describes (dicts, lists, strings) cost a bounded multiple of
its size, as with any unpickler: a one-byte EMPTY_LIST opcode makes a ~56-byte list.
"""

import io
import os
import re
import zipfile

import numpy as np

from ember.device import device as ember_device
from ember.dtypes import BFLOAT16_NP
from ember.serialization.atomic import atomic_write
from ember.serialization.errors import CheckpointError, describe
from ember.serialization.pickler import CheckpointPickler
from ember.serialization.torch_globals import TORCH_GLOBALS, LoadedStorage, StorageType
from ember.serialization.unpickler import WeightsOnlyUnpickler
from ember.serialization.zip_reader import ZipCheckpoint
from ember.storage import UntypedStorage

FORMAT_VERSION = 3  # what torch.save writes in the ``version`` record
_STORAGE_KEY = re.compile(r"(0|[1-9][0-9]{0,18})\Z")
# Records torch.save writes besides data.pkl and data/<key>; their contents are not needed.
_KNOWN_RECORDS = {"data.pkl", "version", ".data/version", "byteorder", ".format_version", ".storage_alignment",
                  ".data/serialization_id"}


# --- save -----------------------------------------------------------------------------------
def save(obj, f):
    """Save ``obj`` to ``f`` (a path or a writable binary file) as a PyTorch zip checkpoint.

    A path is written atomically: a temporary file in the same folder replaces it only once
    complete, so an interrupted save leaves the previous checkpoint intact.

    >>> ember.save({"w": ember.ones(2, 3)}, "w.pt")   # doctest: +SKIP
    >>> torch.load("w.pt", weights_only=True)          # doctest: +SKIP
    {'w': tensor([[1., 1., 1.], [1., 1., 1.]])}
    """
    pickler = CheckpointPickler()
    data_pkl = pickler.dump(obj)
    storages = list(pickler.storages.values())
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        prefix = _archive_name(stem)
        with atomic_write(f) as out:
            _write_archive(out, prefix, data_pkl, storages)
    else:
        _write_archive(f, "archive", data_pkl, storages)


def _archive_name(stem):
    """The top folder for a file: its stem, as torch names it, when the stem is a plain
    printable ASCII name that ember's own reader accepts; else torch's fallback 'archive'."""
    plain = stem.isascii() and stem.isprintable() and not set(stem) & set("/\\:") and stem not in ("", ".", "..")
    return stem if plain else "archive"


def _write_archive(out, prefix, data_pkl, storages):
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as archive:
        _write_record(archive, f"{prefix}/data.pkl", data_pkl)
        _write_record(archive, f"{prefix}/byteorder", b"little")
        for storage in storages:
            _write_record(archive, f"{prefix}/data/{storage.key}", storage.payload())
        _write_record(archive, f"{prefix}/version", f"{FORMAT_VERSION}\n".encode())


def _write_record(archive, name, payload):
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # fixed date: same object, same bytes
    info.compress_type = zipfile.ZIP_STORED
    view = memoryview(payload).cast("B")
    info.file_size = view.nbytes
    with archive.open(info, "w") as member:
        member.write(view)


# --- load -----------------------------------------------------------------------------------
def load(f, map_location=None, weights_only=True):
    """Load a checkpoint written by ``ember.save`` or ``torch.save``, running no code from it.

    Args:
        f: a path or a readable binary file.
        map_location: where storages go: ``None`` (where they were saved), a device or
            device string, a dict ``{saved location: device}``, or a callable
            ``(storage, location) -> device | storage | None``: returning the CPU
            ``UntypedStorage`` it was given keeps the data on the CPU (torch's
            ``lambda storage, loc: storage``), ``None`` keeps the saved location.
        weights_only: True (or None, torch's default): only tensors, containers, numbers
            and strings load, and nothing in the file runs. False: the caller trusts the
            file; any pickled object loads (a whole module saved with ``ember.save``), and
            loading can run code the file names, as with ``torch.load(weights_only=False)``.

    Raises:
        CheckpointError: the file is malformed, truncated, corrupt or uses anything
            outside the weights-only subset, or declares a tensor NumPy cannot address
            or a stride-0 view of more than 2**26 elements beyond its storage (unlike
            torch; ``EMBER_LOAD_MAX_VIEW_ELEMENTS=N`` allows more; NOTE [ What a
            checkpoint may declare ] in ember/serialization/limits.py).
    """
    trusted = weights_only is False  # None: torch's default, which means True
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return _load(file, map_location, trusted)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load(f, map_location, trusted)


def _load(fileobj, map_location, trusted=False):
    archive = ZipCheckpoint(fileobj)
    _check_records(archive)
    data_pkl = archive.read("data.pkl")
    loader = _StorageLoader(archive, map_location, _byteorder(archive))
    if trusted:  # the caller's explicit choice (trusted_load.py): any object, any code
        from ember.serialization.trusted_load import TrustingUnpickler

        return TrustingUnpickler(data_pkl, TORCH_GLOBALS, loader.persistent_load).load()
    try:
        return WeightsOnlyUnpickler(data_pkl, TORCH_GLOBALS, loader.persistent_load).load()
    except CheckpointError as error:
        if "is not allowed" not in str(error):
            raise
        from ember.serialization.trusted_load import WEIGHTS_ONLY_GUIDANCE

        raise CheckpointError(WEIGHTS_ONLY_GUIDANCE + "Weights-only unpickler error: "
                              + str(error)) from None


def _check_records(archive):
    names = archive.names()
    for name in names:
        if name not in _KNOWN_RECORDS and not (name.startswith("data/") and _STORAGE_KEY.match(name[5:])):
            raise CheckpointError(f"unexpected record '{name}' in the checkpoint")
    if "data.pkl" not in names:
        raise CheckpointError("the checkpoint has no data.pkl record")
    version_name = ".data/version" if ".data/version" in names else "version"
    if version_name not in names:
        raise CheckpointError("the checkpoint has no version record")
    text = _small_record(archive, version_name)
    if not re.fullmatch(r"[0-9]{1,4}\n?", text) or not 1 <= int(text) <= FORMAT_VERSION:
        raise CheckpointError(f"unsupported checkpoint version {describe(text.strip())}: ember reads versions 1 to "
                              f"{FORMAT_VERSION}")


def _byteorder(archive):
    if "byteorder" not in archive.names():
        return "<"  # files from before the record existed are little-endian
    text = _small_record(archive, "byteorder")
    if text not in ("little", "big"):
        raise CheckpointError(f"unknown byteorder {describe(text)} (expected 'little' or 'big')")
    return "<" if text == "little" else ">"


def _small_record(archive, name):
    if archive.size(name) > 64:
        raise CheckpointError(f"record '{name}' is {archive.size(name)} bytes; at most 64 expected")
    try:
        return archive.read(name).decode("ascii")
    except UnicodeDecodeError:
        raise CheckpointError(f"record '{name}' is not ASCII") from None


class _StorageLoader:
    """``persistent_load`` for BINPERSID: checks each storage id and loads its record once."""

    def __init__(self, archive, map_location, byteorder):
        self._archive = archive
        self._map_location = map_location
        self._byteorder = byteorder
        self._storages = {}  # key -> LoadedStorage

    def persistent_load(self, pid):
        # Types first: an ember tensor compared with a string would not give a bool.
        if (type(pid) is not tuple or len(pid) != 5 or type(pid[0]) is not str
                or pid[0] != "storage"):
            raise CheckpointError(f"bad persistent id {describe(pid)}: expected "
                                  "('storage', type, key, location, numel)")
        _, storage_type, key, location, numel = pid
        if type(storage_type) is not StorageType:
            raise CheckpointError(f"persistent id names {describe(storage_type)}, "
                                  "not a torch storage class")
        if storage_type.refusal:
            raise CheckpointError(storage_type.refusal)
        if type(key) is not str or not _STORAGE_KEY.match(key):
            raise CheckpointError(f"bad storage key {describe(key)}: "
                                  "expected a decimal string")
        if type(location) is not str or len(location) > 64:
            raise CheckpointError(f"bad storage location {describe(location)}")
        if type(numel) is not int or numel < 0:
            raise CheckpointError(f"bad storage size {describe(numel)}")
        loaded = self._storages.get(key)
        if loaded is None:
            loaded = self._load_storage(storage_type, key, location, numel)
            self._storages[key] = loaded
        elif loaded.storage_type is not storage_type or loaded.numel != numel:
            raise CheckpointError(f"storage {key} is declared twice with different types "
                                  f"or sizes: {loaded.storage_type.name}[{loaded.numel}] "
                                  f"and {storage_type.name}[{numel}]")
        return loaded

    def _load_storage(self, storage_type, key, location, numel):
        name = f"data/{key}"
        if name not in self._archive.members:
            raise CheckpointError(f"storage {key} has no record '{name}'")
        file_dtype = storage_type.file_dtype.newbyteorder(self._byteorder)
        expected = numel * file_dtype.itemsize
        if self._archive.size(name) != expected:
            raise CheckpointError(f"record '{name}' holds {self._archive.size(name)} bytes but "
                                  f"storage {key} declares {numel} x {storage_type.name} = "
                                  f"{expected} bytes")
        array = _typed_array(self._archive.read(name), file_dtype, storage_type, key)
        device = self._device_for(location, array)
        if device.type != "cpu":
            array = device.backend.from_host(array, device.index)
        return LoadedStorage(key, storage_type, array, device, numel, self._byteorder)

    def _device_for(self, location, array):
        target = self._map_location
        if target is None:
            target = location
        elif isinstance(target, dict):
            target = target.get(location, location)
        elif callable(target):
            result = target(UntypedStorage(array, ember_device("cpu")), location)
            if result is None:
                target = location
            else:
                target = "cpu" if isinstance(result, UntypedStorage) else result
        elif not isinstance(target, (str, ember_device)):
            raise TypeError(f"map_location must be None, a device, a str, a dict or a "
                            f"callable, got {type(target).__name__}")
        return _checked_device(target)


def _checked_device(target):
    try:
        device = ember_device(target)
    except (RuntimeError, TypeError) as e:
        raise CheckpointError(f"bad storage location {describe(target)}: {e}") from None
    if device.type == "cpu":
        return device
    try:
        available = device.backend.is_available()
    except Exception as e:  # no backend plugin serves this device type
        raise CheckpointError(f"cannot load a storage on '{device}': {e}; pass map_location='cpu'") from None
    if not available:
        raise CheckpointError(f"cannot load a storage on '{device}': the device is not available; "
                              "pass map_location='cpu'")
    return device


def _typed_array(buffer, file_dtype, storage_type, key):
    """The record's bytes as a native-order array of the ember dtype (bfloat16: its bits
    read as uint16, then viewed as ml_dtypes' bfloat16)."""
    array = np.frombuffer(buffer, dtype=file_dtype)
    if not file_dtype.isnative:
        array = array.byteswap(inplace=True).view(file_dtype.newbyteorder("="))
    if storage_type.name == "BFloat16Storage":
        return array.view(BFLOAT16_NP)
    if storage_type.name == "BoolStorage":
        if array.size and array.max() > 1:
            raise CheckpointError(f"bool storage {key} holds bytes other than 0 and 1")
        return array.view(np.bool_)
    return array
