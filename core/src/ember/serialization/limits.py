"""Bounds on what a checkpoint may declare: shapes NumPy can address, and views that
reach far beyond the data a file holds.

PyTorch counterpart: none as such. torch/_utils.py ``_rebuild_tensor_v2`` (v2.13) builds
whatever size and stride a file names over its storage, so a 12-byte record can declare
a stride-0 tensor of 2**40 elements, after which ``sum()`` runs for minutes. ember
refuses such files with ``CheckpointError`` (a deliberate difference from torch).

# NOTE [ What a checkpoint may declare ]
# 1. Every shape must be addressable: the product of its non-zero sizes times the item
#    size stays below NumPy's limit (2**63 bytes), even when a zero size makes the
#    tensor empty (NumPy checks the product first and would raise its ValueError).
# 2. A tensor may view more elements than its storage holds (stride 0: torch saves an
#    ``expand``ed tensor that way) only up to ``max_view_elements()`` elements:
#    2**26 (64 Mi) by default, more with the environment variable
#    ``EMBER_LOAD_MAX_VIEW_ELEMENTS=N`` for a file known to hold such views. A tensor
#    within its storage's size is never limited: its data is really in the file.
"""

import os

from ember.serialization.errors import CheckpointError

DEFAULT_MAX_VIEW_ELEMENTS = 2**26
_NUMPY_MAX_BYTES = 2**63 - 1


def max_view_elements():
    """The most elements a tensor beyond its storage's size may have (NOTE above)."""
    value = os.environ.get("EMBER_LOAD_MAX_VIEW_ELEMENTS", "").strip().replace("_", "")
    if not value:
        return DEFAULT_MAX_VIEW_ELEMENTS
    if not value.isdigit():
        raise ValueError(f"EMBER_LOAD_MAX_VIEW_ELEMENTS={value!r} is not a whole number of elements")
    return int(value)


def check_addressable(shape, itemsize, what):
    """Refuse a shape whose non-zero sizes multiply past what NumPy can address."""
    nbytes = itemsize
    for n in shape:
        nbytes *= max(n, 1)
        if nbytes > _NUMPY_MAX_BYTES:
            raise CheckpointError(f"{what} has shape {list(shape)}, which declares more than 2**63 bytes "
                                  f"(even if a zero size leaves it empty, no array can have that shape)")


def check_view(numel, storage_numel, shape, what):
    """Refuse a view of more elements than its storage holds beyond ``max_view_elements()``."""
    limit = max_view_elements()
    if numel > storage_numel and numel > limit:
        raise CheckpointError(f"{what} of shape {list(shape)} views {numel:,} elements of a storage of "
                              f"{storage_numel:,} (a stride-0 view); ember.load allows at most {limit:,} elements "
                              f"beyond a storage's: set EMBER_LOAD_MAX_VIEW_ELEMENTS to allow more")
