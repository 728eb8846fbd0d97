"""Indexing (ember/native/indexing/indexing.py) against PyTorch: ``x[key]``, ``x[key] = v`` and
the index ops (gather, scatter, index_select, masked ops, nonzero, where).

Each row of ``GETITEM`` is a key (built per library, as index tensors must be); each
row of ``OPS`` a lambda run with ``lib = ember`` and ``lib = torch``. Values, dtypes
and gradients are compared by ``assert_parity``; differentiable rows also go through
float64 gradcheck.
"""

from typing import Callable, NamedTuple

import numpy as np
import pytest

import ember
from ember.testing import assert_parity, make_tensor


class Case(NamedTuple):
    name: str
    fn: Callable
    shape: tuple = (3, 4, 5)


def key_case(name, make_key, shape=(3, 4, 5)):
    return Case(name, lambda lib, x: x[make_key(lib)], shape)


GETITEM = [
    key_case("int", lambda lib: 1),
    key_case("negative_int", lambda lib: -1),
    key_case("ints", lambda lib: (2, -1, 0)),
    key_case("slice_step", lambda lib: slice(None, None, 2)),
    key_case("slices", lambda lib: (slice(1, None), slice(None, -1, 3))),
    key_case("slice_out_of_range", lambda lib: slice(2, 10)),
    key_case("empty_slice", lambda lib: (slice(None), slice(3, 1))),
    key_case("none", lambda lib: (None, 1, None)),
    key_case("ellipsis", lambda lib: (Ellipsis, 1)),
    key_case("ellipsis_none", lambda lib: (0, Ellipsis, None)),
    key_case("bool_mask", lambda lib: lib.tensor(make_tensor((3, 4, 5), "float32") > 0)),
    key_case("bool_mask_partial", lambda lib: lib.tensor([True, False, True])),
    key_case("bool_mask_second_dim", lambda lib: (slice(None), lib.tensor([True, False, False, True]))),
    key_case("int_tensor", lambda lib: lib.tensor([2, 0, 2])),
    key_case("int_tensor_negative", lambda lib: lib.tensor([-1, 0])),
    key_case("int_tensor_2d", lambda lib: lib.tensor([[0, 1], [2, 2]])),
    key_case("int32_tensor", lambda lib: lib.tensor([1, 0], dtype=lib.int32)),
    key_case("list", lambda lib: [0, 2]),
    key_case("two_lists", lambda lib: ([0, 2], [1, 3])),
    key_case("mixed_basic_advanced", lambda lib: (slice(None), [1, 3], slice(1, 4))),
    key_case("separated_advanced", lambda lib: ([0, 2], slice(None), [1, 3])),
    key_case("advanced_and_int", lambda lib: (1, [0, 3])),
    key_case("advanced_and_none", lambda lib: (None, [0, 2], Ellipsis)),
    key_case("zero_d_int_tensor", lambda lib: lib.tensor(2)),
    key_case("zero_d_int_tensors", lambda lib: (lib.tensor(2), slice(None), lib.tensor(-1))),
    key_case("zero_d_bool_tensor", lambda lib: lib.tensor(True)),
    key_case("python_bool", lambda lib: False),
    key_case("empty_int_tensor", lambda lib: lib.tensor([], dtype=lib.int64)),
    key_case("numpy_int", lambda lib: np.int64(1)),
    key_case("vector_int", lambda lib: 2, (5,)),
    key_case("zero_d_ellipsis", lambda lib: Ellipsis, ()),
    key_case("zero_d_none", lambda lib: None, ()),
    # Ints are selects (NOTE [ Ints are selects ]): where the indexed dims land.
    key_case("int_slice_list", lambda lib: (0, slice(None), [0, 1])),
    key_case("slice_int_list", lambda lib: (slice(None), 0, [0, 1])),
    key_case("int_slice_list_2d", lambda lib: (0, slice(None), [[0, 1]])),
    key_case("list_int_list", lambda lib: ([0, 1], 0, [0, 1])),
    key_case("none_int_list_none", lambda lib: (0, None, [0, 1], None)),
    key_case("int_ellipsis_list", lambda lib: (1, Ellipsis, [4, 0])),
    key_case("int_mask", lambda lib: (1, slice(None), lib.tensor([True, False, True, False, True]))),
    key_case("python_bool_int", lambda lib: (True, 0, [1, 2])),
    key_case("range", lambda lib: range(2)),
    key_case("range_and_int", lambda lib: (0, slice(None), range(1, 4, 2))),
    key_case("zero_d_bool_on_zero_d", lambda lib: lib.tensor(True), ()),
    key_case("zero_d_false_on_zero_d", lambda lib: lib.tensor(False), ()),
    # An Ellipsis that covers no dim does not separate the arrays around it (PyTorch's rule, not NumPy's).
    key_case("list_empty_ellipsis_list", lambda lib: (slice(None), [0, 1], Ellipsis, [0, 0]), (3, 2, 1)),
    key_case("slice_list_ellipsis_list", lambda lib: (slice(1, None), [1, 0, 0], Ellipsis, [1, 0, 0])),
    key_case("list_ellipsis_list", lambda lib: ([1, 2], Ellipsis, [0, 4])),
    key_case("zero_d_int_tensor_python_bool", lambda lib: (lib.tensor(1), True), (3,)),
]


