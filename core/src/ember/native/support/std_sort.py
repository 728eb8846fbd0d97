"""The orders in which C++'s ``std::sort``, ``std::partial_sort`` and ``std::nth_element``
(GNU libstdc++, bits/stl_algo.h and bits/stl_heap.h) leave a sequence, replayed step
for step: PyTorch's CPU ``sort`` (``stable=False``), ``topk``, ``mode`` and pruning's
``topk`` leave equal values in those orders.

PyTorch counterpart: the C++ standard library PyTorch's CPU kernels call,
aten/src/ATen/native/cpu/SortingKernel.cpp and aten/src/ATen/native/TopKImpl.h (v2.13).

# NOTE [ Replaying libstdc++'s sorts ]
# The three algorithms are not stable: which of several equal values comes first is
# whatever their steps leave. ``std::sort`` is an introsort (quicksort with the median
# of three values as pivot and Hoare's partition, down to ranges of 16; heapsort past
# a depth limit of 2 log2 n; then one insertion sort over everything, which alone
# handles 16 values or fewer, and is stable). ``std::nth_element`` is the same
# quicksort keeping only the side holding the nth position, finished by insertion
# sort on the last three values or fewer (heap selection past the depth limit).
# ``std::partial_sort`` keeps a max-heap of the first ``k`` values, swaps in each later
# value smaller than its top, then heap-sorts the k. Each function here permutes
# ``order`` (positions into ``keys``) in place over ``[first, last)`` exactly as the C++
# algorithm permutes the elements, comparing ``keys[position]`` with ``<`` alone: pass
# dense integer ranks to sort by a comparator (NaN above every number, negated for a
# descending order), or the values themselves where ``<`` is the comparator (``mode``).
"""

SMALL = 16  # libstdc++'s _S_threshold: ranges this short are left to insertion sort


def sort(keys, order, first, last):
    """``std::sort`` of ``order[first:last]`` by ``keys``."""
    n = last - first
    if n < 2:
        return
    _introsort(keys, order, first, last, 2 * (n.bit_length() - 1))
    if n > SMALL:
        _insertion_sort(keys, order, first, first + SMALL)
        for i in range(first + SMALL, last):
            _linear_insert(keys, order, i)
    else:
        _insertion_sort(keys, order, first, last)


def partial_sort(keys, order, first, middle, last):
    """``std::partial_sort``: the ``middle - first`` smallest, sorted, at the front."""
    heap_select(keys, order, first, middle, last)
    while middle - first > 1:  # sort_heap
        middle -= 1
        moving = order[middle]
        order[middle] = order[first]
        _adjust_heap(keys, order, first, 0, middle - first, moving)


def nth_element(keys, order, first, nth, last):
    """``std::nth_element``: the value that sorts to ``nth`` there, smaller ones before."""
    depth = 2 * ((last - first).bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            heap_select(keys, order, first, nth + 1, last)
            order[first], order[nth] = order[nth], order[first]
            return
        depth -= 1
        _median_to_first(keys, order, first, first + 1, first + (last - first) // 2, last - 1)
        cut = _partition(keys, order, first + 1, last, first)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(keys, order, first, last)


def heap_select(keys, order, first, middle, last):
    """``std::__heap_select``: a max-heap of the ``middle - first`` smallest at the front."""
    length = middle - first
    for parent in range((length - 2) // 2, -1, -1):  # make_heap
        _adjust_heap(keys, order, first, parent, length, order[first + parent])
    for i in range(middle, last):
        if keys[order[i]] < keys[order[first]]:
            moving = order[i]
            order[i] = order[first]
            _adjust_heap(keys, order, first, 0, length, moving)


def _introsort(keys, order, first, last, depth):
    # Quicksort down to ranges of SMALL values, recursing on the right part and
    # looping on the left; past the depth limit a range is heap-sorted instead.
    while last - first > SMALL:
        if depth == 0:
            partial_sort(keys, order, first, last, last)
            return
        depth -= 1
        _median_to_first(keys, order, first, first + 1, first + (last - first) // 2, last - 1)
        cut = _partition(keys, order, first + 1, last, first)
        _introsort(keys, order, cut, last, depth)
        last = cut


def _median_to_first(keys, order, result, a, b, c):
    # The median of the keys at a, b, c is swapped into `result` (the pivot).
    key_a, key_b, key_c = keys[order[a]], keys[order[b]], keys[order[c]]
    if key_a < key_b:
        pick = b if key_b < key_c else (c if key_a < key_c else a)
    elif key_a < key_c:
        pick = a
    else:
        pick = c if key_b < key_c else b
    order[result], order[pick] = order[pick], order[result]


def _partition(keys, order, first, last, pivot):
    # Hoare's scheme with no bounds checks: the median-of-three stops each scan.
    pivot_key = keys[order[pivot]]
    while True:
        while keys[order[first]] < pivot_key:
            first += 1
        last -= 1
        while pivot_key < keys[order[last]]:
            last -= 1
        if not first < last:
            return first
        order[first], order[last] = order[last], order[first]
        first += 1


def _linear_insert(keys, order, last):
    # Move order[last] left past every larger key (something no larger lies to its left).
    moving = order[last]
    key = keys[moving]
    while key < keys[order[last - 1]]:
        order[last] = order[last - 1]
        last -= 1
    order[last] = moving


def _insertion_sort(keys, order, first, last):
    for i in range(first + 1, last):
        moving = order[i]
        if keys[moving] < keys[order[first]]:  # a new smallest: shift the whole prefix
            order[first + 1:i + 1] = order[first:i]
            order[first] = moving
        else:
            _linear_insert(keys, order, i)


def _adjust_heap(keys, order, first, hole, length, moving):
    # Sift the hole down to a leaf along the larger children, then sift `moving` up.
    top, child = hole, hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if keys[order[first + child]] < keys[order[first + child - 1]]:
            child -= 1
        order[first + hole] = order[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        order[first + hole] = order[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and keys[order[first + parent]] < keys[moving]:
        order[first + hole] = order[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    order[first + hole] = moving
