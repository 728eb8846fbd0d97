"""Which of several equal values PyTorch's CPU ``topk`` returns, so pruning masks match torch's.

PyTorch counterpart: aten/src/ATen/native/TopKImpl.h (v2.13), ``topk_impl_loop``.

PyTorch's CPU kernel is not stable: it fills a vector of ``(value, index)`` pairs and
hands it to the C++ standard library, ``std::partial_sort`` when ``k * 64 <= n`` and
``std::nth_element`` otherwise, comparing values only, so which of several equal values
lands among the first ``k`` is decided by the library's algorithm (GNU libstdc++ on
Linux wheels). Pruning asks topk for the weights to drop, so a weight matrix with
repeated values (a zero-initialised bias, a quantised or already-pruned weight) gets
torch's mask only if those algorithms are replayed, step for step. ember's ``topk``
replays them (NOTE [ The order of ties ] in native/sorting.py); this helper asks only
for the *set* of a flat array's picks, as a sorted list, without building tensors.

# NOTE [ Replaying torch's topk ties ]
``topk_indices`` first asks NumPy whether the answer is unique: when fewer values
equal the k-th one than the selection could take, the set of chosen indices does not
depend on the algorithm and ``argpartition`` gives it. Only a tie that straddles the
boundary pays for the pure-Python replay (about 0.1 s for 10^5 elements). Values are
replaced by their dense rank first (NaN ranks above everything, as in torch's
comparator, which sorts NaN as the largest value), so every comparison is between
Python ints; for ``largest=True`` the rank is negated and the replay always selects
the smallest keys.
"""

import numpy as np

from ember.native.sorting import comparison_ranks, topk_order


def topk_indices(values, k, largest):
    """The sorted flat indices of the ``k`` entries PyTorch's CPU ``topk`` selects.

    >>> from ember.nn.utils.topk_ties import topk_indices
    >>> topk_indices([1.0, 1.0, 1.0, 1.0, 0.0], 2, largest=True)  # as torch.topk
    [1, 3]
    """
    values = np.asarray(values).reshape(-1)
    n = values.size
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range: k={k}, size={n}")
    if k == 0:
        return []
    keys = comparison_ranks(values, largest)
    boundary = np.partition(keys, k - 1)[k - 1]
    if np.count_nonzero(keys <= boundary) == k:
        return sorted(np.flatnonzero(keys <= boundary).tolist())
    return sorted(topk_order(keys.tolist(), k, sorted=False)[:k])