@pytest.mark.parametrize("case", GETITEM, ids=[c.name for c in GETITEM])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_getitem(case, dtype):
    assert_parity(case.fn, make_tensor(case.shape, dtype))


@pytest.mark.parametrize("case", GETITEM, ids=[c.name for c in GETITEM])
def test_getitem_noncontiguous(case):
    assert_parity(case.fn, make_tensor(case.shape), noncontiguous=True)


@pytest.mark.parametrize("case", [c for c in GETITEM if c.shape != ()], ids=lambda c: c.name)
def test_getitem_gradcheck(case):
    x = ember.tensor(make_tensor(case.shape, "float64"), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: case.fn(ember, t), (x,))


def test_repeated_advanced_index_accumulates_gradient():
    assert_parity(lambda lib, x: x[lib.tensor([0, 0, 2, 0])] * 2, make_tensor((3, 2)))


BAD_KEYS = [
    key_case("int_out_of_range", lambda lib: 3),
    key_case("negative_out_of_range", lambda lib: (0, -5)),
    key_case("too_many", lambda lib: (0, 0, 0, 0)),
    key_case("negative_step", lambda lib: slice(None, None, -1)),
    key_case("zero_step", lambda lib: slice(None, None, 0)),
    key_case("float_index", lambda lib: 1.5),
    key_case("float_tensor", lambda lib: lib.tensor([1.0])),
    key_case("tensor_out_of_range", lambda lib: lib.tensor([0, 3])),
    key_case("mask_wrong_shape", lambda lib: lib.tensor([True, False])),
    key_case("zero_d_int", lambda lib: 0, ()),
]


@pytest.mark.parametrize("case", BAD_KEYS, ids=[c.name for c in BAD_KEYS])
def test_bad_keys_raise_like_torch(case):
    assert_parity(case.fn, make_tensor(case.shape))


def test_out_of_bounds_message():
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        ember.zeros(3, 4)[3]
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 1 with size 4"):
        ember.zeros(3, 4)[0, -5]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        ember.zeros(3, 4)[0, 0, 0]


def test_basic_getitem_is_a_view_and_advanced_is_a_copy():
    x = ember.zeros(3, 4)
    row, element = x[1], x[1, 2]
    assert row._base is x and element._base is x and element.ndim == 0
    element.fill_(5.0)
    assert x[1, 2].item() == 5.0 and x._version == 1
    picked = x[[1]]
    assert picked._base is None
    picked.fill_(-1.0)
    assert x.min().item() == 0.0


# --- __setitem__ -----------------------------------------------------------------------


SETITEM = [
    Case("int", lambda lib, x, v: _set(x, 1, v[0])),
    Case("slice_step", lambda lib, x, v: _set(x, (slice(None), slice(None, None, 2)), v[:, :2, 0].unsqueeze(-1))),
    Case("scalar", lambda lib, x, v: _set(x, (Ellipsis, 0), 2.5)),
    Case("mask", lambda lib, x, v: _set(x, x > 0, 0.0)),
    Case("mask_values", lambda lib, x, v: _set(x, x > 0, v[x > 0] * 3)),
    Case("int_tensor", lambda lib, x, v: _set(x, lib.tensor([2, 0]), v[:2])),
    Case("mixed", lambda lib, x, v: _set(x, (slice(None), [0, 3], 1), v[:, :2, 0])),
    Case("none", lambda lib, x, v: _set(x, (None, 0), v[0])),
    Case("broadcast_row", lambda lib, x, v: _set(x, slice(1, None), v[0, 0])),
    Case("shape_mismatch", lambda lib, x, v: _set(x, 0, v[:2, 0])),
    Case("chain", lambda lib, x, v: _chain(x, v)),
    Case("int_slice_list", lambda lib, x, v: _set(x, (0, slice(None), [0, 1]), v[0, :, :2])),
    Case("int_slice_list_accumulates", lambda lib, x, v: _set(x, (1, slice(None), [3, 3]), v[0, :, :2] * 2)),
    Case("extra_leading_ones", lambda lib, x, v: _set(x, slice(0, 2), v[:2].reshape(1, 1, 2, 4, 5))),
    Case("extra_leading_ones_advanced", lambda lib, x, v: _set(x, [0, 2], v[:2].unsqueeze(0))),
    Case("range", lambda lib, x, v: _set(x, range(1, 3), v[:2])),
    Case("list_empty_ellipsis_list", lambda lib, x, v: _set(x[:, :2, :1], (slice(None), [0, 1], Ellipsis, [0, 0]),
                                                             v[:, :2, 0])),
    Case("int_python_bool", lambda lib, x, v: _set(x, (1, True, 2), v[0, :1])),
]


