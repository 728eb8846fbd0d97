"""Atomic file replacement: a save either fully happens or leaves the old file untouched.

PyTorch counterpart: none; ``torch.save(obj, path)`` writes the target in place (v2.13),
so a crash midway leaves a truncated checkpoint. ember follows the usual recipe:

1. create a temporary file next to the target (same folder, so same filesystem);
2. write, flush and ``fsync`` it;
3. give it the target's permission bits, if the target exists (a 0600 file stays 0600);
4. ``os.replace`` it over the target (atomic on POSIX and Windows);
5. ``fsync`` the folder so the rename itself survives a power cut (POSIX).

# NOTE [ Temporary files of interrupted saves ]
# On an exception (Ctrl-C included) the temporary file is removed and the target is as
# it was; so it is on SIGTERM during a save from the main thread (the handler is
# installed for the save only, and the signal is re-raised afterwards). SIGKILL cannot
# be caught: its temporary file stays, and the next save to the same target removes
# it. Temporary files are named ``.<target>.<pid>-<random>.tmp``; a save removes those
# of its target whose process no longer runs on this machine.
#
# A symlink target is written through, as torch's in-place write does: the file the
# link points to is replaced, and the link stays a link.
"""

import contextlib
import errno
import os
import re
import secrets
import signal
import stat
import threading
from pathlib import Path


@contextlib.contextmanager
def atomic_write(path, mode="wb"):
    """Yields a file (binary, or text with ``mode="w"``); on a clean exit it replaces
    ``path``, on an error it vanishes.

    >>> with atomic_write("model.pt") as f:   # doctest: +SKIP
    ...     f.write(b"...")
    """
    target = Path(os.path.realpath(os.fspath(path)))  # through symlinks, as torch writes
    folder = target.parent
    remove_stale_temps(folder, target.name)
    fd, temp = _create_temp(folder, target.name)
    try:
        with _terminate_as_exception():
            with os.fdopen(fd, mode) as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            _keep_mode(temp, target)
            os.replace(temp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, _Terminated):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)  # die of the signal, as without the handler
        raise
    _fsync_folder(folder)


def _keep_mode(temp, target):
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return  # a new file: the umask decided its mode at creation
    os.chmod(temp, mode)


class _Terminated(BaseException):
    """SIGTERM arrived during a save."""


@contextlib.contextmanager
def _terminate_as_exception():
    """SIGTERM raises ``_Terminated`` inside the block (main thread, default handler only)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def terminated(signum, frame):
        raise _Terminated()

    signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def remove_stale_temps(folder, name):
    """Remove the temporary files of saves to ``folder/name`` whose process is gone
    (NOTE [ Temporary files of interrupted saves ])."""
    pattern = re.compile(rf"\.{re.escape(name)}\.(\d+)-[0-9a-f]+\.tmp")
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        match = pattern.fullmatch(entry)
        if match and not _process_runs(int(match.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, entry))


def _process_runs(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # another user's process, or we cannot tell: keep its file
    return True


def _create_temp(folder, name):
    # os.open with O_EXCL and mode 0o666 (not mkstemp's 0o600): the kernel applies the
    # umask, so the finished file gets the same permissions a plain open() would give.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        temp = folder / f".{name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
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
