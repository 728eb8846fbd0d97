"""Carry an exception from a worker process to the main process and raise it there.

PyTorch counterpart: ``ExceptionWrapper`` in torch/_utils.py (v2.13).

Tracebacks do not pickle, so the worker formats its traceback into text; the main
process raises the same exception type with that text as the message, so
``except ValueError`` still catches an error raised in ``__getitem__``. ember also
names the sample keys of the batch that failed.
"""

import pickle
import sys
import traceback


class ExceptionWrapper:
    """The type and formatted traceback of the exception being handled."""

    def __init__(self, exc_info=None, where="in background", keys=None):
        exc_type, exc_value, exc_traceback = exc_info or sys.exc_info()
        self.exc_type_name = exc_type.__name__
        # A class defined in a function cannot be pickled to the main process: raise a
        # RuntimeError there instead (the message still names the original type).
        self.exc_type = exc_type if _picklable(exc_type) else RuntimeError
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc_value, exc_traceback))
        self.where = where
        self.keys = keys

    def reraise(self):
        """Raise ``exc_type`` with a message naming where it happened and the original
        traceback."""
        message = f"Caught {self.exc_type_name} {self.where}."
        if self.keys is not None:
            message += f"\nSample keys of the failing batch: {_short(self.keys)}"
        message += f"\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            # KeyError would show repr(message), newlines escaped
            message = _KeyErrorMessage(message)
        try:
            exception = self.exc_type(message)
        except Exception:  # the type needs other constructor arguments
            raise RuntimeError(message) from None
        try:
            raise exception
        finally:
            # Break the cycle exception -> traceback -> this frame -> exception, so the
            # DataLoader iterator in the traceback is freed (and its workers shut down)
            # as soon as the caller drops the exception, without waiting for the gc.
            exception = None


class _KeyErrorMessage(str):
    """A str whose repr is itself, so a KeyError message keeps its line breaks."""

    def __repr__(self):
        return self


def _short(keys, limit=20):
    text = repr(keys)
    if isinstance(keys, list) and len(keys) > limit:
        text = repr(keys[:limit])[:-1] + f", ... ({len(keys)} keys)]"
    return text


def _picklable(obj):
    try:
        pickle.dumps(obj)
        return True
    except Exception:
        return False