def _set(x, key, value):
    y = x * 1  # a non-leaf, so writes into it are recorded
    y[key] = value
    return y * y


def _chain(x, v):
    y = x.clone()
    y[0] = v[0]
    y[1:].mul_(2)
    y[:, 0] += v[:, 1]
    y.t()[1] = 1.0
    return y.exp()


@pytest.mark.parametrize("case", SETITEM, ids=[c.name for c in SETITEM])
def test_setitem_values_and_gradients(case):
    assert_parity(case.fn, make_tensor((3, 4, 5)), make_tensor((3, 4, 5), seed=1))


@pytest.mark.parametrize("case", SETITEM, ids=[c.name for c in SETITEM])
@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_setitem_other_dtypes(case, dtype):
    assert_parity(case.fn, make_tensor((3, 4, 5), dtype), make_tensor((3, 4, 5), dtype, seed=1))


@pytest.mark.parametrize("mask", [True, False])
def test_setitem_zero_d_with_zero_d_mask(mask):
    def write(lib, x, v):
        y = x * 1
        y[lib.tensor(mask)] = v * 2
        return y

    assert_parity(write, make_tensor(()), make_tensor((), seed=1))


def test_setitem_bumps_version_of_base_and_views():
    x = ember.zeros(3, 4)
    v = x[1:]
    v[0, 0] = 1.0
    x[2] = ember.ones(4)
    assert x._version == 2 and v._version == 2
    np.testing.assert_array_equal(v.numpy(), x.numpy()[1:])


def test_setitem_on_leaf_requiring_grad_raises():
    x = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x[0] = 1.0


# --- index ops -------------------------------------------------------------------------


def _index(shape, high, seed=0):
    return make_tensor(shape, "int64", low=0, high=high - 1, seed=seed)


OPS = [
    Case("gather", lambda lib, x, i: lib.gather(x, 1, i), ((3, 4), (3, 2))),
    Case("gather_dim0", lambda lib, x, i: x.gather(0, i), ((3, 4), (2, 4))),
    Case("gather_smaller", lambda lib, x, i: x.gather(-1, i), ((3, 4), (2, 3))),
    Case("scatter", lambda lib, x, i: x.scatter(1, i, x[:, :2] * 2), ((3, 4), (3, 2))),
    Case("scatter_value", lambda lib, x, i: lib.scatter(x, 0, i, 1.5), ((3, 4), (2, 4))),
    Case("scatter_add", lambda lib, x, i: x.scatter_add(1, i, x[:, :2] * 2), ((3, 4), (3, 2))),
    Case("scatter_add_dim0", lambda lib, x, i: lib.scatter_add(x, 0, i, x.flip(0)[:2]), ((3, 4), (2, 4))),
    Case("index_select", lambda lib, x, i: x.index_select(0, i.flatten()), ((3, 4), (2, 2))),
    Case("index_select_dim1", lambda lib, x, i: lib.index_select(x, 1, i.flatten()), ((3, 4), (3, 1))),
    Case("index_add", lambda lib, x, i: x.index_add(0, i.flatten(), x[:2] * 3), ((3, 4), (2, 1))),
    Case("index_add_alpha", lambda lib, x, i: lib.index_add(x, 1, i.flatten(), x[:, :2], alpha=2.0),
         ((3, 4), (2, 1))),
    Case("take_along_dim", lambda lib, x, i: lib.take_along_dim(x, i, 1), ((3, 4), (3, 2))),
    Case("take_along_dim_broadcast", lambda lib, x, i: lib.take_along_dim(x, i[:1], 1), ((3, 4), (3, 2))),
    Case("take_along_dim_flat", lambda lib, x, i: lib.take_along_dim(x, i.flatten()), ((3, 4), (3, 2))),
    Case("index_put", lambda lib, x, i: x.index_put((i[:, 0],), x[:3, 0].unsqueeze(-1) * 2), ((3, 4), (3, 2))),
    Case("index_put_accumulate", lambda lib, x, i: lib.index_put(x, (i[:, 0], i[:, 1]), x[0, :3], accumulate=True),
         ((3, 4), (3, 2))),
]


