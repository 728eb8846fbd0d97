"""_chunk_cat (ember/native/shape/chunk_cat.py) against torch._chunk_cat: values for same and
different ndims, negative dims, padding to equal chunks, non-contiguous inputs, float32/
float64/int64, the errors; the gradient against torch's decomposition (pad, reshape, cat),
PyTorch's op having no derivative."""

import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

CASES = [  # (shapes, dim, num_chunks)
    ([(1, 2, 3), (1, 2, 3)], -1, 5),
    ([(1, 2, 129), (1, 2, 297)], -1, 5),
    ([(1, 2, 3), (1, 2, 3)], 1, 5),
    ([(3, 3, 2, 1), (1, 4, 2, 2), (2, 1, 3, 3)], 0, 2),
    ([(2, 3, 4), (2, 5)], 1, 3),  # different ndims
    ([(6,)], 0, 3),  # chunks that need no padding
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shapes, dim, num_chunks", CASES)
def test_chunk_cat(shapes, dim, num_chunks, dtype):
    arrays = [make_tensor(shape, dtype, seed=i) for i, shape in enumerate(shapes)]
    assert_parity(lambda lib, *ts: lib._chunk_cat(list(ts), dim, num_chunks), *arrays, grad=False)
    assert_parity(lambda lib, *ts: lib._chunk_cat(list(ts), dim, num_chunks), *arrays, grad=False,
                  noncontiguous=True)


def _decomposed(tensors, dim, num_chunks):
    # torch's decomposition of the op, which autograd can differentiate
    return torch._decomp.decompositions._chunk_cat(tensors, dim, num_chunks)


@pytest.mark.parametrize("shapes, dim, num_chunks", CASES)
def test_chunk_cat_gradient(shapes, dim, num_chunks):
    arrays = [make_tensor(shape, "float64", seed=i) for i, shape in enumerate(shapes)]
    assert_parity(lambda lib, *ts: (lib._chunk_cat if lib is ember else _decomposed)(list(ts), dim, num_chunks),
                  *arrays)


@pytest.mark.parametrize("shapes, dtypes, dim, num_chunks", [
    ([(2, 3)], ["float32"], 0, 0),  # positive num_chunks
    ([(2, 3)], ["float32"], 0, -1),
    ([(2, 3), (2, 0)], ["float32", "float32"], 1, 2),  # non-empty tensors
    ([(2, 3), (2, 3)], ["float32", "float64"], 1, 2),  # one dtype
    ([(2, 3), (2,)], ["float32", "float32"], -1, 2),  # different ndims need dim >= 0
    ([(2, 3), (2,)], ["float32", "float32"], 1, 2),  # dim < every ndim
    ([(2, 3), (3, 3)], ["float32", "float32"], 1, 2),  # the leading sizes agree
    ([(2, 3)], ["float32"], 2, 2),  # dim out of range
])
def test_chunk_cat_errors(shapes, dtypes, dim, num_chunks):
    arrays = [make_tensor(shape, dtype) for shape, dtype in zip(shapes, dtypes)]
    ember_error = torch_error = None
    for lib in (ember, torch):
        try:
            lib._chunk_cat([lib.tensor(a) for a in arrays], dim, num_chunks)
        except Exception as error:
            if lib is ember:
                ember_error = error
            else:
                torch_error = error
    assert torch_error is not None and type(ember_error) is type(torch_error)
    assert str(ember_error).splitlines()[0] == str(torch_error).splitlines()[0]


def test_chunk_cat_empty_list():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="_chunk_cat expects a non-empty input tensor list"):
            lib._chunk_cat([], 0, 2)
