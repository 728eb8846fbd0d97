"""Which elements of an elementwise op PyTorch's CPU loop computes with its vectorized
function and which with its scalar one.

PyTorch counterpart: aten/src/ATen/native/cpu/Loops.h (``cpu_kernel_vec``,
``VectorizedLoop2d``, ``vectorized_loop``) and the dimension handling of
aten/src/ATen/TensorIterator.cpp (``reorder_dimensions``, ``coalesce_dimensions``,
``for_each``) (v2.13).

# NOTE [ Vectorized and scalar loops ]
# A CPU kernel of PyTorch is given twice: a function of SIMD vectors and one of single
# values. TensorIterator sorts the dims (the fastest first, as it lays out the result),
# merges those that are contiguous for every operand, and walks the innermost of what
# is left a row at a time. A row whose operands are all contiguous there (or all but
# one, whose stride is 0: a scalar broadcast) takes the vector function in steps of two
# vectors, and the elements past the last full step take the scalar function; any
# other row takes the scalar function throughout. Past 32768 elements, and with more
# than one thread, the elements are split into one range per thread first, and each
# range starts its own steps. The two functions agree for most kernels. Where they
# round differently (add and sub with alpha on float16 and bfloat16, opmath.py), ember
# computes both and takes each element from the function torch's loop uses for it.
# The step is two 32-byte vectors, as torch's AVX2 kernels and its portable vector
# type (used on the DEFAULT capability too) have; torch runs add's AVX2 kernel even on
# AVX-512 machines, as most kernels (those registered without
# ALSO_REGISTER_AVX512_DISPATCH).
"""

import numpy as np

from ember.memory_format import iterator_order
from ember.parallel import get_num_threads

GRAIN_SIZE = 32768  # at::internal::GRAIN_SIZE: fewer elements run on one thread
VECTOR_BYTES = 32


def inner_row(shape, operands, order):
    """``(length, strides)`` of the innermost row after TensorIterator merges dims that
    are contiguous for every operand (a size-1 dim merges with anything)."""
    length = 1
    inner = [0] * len(operands)
    for dim in order:
        size = shape[dim]
        if size == 1:
            continue
        if length == 1:
            length, inner = size, [strides[dim] for strides in operands]
        elif all(length * row == strides[dim] for row, strides in zip(inner, operands)):
            length *= size
        else:
            break
    return length, inner


def takes_vector_loop(inner):
    """Whether a row with these inner strides (the output's first) runs the vector
    function: every operand contiguous, or every one but a single input with stride 0."""
    inputs = inner[1:]
    return inner[0] == 1 and all(stride in (0, 1) for stride in inputs) and inputs.count(0) <= 1


def scalar_loop_mask(shape, inputs, itemsize, num_threads=None):
    """A bool array of ``shape``: True where torch's CPU loop computes the element with
    its scalar function (NOTE [ Vectorized and scalar loops ]). ``inputs``: ``(shape,
    element strides)`` of the tensor operands (a Python number is ``((), ())``); the
    output is new, laid out as TensorIterator lays it out."""
    from ember.memory_format import elementwise_strides

    ndim = len(shape)
    numel = int(np.prod(shape, dtype=np.int64))
    operands = [elementwise_strides(shape, inputs) if ndim else ()]
    for op_shape, strides in inputs:
        lead = ndim - len(op_shape)
        operands.append(tuple(0 if d < lead or op_shape[d - lead] == 1 and shape[d] != 1 else strides[d - lead]
                              for d in range(ndim)))
    order = iterator_order(shape, operands)  # the output's strides first
    length, inner = inner_row(shape, operands, order)
    if not takes_vector_loop(inner):
        return np.ones(shape, dtype=bool)
    step = 2 * (VECTOR_BYTES // itemsize)
    position = np.arange(numel, dtype=np.int64)
    start = position - position % length  # each row starts its steps...
    end = start + length
    threads = num_threads or get_num_threads()
    if numel >= GRAIN_SIZE and threads > 1:  # ...and so does each thread's range (at::parallel_for)
        threads = min(threads, -(-numel // GRAIN_SIZE))
        chunk = -(-numel // threads)
        start = np.maximum(start, position - position % chunk)
        end = np.minimum(end, position - position % chunk + chunk)
    vectorized = (end - start) // step * step
    scalar = position - start >= vectorized
    # ``scalar`` is in iteration order (order[0] fastest): back to the dims of ``shape``
    iterated = scalar.reshape([shape[dim] for dim in reversed(order)])
    return iterated.transpose(np.argsort(list(reversed(order)))) if ndim else iterated.reshape(())