@pytest.mark.parametrize("case", OPS, ids=[c.name for c in OPS])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_index_ops(case, dtype):
    x_shape, i_shape = case.shape
    assert_parity(case.fn, make_tensor(x_shape, dtype), _index(i_shape, 2))


@pytest.mark.parametrize("case", OPS, ids=[c.name for c in OPS])
def test_index_ops_noncontiguous(case):
    x_shape, i_shape = case.shape
    assert_parity(case.fn, make_tensor(x_shape), _index(i_shape, 2), noncontiguous=True)


# Writes to a repeated index keep one of the values (which one is unspecified, as in
# PyTorch), so the non-accumulating ops are gradchecked with distinct indices.
DISTINCT = ember.tensor([[1, 0], [0, 2], [2, 1]])


@pytest.mark.parametrize("case", OPS, ids=[c.name for c in OPS])
def test_index_ops_gradcheck(case):
    x_shape, i_shape = case.shape
    x = ember.tensor(make_tensor(x_shape, "float64"), requires_grad=True)
    writes = case.name in ("scatter", "index_put")
    index = DISTINCT if writes else ember.tensor(_index(i_shape, 2))
    assert ember.autograd.gradcheck(lambda t: case.fn(ember, t, index), (x,))


MASKED = [
    Case("masked_fill", lambda lib, x, m: x.masked_fill(m, -1.0), ((3, 4), (3, 4))),
    Case("masked_fill_broadcast", lambda lib, x, m: lib.masked_fill(x, m[0], 2), ((3, 4), (3, 4))),
    Case("masked_fill_tensor", lambda lib, x, m: x.masked_fill(m, x.sum()), ((3, 4), (3, 4))),
    Case("masked_fill_larger_mask", lambda lib, x, m: x[0].masked_fill(m, 2.0), ((3, 4), (3, 4))),
    Case("masked_fill_in_place_larger_mask", lambda lib, x, m: (x[0] * 1).masked_fill_(m, 2.0), ((3, 4), (3, 4))),
    Case("masked_select", lambda lib, x, m: x.masked_select(m), ((3, 4), (3, 4))),
    Case("masked_select_broadcast", lambda lib, x, m: lib.masked_select(x, m[:1]), ((3, 4), (3, 4))),
    Case("where", lambda lib, x, m: lib.where(m, x, x * 2), ((3, 4), (3, 4))),
    Case("where_scalar", lambda lib, x, m: lib.where(m[0], x, 0.5), ((3, 4), (3, 4))),
    Case("where_cond_only", lambda lib, x, m: lib.where(m), ((3, 4), (3, 4))),
    Case("where_0d_cond", lambda lib, x, m: lib.where(m[0, 0]), ((3, 4), (3, 4))),
    Case("where_0d_true", lambda lib, x, m: lib.where(m[0, 0] | True), ((3, 4), (3, 4))),
    Case("nonzero_0d_tuple", lambda lib, x, m: lib.nonzero(x[0, 0], as_tuple=True), ((3, 4), (3, 4))),
    Case("nonzero", lambda lib, x, m: lib.nonzero(m), ((3, 4), (3, 4))),
    Case("nonzero_tuple", lambda lib, x, m: x.nonzero(as_tuple=True), ((3, 4), (3, 4))),
    Case("nonzero_0d", lambda lib, x, m: lib.nonzero(x[0, 0]), ((3, 4), (3, 4))),
    Case("argwhere", lambda lib, x, m: lib.argwhere(x > 0), ((3, 4), (3, 4))),
    Case("nonzero_empty", lambda lib, x, m: lib.nonzero(x[:0]), ((3, 4), (3, 4))),
]


@pytest.mark.parametrize("case", MASKED, ids=[c.name for c in MASKED])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_masked_ops(case, dtype):
    x_shape, m_shape = case.shape
    assert_parity(case.fn, make_tensor(x_shape, dtype), make_tensor(m_shape, "bool", seed=3))


