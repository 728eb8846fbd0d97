"""``mode`` of one line as PyTorch's CPU kernel finds it: in the order C++'s ``std::sort``
(GNU libstdc++'s introsort, replayed in native/support/std_sort.py) leaves the line.

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
PyTorch's index, ember replays the same algorithm on the values (NOTE [ Replaying
libstdc++'s sorts ] in native/support/std_sort.py). Lines of at most 16
values are only insertion-sorted, which is stable: there, without NaNs, the index is
the last occurrence of the mode (median.py takes that shortcut).
"""

from ember.native.support import std_sort
from ember.native.support.std_sort import SMALL

__all__ = ["SMALL", "mode_of_line", "std_sort_order"]


def std_sort_order(values):
    """The positions of ``values`` in the order ``std::sort`` (comparing with ``<``)
    leaves them."""
    order = list(range(len(values)))
    std_sort.sort(values, order, 0, len(order))
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
