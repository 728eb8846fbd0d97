"""``CheckpointError``: the one exception every refused or broken checkpoint raises.

PyTorch counterpart: none as such. torch.load raises ``pickle.UnpicklingError`` from its
weights-only unpickler and ``RuntimeError`` from its zip reader (v2.13); ember folds both
into one class so callers catch a single type, and keeps both as bases so code written
for torch's exceptions still catches ember's.
"""

import pickle


class CheckpointError(pickle.UnpicklingError, RuntimeError):
    """A checkpoint that ember refuses to load: malformed, truncated, corrupt or hostile.

    Raised before anything from the file runs and before any allocation larger than
    the file's real content.
    """