@pytest.mark.parametrize("case", MASKED, ids=[c.name for c in MASKED])
def test_masked_ops_noncontiguous(case):
    x_shape, m_shape = case.shape
    assert_parity(case.fn, make_tensor(x_shape), make_tensor(m_shape, "bool", seed=3), noncontiguous=True)


INDEX_EDGES = [
    Case("gather_int32_index", lambda lib, x: x.gather(0, lib.tensor([[0]], dtype=lib.int32))),
    Case("gather_out_of_range", lambda lib, x: x.gather(0, lib.tensor([[5]]))),
    Case("gather_ndim", lambda lib, x: x.gather(0, lib.tensor([0]))),
    Case("index_select_2d", lambda lib, x: x.index_select(0, lib.tensor([[0]]))),
    Case("index_select_out_of_range", lambda lib, x: x.index_select(0, lib.tensor([7]))),
    Case("masked_fill_int_mask", lambda lib, x: x.masked_fill(lib.tensor([1, 0, 1, 0]), 0.0)),
    Case("where_int_cond", lambda lib, x: lib.where(lib.ones(3, 4, dtype=lib.int64), x, x)),
    Case("scatter_dtype", lambda lib, x: x.scatter(0, lib.tensor([[0]]), lib.ones(1, 1, dtype=lib.float64))),
    Case("index_add_dtype", lambda lib, x: x.index_add(0, lib.tensor([0]), lib.ones(1, 4, dtype=lib.float64))),
    # Unlike a subscript, gather and index_select refuse a negative index; take_along_dim along a dim wraps it.
    Case("gather_negative", lambda lib, x: x.gather(1, lib.tensor([[-1]]))),
    Case("index_select_negative", lambda lib, x: x.index_select(0, lib.tensor([-1]))),
    Case("take_along_dim_negative", lambda lib, x: lib.take_along_dim(x, lib.tensor([[-4, -1]]), 1)),
    Case("take_along_dim_flat_negative", lambda lib, x: lib.take_along_dim(x, lib.tensor([-1]))),
    # An empty index is not checked: any dtype, any shape.
    Case("gather_empty_index", lambda lib, x: x.gather(1, lib.ones(0, 5, 7, dtype=lib.int64))),
    Case("gather_empty_float_index", lambda lib, x: x.gather(1, lib.ones(0))),
    # A 0-d input indexes like a one-element vector and stays 0-d.
    Case("index_select_0d", lambda lib, x: x[0, 0].index_select(0, lib.tensor([0]))),
    Case("index_select_0d_index", lambda lib, x: x.index_select(1, lib.tensor(2))),
    Case("index_add_0d", lambda lib, x: x[0, 0].index_add(0, lib.tensor([0]), x[1, 1], alpha=2)),
    Case("index_add_0d_bool", lambda lib, x: (x[0, 0] > 0).index_add(0, lib.tensor([0]), x[1, 1] > 0)),
]


@pytest.mark.parametrize("case", INDEX_EDGES, ids=[c.name for c in INDEX_EDGES])
def test_index_op_edge_cases_and_errors(case):
    assert_parity(case.fn, make_tensor((3, 4)))


INDEX_RANGE_ERRORS = [
    lambda lib, x: x.gather(1, lib.tensor([[1, -5, 9]])),
    lambda lib, x: x.gather(0, lib.tensor([[-1]])),
    lambda lib, x: x.scatter(1, lib.tensor([[7]]), lib.ones(1, 1)),
    lambda lib, x: x.scatter_add(1, lib.tensor([[-1]]), lib.ones(1, 1)),
    lambda lib, x: x.index_add(1, lib.tensor([0, -1]), lib.ones(3, 2)),
    lambda lib, x: x[0, 0].gather(0, lib.tensor([1])),
]


@pytest.mark.parametrize("fn", INDEX_RANGE_ERRORS)
def test_index_out_of_range_message_names_the_first_bad_index_and_its_dim(fn):
    import torch

    with pytest.raises(RuntimeError) as expected:
        fn(torch, torch.zeros(3, 4))
    with pytest.raises(RuntimeError) as got:
        fn(ember, ember.zeros(3, 4))
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("make_key", [lambda lib, x: [0, 1], lambda lib, x: x > 2])
def test_advanced_setitem_from_overlapping_memory_raises_like_torch(make_key):
    def write(lib, x):
        y = x.clone()
        y[make_key(lib, y)] = y[3:]
        return y

    assert_parity(write, np.arange(5.0), grad=False)
