"""``CheckpointError``: the one exception every refused or broken checkpoint raises.

PyTorch counterpart: none as such. torch.load raises ``pickle.UnpicklingError`` from its
weights-only unpickler and ``RuntimeError`` from its zip reader (v2.13); ember folds both
into one class so callers catch a single type, and keeps both as bases so code written
for torch's exceptions still catches ember's.
"""

import pickle
import reprlib


class CheckpointError(pickle.UnpicklingError, RuntimeError):
    """A checkpoint that ember refuses to load: malformed, truncated, corrupt or hostile.

    Raised before anything from the file runs and before any allocation larger than
    the file's real content.
    """


# Bounded repr for error messages: values from a hostile file may be huge or nested
# thousands of levels deep, where the builtin repr would raise RecursionError.
_BRIEF = reprlib.Repr()
_BRIEF.maxlevel = 3
_BRIEF.maxstring = _BRIEF.maxother = 80
_BRIEF.maxtuple = _BRIEF.maxlist = _BRIEF.maxdict = _BRIEF.maxset = 8


def describe(value):
    """A short, safe repr of ``value`` for an error message."""
    return _BRIEF.repr(value)
