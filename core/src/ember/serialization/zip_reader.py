"""A strict reader for the zip container of ``torch.save`` checkpoints.

PyTorch counterpart: caffe2/serialize/inline_container.cc (``PyTorchStreamReader``) (v2.13).

``zipfile`` parses the central directory; everything it would otherwise trust is checked
here before a byte of payload is read. Each member must be STORED (no compression, so
no zip bomb), unencrypted, uniquely and plainly named under one top folder, and must
lie inside the file without overlapping another member (overlapping members would let
a small file declare the same bytes many times). Payloads are read straight into a
buffer of the checked size and their CRC-32 is verified.
"""

import io
import re
import struct
import zipfile
import zlib

from ember.serialization.errors import CheckpointError

_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # signature .. name length, extra length: 30 bytes
_LOCAL_SIGNATURE = b"PK\x03\x04"
# Flag bits ember accepts: 0x8 (sizes in a data descriptor) and 0x800 (UTF-8 names).
_ALLOWED_FLAGS = 0x8 | 0x800
# Plain relative names: no absolute paths, backslashes, drive letters, control characters
# or empty parts ('.' and '..' parts are refused separately).
_PLAIN_NAME = re.compile(r"[^/\\:\x00-\x1f\x7f]+(/[^/\\:\x00-\x1f\x7f]+)*\Z")
_LEGACY_PICKLE_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"


class _Member:
    __slots__ = ("name", "data_offset", "size", "crc")

    def __init__(self, name, data_offset, size, crc):
        self.name = name
        self.data_offset = data_offset
        self.size = size
        self.crc = crc


class ZipCheckpoint:
    """The members of a validated checkpoint archive, by name relative to its top folder.

    Args:
        fileobj: a seekable binary file positioned anywhere.
    """

    def __init__(self, fileobj):
        self._file = fileobj
        self._file_size = fileobj.seek(0, io.SEEK_END)
        _refuse_legacy_formats(fileobj)
        try:
            fileobj.seek(0)
            with zipfile.ZipFile(fileobj) as archive:
                infos = archive.infolist()
                directory_start = archive.start_dir
        except zipfile.BadZipFile as e:
            raise CheckpointError(f"not a zip checkpoint: {e}") from None
        except (OSError, ValueError, EOFError, RuntimeError, NotImplementedError, struct.error) as e:
            raise CheckpointError(f"corrupt zip directory: {type(e).__name__}: {e}") from None
        self.prefix, self.members = self._validate(infos, directory_start)

    def names(self):
        return list(self.members)

    def size(self, name):
        return self.members[name].size

    def read(self, name):
        """The payload of ``name`` as a writable ``bytearray``, CRC-checked."""
        member = self.members[name]
        buffer = bytearray(member.size)
        self._file.seek(member.data_offset)
        got = _read_into(self._file, buffer)
        if got != member.size:
            raise CheckpointError(f"member '{name}' is truncated: expected {member.size} bytes, found {got}")
        if zlib.crc32(buffer) != member.crc:
            raise CheckpointError(f"member '{name}' is corrupt: its CRC-32 does not match the zip directory")
        return buffer

    # --- validation ---------------------------------------------------------------------
    def _validate(self, infos, directory_start):
        if not infos:
            raise CheckpointError("the zip archive has no members")
        if any(info.orig_filename.endswith("/constants.pkl") for info in infos):
            raise CheckpointError("this is a TorchScript archive (torch.jit.save), not a torch.save checkpoint")
        spans = []
        members = {}
        prefixes = set()
        for info in infos:
            name = info.orig_filename
            self._check_entry(info, name)
            prefix, _, rest = name.partition("/")
            prefixes.add(prefix)
            if rest in members:
                raise CheckpointError(f"duplicate zip member '{name}'")
            data_offset = self._check_local_header(info, name)
            end = data_offset + info.file_size
            if end > directory_start:
                raise CheckpointError(f"member '{name}' extends past the end of its data "
                                      f"({end} > {directory_start} bytes)")
            spans.append((info.header_offset, end, name))
            members[rest] = _Member(rest, data_offset, info.file_size, info.CRC)
        if len(prefixes) != 1:
            raise CheckpointError(f"a checkpoint has exactly one top folder, found {sorted(prefixes)}")
        spans.sort()
        if spans[0][0] != 0:  # data hidden in front of the archive (a polyglot file)
            raise CheckpointError(f"the zip archive has {spans[0][0]} unexplained bytes before its first member")
        for (_, end, name), (start, _, next_name) in zip(spans, spans[1:]):
            if start < end:
                raise CheckpointError(f"zip members '{name}' and '{next_name}' overlap")
        return prefixes.pop(), members

    def _check_entry(self, info, name):
        if not _PLAIN_NAME.match(name) or any(part in (".", "..") for part in name.split("/")):
            raise CheckpointError(f"unsafe zip member name {name!r}: only plain relative names are accepted")
        if "/" not in name:
            raise CheckpointError(f"zip member '{name}' is not inside a top folder")
        if info.flag_bits & 0x1:
            raise CheckpointError(f"zip member '{name}' is encrypted")
        if info.flag_bits & ~_ALLOWED_FLAGS:
            raise CheckpointError(f"zip member '{name}' has unsupported flags 0x{info.flag_bits:x}")
        if info.compress_type != zipfile.ZIP_STORED:
            raise CheckpointError(f"zip member '{name}' is compressed (method {info.compress_type}); only stored "
                                  "members are accepted, since compressed ones can inflate far beyond the file")
        if info.compress_size != info.file_size:
            raise CheckpointError(f"stored zip member '{name}' declares {info.compress_size} stored bytes "
                                  f"but {info.file_size} uncompressed bytes")

    def _check_local_header(self, info, name):
        """The offset of the member's payload, after checking its local header."""
        if not 0 <= info.header_offset <= self._file_size - _LOCAL_HEADER.size:
            raise CheckpointError(f"zip member '{name}' has its header outside the file")
        self._file.seek(info.header_offset)
        raw = self._file.read(_LOCAL_HEADER.size)
        if len(raw) != _LOCAL_HEADER.size:
            raise CheckpointError(f"zip member '{name}' has a truncated header")
        fields = _LOCAL_HEADER.unpack(raw)
        signature, method, name_length, extra_length = fields[0], fields[3], fields[9], fields[10]
        if signature != _LOCAL_SIGNATURE:
            raise CheckpointError(f"zip member '{name}' has a bad local header signature")
        if method != zipfile.ZIP_STORED:
            raise CheckpointError(f"zip member '{name}' is compressed in its local header (method {method})")
        local_name = self._file.read(name_length)
        if local_name != name.encode("utf-8" if info.flag_bits & 0x800 else "cp437"):
            raise CheckpointError(f"zip member '{name}' has a different name in its local header")
        return info.header_offset + _LOCAL_HEADER.size + name_length + extra_length


def _refuse_legacy_formats(fileobj):
    fileobj.seek(0)
    head = fileobj.read(512)
    if not head:
        raise CheckpointError("not a checkpoint: the file is empty")
    if head.startswith(_LEGACY_PICKLE_MAGIC) or head[257:262] == b"ustar":
        raise CheckpointError("this is a legacy (pre-1.6, tar or raw pickle) torch checkpoint, which ember "
                              "refuses; re-save it with a current torch.save")


def _read_into(fileobj, buffer):
    readinto = getattr(fileobj, "readinto", None)
    if readinto is None:
        data = fileobj.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)
    view = memoryview(buffer)
    total = 0
    while total < len(buffer):
        got = readinto(view[total:])
        if not got:
            break
        total += got
    return total
