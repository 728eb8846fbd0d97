"""Atomic file replacement: a save either fully happens or leaves the old file untouched.

PyTorch counterpart: none; ``torch.save(obj, path)`` writes the target in place (v2.13),
so a crash midway leaves a truncated checkpoint. ember follows the usual recipe:

1. create a temporary file next to the target (same folder, so same filesystem);
2. write, flush and ``fsync`` it;
3. ``os.replace`` it over the target (atomic on POSIX and Windows);
4. ``fsync`` the folder so the rename itself survives a power cut (POSIX).

On any error the temporary file is removed and the target is as it was.
"""

import contextlib
import errno
import os
import secrets
from pathlib import Path


@contextlib.contextmanager
def atomic_write(path):
    """Yields a binary file; on a clean exit it replaces ``path``, on an error it vanishes.

    >>> with atomic_write("model.pt") as f:   # doctest: +SKIP
    ...     f.write(b"...")
    """
    target = Path(os.fspath(path))
    folder = target.parent
    fd, temp = _create_temp(folder, target.name)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_folder(folder)


def _create_temp(folder, name):
    # os.open with O_EXCL and mode 0o666 (not mkstemp's 0o600): the kernel applies the
    # umask, so the finished file gets the same permissions a plain open() would give.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        temp = folder / f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(temp, flags, 0o666), temp
        except FileExistsError:
            continue
        except FileNotFoundError:
            raise FileNotFoundError(errno.ENOENT, f"cannot save '{folder / name}': the folder does not exist",
                                    str(folder)) from None
        except OSError as e:
            if e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            raise PermissionError(e.errno, f"cannot save '{folder / name}': the folder '{folder}' is not "
                                  f"writable ({e.strerror})", str(folder)) from None
    raise FileExistsError(f"cannot create a temporary file in '{folder}'")


def _fsync_folder(folder):
    if os.name != "posix":
        return  # Windows cannot open a folder for fsync; os.replace is already durable there
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
