"""The order in which C++'s ``std::sort`` (GNU libstdc++'s introsort) leaves a sequence,
and ``mode`` of one line as PyTorch's CPU kernel finds it in that order.

PyTorch counterpart: the CPU ``mode`` kernel of aten/src/ATen/native/cpu/SortingKernel.cpp
(v2.13), which sorts (value, index) pairs with ``std::sort`` comparing values only;
the algorithm is libstdc++'s ``std::sort`` (bits/stl_algo.h, bits/stl_heap.h).

NOTE [ mode follows std::sort ]
``mode`` returns the most frequent value and *an* index of it. PyTorch's kernel sorts
the line's (value, index) pairs by value with ``std::sort``, walks the runs of equal
neighbours, keeps the first longest run and returns the index that ends it. Which
index ends a run is whatever order ``std::sort`` leaves equal values in: it is not
stable (an introsort: quicksort with median-of-three pivots, heapsort past a depth
limit, then insertion sort), and a NaN compares false with everything, so NaNs stay
where the algorithm happens to leave them and each is a run of its own. To return
PyTorch's index, ember replays the same algorithm on the values. Lines of at most 16
values are only insertion-sorted, which is stable: there, without NaNs, the index is
the last occurrence of the mode (median.py takes that shortcut).
"""

SMALL = 16  # libstdc++'s _S_threshold: shorter ranges are left to insertion sort


def std_sort_order(values):
    """The positions of ``values`` in the order ``std::sort`` (comparing with ``<``)
    leaves them."""
    order = list(range(len(values)))
    n = len(order)
    if n > 1:
        _introsort(values, order, 0, n, 2 * (n.bit_length() - 1))
        if n > SMALL:
            _insertion_sort(values, order, 0, SMALL)
            for i in range(SMALL, n):
                _linear_insert(values, order, i)
        else:
            _insertion_sort(values, order, 0, n)
    return order


def mode_of_line(values):
    """``(value, index)``: the first longest run of equal neighbours in ``std::sort``'s
    order, and the position that ends it (NOTE [ mode follows std::sort ])."""
    order = std_sort_order(values)
    best_value, best_index, best_count, count = values[order[0]], order[0], 0, 0
    for i, position in enumerate(order):
        count += 1
        run_ends = i == len(order) - 1 or not values[position] == values[order[i + 1]]
        if run_ends:
            if count > best_count:
                best_value, best_index, best_count = values[position], position, count
            count = 0
    return best_value, best_index


def _introsort(values, order, first, last, depth):
    # Quicksort down to ranges of SMALL values, recursing on the right part and
    # looping on the left; past the depth limit a range is heap-sorted instead.
    while last - first > SMALL:
        if depth == 0:
            _heap_sort(values, order, first, last)
            return
        depth -= 1
        _median_to_first(values, order, first, first + 1, first + (last - first) // 2, last - 1)
        cut = _partition(values, order, first + 1, last, first)
        _introsort(values, order, cut, last, depth)
        last = cut


def _less(values, order, i, j):
    return values[order[i]] < values[order[j]]


def _median_to_first(values, order, result, a, b, c):
    # The median of the values at a, b, c is swapped into `result` (the pivot).
    if _less(values, order, a, b):
        if _less(values, order, b, c):
            pick = b
        else:
            pick = c if _less(values, order, a, c) else a
    elif _less(values, order, a, c):
        pick = a
    else:
        pick = c if _less(values, order, b, c) else b
    order[result], order[pick] = order[pick], order[result]


def _partition(values, order, first, last, pivot):
    # Hoare's scheme with no bounds checks: the pivot's median-of-three stops each scan.
    while True:
        while _less(values, order, first, pivot):
            first += 1
        last -= 1
        while _less(values, order, pivot, last):
            last -= 1
        if not first < last:
            return first
        order[first], order[last] = order[last], order[first]
        first += 1


def _linear_insert(values, order, last):
    # Move order[last] left past every larger value (something smaller lies to its left).
    moving = order[last]
    while values[moving] < values[order[last - 1]]:
        order[last] = order[last - 1]
        last -= 1
    order[last] = moving


def _insertion_sort(values, order, first, last):
    for i in range(first + 1, last):
        moving = order[i]
        if values[moving] < values[order[first]]:  # a new smallest: shift the whole prefix
            order[first + 1:i + 1] = order[first:i]
            order[first] = moving
        else:
            _linear_insert(values, order, i)


def _heap_sort(values, order, first, last):
    # make_heap, then repeatedly move the largest to the end (libstdc++'s sort_heap).
    length = last - first
    for parent in range((length - 2) // 2, -1, -1):
        _adjust_heap(values, order, first, parent, length, order[first + parent])
    while last - first > 1:
        last -= 1
        moving = order[last]
        order[last] = order[first]
        _adjust_heap(values, order, first, 0, last - first, moving)


def _adjust_heap(values, order, first, hole, length, moving):
    # Sift the hole down to a leaf along the larger children, then sift `moving` up.
    top, child = hole, hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if values[order[first + child]] < values[order[first + child - 1]]:
            child -= 1
        order[first + hole] = order[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        order[first + hole] = order[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and values[order[first + parent]] < values[moving]:
        order[first + hole] = order[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    order[first + hole] = moving
