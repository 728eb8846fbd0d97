"""Builders for the serialization tests: pickle opcodes by hand, zip archives (through
``zipfile`` or byte by byte), and a loader that runs in a memory-capped subprocess."""

import io
import json
import os
import struct
import subprocess
import sys
import zipfile
import zlib

P2 = b"\x80\x02"
STOP = b"."


# --- pickle opcodes ----------------------------------------------------------------------------
def glob(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def uni(text):
    data = text.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def num(n):
    if 0 <= n < 256:
        return b"K" + bytes([n])
    if -(2**31) <= n < 2**31:
        return b"J" + struct.pack("<i", n)
    data = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(data)]) + data


def tup(*parts):
    return b"(" + b"".join(parts) + b"t"


def pid(key="0", numel=6, storage="FloatStorage", location="cpu"):
    return tup(uni("storage"), glob("torch", storage), uni(key), uni(location), num(numel)) + b"Q"


def tensor(key="0", numel=6, offset=0, size=(6,), stride=(1,), storage="FloatStorage", requires_grad=False,
           persistent_id=None, location="cpu"):
    """REDUCE of torch._utils._rebuild_tensor_v2 as torch.save writes it."""
    return (glob("torch._utils", "_rebuild_tensor_v2") + b"("
            + (persistent_id if persistent_id is not None else pid(key, numel, storage, location))
            + num(offset) + tup(*map(num, size)) + tup(*map(num, stride)) + (b"\x88" if requires_grad else b"\x89")
            + glob("collections", "OrderedDict") + b")R" + b"tR")


def pickle_of(body):
    return P2 + body + STOP


FLOATS6 = struct.pack("<6f", 0, 1, 2, 3, 4, 5)


# --- zip archives -------------------------------------------------------------------------------
def checkpoint(pkl, records=None, prefix="archive", version=b"3\n", byteorder=b"little", extra=()):
    """A checkpoint zip (STORED members through zipfile). ``extra``: ``(name, bytes[, method])``."""
    records = {"0": FLOATS6} if records is None else records
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(f"{prefix}/data.pkl", pkl)
        if byteorder is not None:
            archive.writestr(f"{prefix}/byteorder", byteorder)
        for key, data in records.items():
            archive.writestr(f"{prefix}/data/{key}", data)
        if version is not None:
            archive.writestr(f"{prefix}/version", version)
        for name, data, *method in extra:
            archive.writestr(name, data, compress_type=method[0] if method else zipfile.ZIP_STORED)
    return out.getvalue()


def simple_checkpoint(**tensor_kwargs):
    return checkpoint(pickle_of(tensor(**tensor_kwargs)))


def local_header(name, data, flags=0, method=0, crc=None):
    name_bytes = name.encode()
    crc = zlib.crc32(data) if crc is None else crc
    return struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, flags, method, 0, 0x21, crc, len(data), len(data),
                       len(name_bytes), 0) + name_bytes


def raw_zip(entries, extra_central=()):
    """A zip written byte by byte. ``entries``: dicts with name, data and optional flags, method, crc.
    ``extra_central``: ``(name, data, header_offset)`` directory entries pointing anywhere."""
    out = bytearray()
    central = []
    for entry in entries:
        name, data = entry["name"], entry["data"]
        flags, method, crc = entry.get("flags", 0), entry.get("method", 0), entry.get("crc")
        central.append((name, data, len(out), flags, method, crc))
        out += local_header(name, data, flags, method, crc) + data
    central += [(name, data, offset, 0, 0, None) for name, data, offset in extra_central]
    directory_start = len(out)
    for name, data, offset, flags, method, crc in central:
        name_bytes = name.encode()
        crc = zlib.crc32(data) if crc is None else crc
        out += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, flags, method, 0, 0x21, crc, len(data), len(data),
                           len(name_bytes), 0, 0, 0, 0, 0, offset) + name_bytes
    out += struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(central), len(central), len(out) - directory_start,
                       directory_start, 0)
    return bytes(out)


def flip_byte_of(archive_bytes, payload):
    """``archive_bytes`` with the first byte of ``payload`` (a member's data) flipped."""
    index = archive_bytes.index(payload)
    corrupt = bytearray(archive_bytes)
    corrupt[index] ^= 0xFF
    return bytes(corrupt)


# --- the isolated loader --------------------------------------------------------------------------
_CHILD = r"""
import json, resource, signal, sys
import ember
from ember.serialization import CheckpointError

def vm_size():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

def on_alarm(signum, frame):
    raise TimeoutError("load took too long")

kind, headroom, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
loader = ember.load if kind == "pt" else ember.load_safetensors
ember.zeros(1)  # load the backend before measuring
limit = vm_size() + headroom
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
signal.signal(signal.SIGALRM, on_alarm)
results = {}
try:
    bytearray(4 * headroom)
    results["__canary__"] = "allocated"
except MemoryError:
    results["__canary__"] = "MemoryError"
for path in paths:
    signal.alarm(20)
    try:
        loader(path)
        outcome = "ok"
    except CheckpointError as e:
        outcome = "CheckpointError: " + str(e)
    except BaseException as e:
        outcome = type(e).__name__ + ": " + str(e)
    signal.alarm(0)
    results[path] = outcome
print(json.dumps(results))
"""

HEADROOM = 48 * 2**20  # the loader may allocate this much beyond its state after import


def load_isolated(files, folder, kind="pt"):
    """Load each ``{name: bytes}`` in one subprocess whose address space is capped at its
    size after import plus HEADROOM; returns ``{name: outcome}`` and ``'__canary__'``, which
    is ``'MemoryError'`` when the cap works."""
    paths = {}
    for name, data in files.items():
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data)
        paths[path] = name
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _CHILD, kind, str(HEADROOM), *paths], capture_output=True,
                          text=True, timeout=120, env=env, cwd=folder)
    assert done.returncode == 0, done.stderr
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    return {paths.get(key, key): value for key, value in raw.items()}
