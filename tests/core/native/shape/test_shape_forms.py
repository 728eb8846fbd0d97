"""The shape ops exported for issue 26 against torch: ``ravel``, ``split_with_sizes``,
``unsafe_split``, ``unsafe_chunk`` (views.py, splitting.py), ``diagflat``
(diagonal.py) and ``ember.ops.aten.slice`` called with torch's defaults: values and
gradients, float32/float64, non-contiguous, empty and 0-d inputs, errors."""

import pytest
from autograd_parity import assert_same_error

import ember
from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_ravel_matches_torch(dtype, noncontiguous):
    assert_parity(lambda lib, t: lib.ravel(t), make_tensor((3, 4), dtype), noncontiguous=noncontiguous)
    assert_parity(lambda lib, t: t.t().ravel(), make_tensor((3, 4), dtype), noncontiguous=noncontiguous)
    assert_parity(lambda lib, t: t.ravel(), make_tensor((), dtype))
    assert_parity(lambda lib, t: t.ravel(), make_tensor((0, 2), dtype))


def test_ravel_views_a_contiguous_input_and_copies_another():
    x = ember.arange(6.0).reshape(2, 3)
    assert x.ravel()._is_view()
    x.t().ravel().add_(1)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


SPLITS = {
    "split_with_sizes": lambda lib, t: lib.split_with_sizes(t, [1, 0, 3], 1),
    "split_with_sizes_method": lambda lib, t: t.split_with_sizes([2, 1], dim=0),
    "unsafe_split": lambda lib, t: lib.unsafe_split(t, 2, -1),
    "unsafe_split_method": lambda lib, t: t.unsafe_split(3),
    "unsafe_chunk": lambda lib, t: lib.unsafe_chunk(t, 3, 1),
    "unsafe_chunk_method": lambda lib, t: t.unsafe_chunk(2, dim=2),
}


@pytest.mark.parametrize("name", list(SPLITS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_splits_match_torch(name, dtype, noncontiguous):
    assert_parity(SPLITS[name], make_tensor((3, 4, 5), dtype), noncontiguous=noncontiguous)


def test_unsafe_pieces_may_be_written_in_place_while_recording():
    for split in (lambda t: ember.unsafe_split(t, 2), lambda t: ember.unsafe_chunk(t, 2)):
        x = ember.ones(4, requires_grad=True)
        pieces = split(x * 1)
        pieces[0].mul_(3)
        sum(p.sum() for p in pieces).backward()
        assert x.grad.tolist() == [3.0, 3.0, 1.0, 1.0]


def test_split_errors_match_torch():
    assert_same_error(lambda lib: lib.split_with_sizes(lib.ones(4), [1, 2]))
    assert_same_error(lambda lib: lib.unsafe_chunk(lib.ones(4), 0))
    assert_same_error(lambda lib: lib.unsafe_split(lib.ones(4), 0))


@pytest.mark.parametrize("offset", [0, 2, -1])
@pytest.mark.parametrize("shape", [(3,), (2, 3), (), (0,)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_diagflat_matches_torch(offset, shape, dtype):
    assert_parity(lambda lib, t: lib.diagflat(t, offset), make_tensor(shape, dtype))
    assert_parity(lambda lib, t: t.diagflat(offset=offset), make_tensor(shape, dtype), noncontiguous=True)


def test_aten_slice_takes_torchs_defaults():
    x = ember.arange(10.0, requires_grad=True)
    y = ember.ops.aten.slice(x, dim=0, start=2)
    assert y.tolist() == list(range(2, 10))
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0] + [1.0] * 8
