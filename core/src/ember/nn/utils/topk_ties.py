"""Which of several equal values PyTorch's CPU ``topk`` returns, so pruning masks match torch's.

PyTorch counterpart: aten/src/ATen/native/TopKImpl.h (v2.13), ``topk_impl_loop``.

ember's own ``topk`` is stable (ties go to the lower index). PyTorch's CPU kernel is
not: it fills a vector of ``(value, index)`` pairs and hands it to the C++ standard
library, ``std::partial_sort`` when ``k * 64 <= n`` and ``std::nth_element`` otherwise,
comparing values only. Which of several equal values lands among the first ``k`` is
then decided by the library's algorithm (GNU libstdc++ on Linux wheels): a heap
selection, or an introselect (median-of-three quicksort partitions, then insertion
sort on the last few elements). Pruning asks topk for the weights to drop, so a weight
matrix with repeated values (a zero-initialised bias, a quantised or already-pruned
weight) gets torch's mask only if those algorithms are replayed here, step for step.

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

from ember.dtypes import is_floating_array


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
    keys = _ranks(values, largest)
    boundary = np.partition(keys, k - 1)[k - 1]
    if np.count_nonzero(keys <= boundary) == k:
        return sorted(np.flatnonzero(keys <= boundary).tolist())
    pairs = list(zip(keys.tolist(), range(n)))
    if k * 64 <= n:
        _heap_select(pairs, 0, k, n)
    else:
        _introselect(pairs, 0, k - 1, n)
    return sorted(index for _, index in pairs[:k])


def _ranks(values, largest):
    """Dense integer ranks, NaN above every number, negated when selecting the largest."""
    nan = np.isnan(values) if is_floating_array(values.dtype) else np.zeros(values.shape, dtype=bool)
    _, rank = np.unique(np.where(nan, 0, values), return_inverse=True)
    rank = rank.reshape(-1).astype(np.int64)
    rank[nan] = rank.max(initial=0) + 1
    return -rank if largest else rank


# --- std::nth_element (introselect) --------------------------------------------------
def _introselect(pairs, first, nth, last):
    depth_limit = 2 * ((last - first).bit_length() - 1)
    while last - first > 3:
        if depth_limit == 0:
            _heap_select(pairs, first, nth + 1, last)
            pairs[first], pairs[nth] = pairs[nth], pairs[first]
            return
        depth_limit -= 1
        middle = first + (last - first) // 2
        _move_median_to_first(pairs, first, first + 1, middle, last - 1)
        cut = _unguarded_partition(pairs, first + 1, last, pairs[first][0])
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(pairs, first, last)


def _move_median_to_first(pairs, result, a, b, c):
    """Swap the median of the keys at ``a``, ``b``, ``c`` into ``result`` (the pivot slot)."""
    key_a, key_b, key_c = pairs[a][0], pairs[b][0], pairs[c][0]
    if key_a < key_b:
        median = b if key_b < key_c else (c if key_a < key_c else a)
    elif key_a < key_c:
        median = a
    else:
        median = c if key_b < key_c else b
    pairs[result], pairs[median] = pairs[median], pairs[result]


def _unguarded_partition(pairs, first, last, pivot):
    """Hoare partition around ``pivot``; the pivot's copy at the front guards the scans."""
    while True:
        while pairs[first][0] < pivot:
            first += 1
        last -= 1
        while pivot < pairs[last][0]:
            last -= 1
        if not first < last:
            return first
        pairs[first], pairs[last] = pairs[last], pairs[first]
        first += 1


def _insertion_sort(pairs, first, last):
    for i in range(first + 1, last):
        value = pairs[i]
        if value[0] < pairs[first][0]:
            pairs[first + 1:i + 1] = pairs[first:i]
            pairs[first] = value
            continue
        j = i
        while value[0] < pairs[j - 1][0]:
            pairs[j] = pairs[j - 1]
            j -= 1
        pairs[j] = value


# --- std::partial_sort's selection (a max-heap of the k best) ------------------------
def _heap_select(pairs, first, middle, last):
    _make_heap(pairs, first, middle)
    for i in range(middle, last):
        if pairs[i][0] < pairs[first][0]:
            value, pairs[i] = pairs[i], pairs[first]
            _adjust_heap(pairs, first, 0, middle - first, value)


def _make_heap(pairs, first, last):
    length = last - first
    for parent in range((length - 2) // 2, -1, -1):
        _adjust_heap(pairs, first, parent, length, pairs[first + parent])


def _adjust_heap(pairs, first, hole, length, value):
    """Sift the hole at ``hole`` down to a leaf, then push ``value`` back up from there."""
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if pairs[first + child][0] < pairs[first + child - 1][0]:
            child -= 1
        pairs[first + hole] = pairs[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        pairs[first + hole] = pairs[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and pairs[first + parent][0] < value[0]:
        pairs[first + hole] = pairs[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    pairs[first + hole] = value
