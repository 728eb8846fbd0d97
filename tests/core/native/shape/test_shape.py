"""Shape and view ops (ember/native/shape/views.py, splitting.py, shape.py) against PyTorch.

Each row of ``CASES`` is a name, a lambda run with ``lib = ember`` and ``lib = torch``
on the same input and the input's shape. Every row is checked for values, dtypes and
gradients (contiguous and non-contiguous inputs, several dtypes) and through float64
gradcheck. Rows of ``VIEWS`` are ops PyTorch documents as views: the tests check that
ember's result shares memory with its base both ways, reports the same ``stride()``,
``storage_offset()`` and ``is_contiguous()`` as torch, and that ``_base`` is the root.
Rows of ``COPIES`` must not share memory.
"""

from typing import Callable, NamedTuple

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor


class Case(NamedTuple):
    name: str
    fn: Callable
    shape: tuple


VIEWS = [
    Case("view", lambda lib, x: x.view(4, 6), (2, 3, 4)),
    Case("view_infer", lambda lib, x: x.view(-1, 2), (2, 3, 4)),
    Case("view_size1", lambda lib, x: x.view(1, 24, 1), (2, 3, 4)),
    Case("view_0d", lambda lib, x: x.view(1, 1), ()),
    Case("view_to_0d", lambda lib, x: x.view(()), (1, 1)),
    Case("view_empty", lambda lib, x: x.view(3, 0), (2, 0, 3)),
    Case("reshape_view", lambda lib, x: x.reshape(6, 4), (2, 3, 4)),
    Case("reshape_of_slice", lambda lib, x: x[:, :, ::2].reshape(6, 2), (2, 3, 4)),
    Case("permute", lambda lib, x: x.permute(2, 0, 1), (2, 3, 4)),
    Case("permute_neg", lambda lib, x: lib.permute(x, (-1, -3, -2)), (2, 3, 4)),
    Case("transpose", lambda lib, x: x.transpose(0, 2), (2, 3, 4)),
    Case("transpose_same", lambda lib, x: lib.transpose(x, 1, -2), (2, 3, 4)),
    Case("swapaxes", lambda lib, x: lib.swapaxes(x, 0, 1), (2, 3, 4)),
    Case("t", lambda lib, x: x.t(), (3, 4)),
    Case("t_1d", lambda lib, x: lib.t(x), (5,)),
    Case("T", lambda lib, x: x.T, (3, 4)),
    Case("mT", lambda lib, x: x.mT, (2, 3, 4)),
    Case("unsqueeze0", lambda lib, x: x.unsqueeze(0), (2, 3, 4)),
    Case("unsqueeze_mid", lambda lib, x: x.unsqueeze(2), (2, 3, 4)),
    Case("unsqueeze_last", lambda lib, x: x.unsqueeze(-1), (2, 3, 4)),
    Case("unsqueeze_0d", lambda lib, x: x.unsqueeze(0), ()),
    Case("unsqueeze_of_transpose", lambda lib, x: x.transpose(0, 2).unsqueeze(1), (2, 3, 4)),
    Case("squeeze_all", lambda lib, x: x.squeeze(), (2, 1, 3, 1)),
    Case("squeeze_dim", lambda lib, x: x.squeeze(1), (2, 1, 3, 1)),
    Case("squeeze_not1", lambda lib, x: x.squeeze(0), (2, 1, 3, 1)),
    Case("squeeze_dims", lambda lib, x: x.squeeze((1, -1)), (2, 1, 3, 1)),
    Case("squeeze_0d", lambda lib, x: x.squeeze(), ()),
    Case("expand", lambda lib, x: x.expand(2, 3, 4), (2, 1, 4)),
    Case("expand_new_dims", lambda lib, x: x.expand(5, 1, 3, 4), (3, 1)),
    Case("expand_minus1", lambda lib, x: x.expand(-1, 4), (3, 1)),
    Case("expand_same", lambda lib, x: x.expand(3, 1), (3, 1)),
    Case("expand_0d", lambda lib, x: x.expand(2, 3), ()),
    Case("expand_as", lambda lib, x: x.expand_as(lib.zeros(4, 3, 2)), (3, 1)),
    Case("broadcast_to", lambda lib, x: lib.broadcast_to(x, (2, 3, 4)), (3, 1)),
    Case("flatten", lambda lib, x: x.flatten(), (2, 3, 4)),
    Case("flatten_part", lambda lib, x: x.flatten(1), (2, 3, 4)),
    Case("flatten_of_slice", lambda lib, x: x[:, :, 1].flatten(1), (2, 3, 4)),
    Case("flatten_0d", lambda lib, x: x.flatten(), ()),
    Case("unflatten", lambda lib, x: x.unflatten(2, (2, 2)), (2, 3, 4)),
    Case("unflatten_infer", lambda lib, x: x.unflatten(-1, (-1, 1)), (2, 3, 4)),
    Case("unflatten_of_transpose", lambda lib, x: x.transpose(0, 2).unflatten(0, (2, 2)), (2, 3, 4)),
    Case("narrow", lambda lib, x: x.narrow(1, 1, 2), (2, 3, 4)),
    Case("narrow_neg_start", lambda lib, x: lib.narrow(x, -1, -3, 2), (2, 3, 4)),
    Case("narrow_tensor_start", lambda lib, x: x.narrow(0, lib.tensor(1), 2), (4, 3)),
    Case("select", lambda lib, x: x.select(1, -1), (2, 3, 4)),
    Case("select_to_0d", lambda lib, x: lib.select(x, 0, 2), (4,)),
    Case("movedim", lambda lib, x: x.movedim(0, -1), (2, 3, 4)),
    Case("movedim_many", lambda lib, x: lib.movedim(x, (0, 1), (2, 0)), (2, 3, 4)),
    Case("moveaxis", lambda lib, x: lib.moveaxis(x, -1, 0), (2, 3, 4)),
    Case("as_strided", lambda lib, x: x.as_strided((3, 3), (4, 1), 2), (4, 4)),
    Case("getitem_int", lambda lib, x: x[1], (2, 3, 4)),
    Case("getitem_all_ints", lambda lib, x: x[1, 2, -1], (2, 3, 4)),
    Case("getitem_slices", lambda lib, x: x[:, 1:, ::2], (2, 3, 4)),
    Case("getitem_none", lambda lib, x: x[None, :, None, 1], (2, 3, 4)),
    Case("getitem_ellipsis", lambda lib, x: x[..., 1::3, None], (2, 3, 4)),
    Case("getitem_0d_tensor", lambda lib, x: x[lib.tensor(1)], (2, 3, 4)),
    Case("split_piece", lambda lib, x: x.split(2, 1)[1], (2, 5, 4)),
    Case("split_sizes_piece", lambda lib, x: lib.split(x, [1, 3], -1)[1], (2, 5, 4)),
    Case("chunk_piece", lambda lib, x: x.chunk(3, 2)[1], (2, 3, 5)),
    Case("tensor_split_piece", lambda lib, x: lib.tensor_split(x, (1, 3), 1)[1], (2, 5, 4)),
    Case("unbind_piece", lambda lib, x: x.unbind(1)[2], (2, 3, 4)),
    Case("view_as", lambda lib, x: x.view_as(lib.zeros(6, 4)), (2, 3, 4)),
]

COPIES = [
    Case("flip", lambda lib, x: x.flip(0, 2) if lib is torch else x.flip((0, 2)), (2, 3, 4)),
    Case("roll", lambda lib, x: x.roll(1, 2), (2, 3, 4)),
    Case("repeat", lambda lib, x: x.repeat(2, 1, 1), (2, 3, 4)),
    Case("cat", lambda lib, x: lib.cat([x, x], 1), (2, 3, 4)),
    Case("stack", lambda lib, x: lib.stack([x, x]), (2, 3, 4)),
    Case("reshape_copy", lambda lib, x: x.transpose(0, 1).reshape(6, 4), (2, 3, 4)),
    Case("flatten_copy", lambda lib, x: x.transpose(0, 2).flatten(), (2, 3, 4)),
    Case("flatten_copy_of_slice", lambda lib, x: x[:, 1].flatten(), (2, 3, 4)),
    Case("getitem_list", lambda lib, x: x[[0, 1, 1]], (2, 3, 4)),
    Case("getitem_mask", lambda lib, x: x[x > 0], (2, 3, 4)),
    Case("repeat_interleave", lambda lib, x: x.repeat_interleave(2, 1), (2, 3, 4)),
]

OTHERS = [
    Case("flip_neg_dims", lambda lib, x: lib.flip(x, (-1,)), (3, 4)),
    Case("flip_0d", lambda lib, x: lib.flip(x, (0,)), ()),
    Case("flip_0d_neg", lambda lib, x: x.flip(-1), ()),
    Case("fliplr", lambda lib, x: lib.fliplr(x), (3, 4)),
    Case("flipud", lambda lib, x: lib.flipud(x), (3, 4)),
    Case("roll_flat", lambda lib, x: x.roll(5), (3, 4)),
    Case("roll_many", lambda lib, x: lib.roll(x, (1, -2), (0, 1)), (3, 4)),
    Case("roll_0d", lambda lib, x: x.roll(1), ()),
    Case("repeat_new_dims", lambda lib, x: x.repeat(2, 3, 1), (2, 3)),
    Case("repeat_0d", lambda lib, x: x.repeat(3), ()),
    Case("tile", lambda lib, x: x.tile((2,)), (2, 3)),
    Case("tile_more", lambda lib, x: lib.tile(x, (2, 1, 2)), (2, 3)),
    Case("cat_neg_dim", lambda lib, x: lib.cat([x, x * 2, x[:, :1]], -1), (2, 3)),
    Case("cat_skips_empty_1d", lambda lib, x: lib.cat([x, lib.zeros(0, dtype=x.dtype), x]), (2, 3)),
    Case("concat", lambda lib, x: lib.concat([x, x]), (2, 3)),
    Case("stack_last", lambda lib, x: lib.stack([x, x * 2], -1), (2, 3)),
    Case("stack_0d", lambda lib, x: lib.stack([x, x]), ()),
    Case("hstack", lambda lib, x: lib.hstack([x, x]), (2, 3)),
    Case("hstack_1d", lambda lib, x: lib.hstack([x, x]), (3,)),
    Case("hstack_0d", lambda lib, x: lib.hstack([x, x]), ()),
    Case("vstack_1d", lambda lib, x: lib.vstack([x, x]), (3,)),
    Case("vstack_2d", lambda lib, x: lib.vstack([x, x]), (2, 3)),
    Case("split_all", lambda lib, x: x.split(2), (5, 3)),
    Case("split_sizes_all", lambda lib, x: x.split([2, 0, 3]), (5, 3)),
    Case("chunk_all", lambda lib, x: x.chunk(3, 1), (2, 5)),
    Case("chunk_more_than_size", lambda lib, x: x.chunk(4), (2, 3)),
    Case("chunk_empty", lambda lib, x: x.chunk(3), (0, 3)),
    Case("tensor_split_sections", lambda lib, x: x.tensor_split(3), (7, 2)),
    Case("tensor_split_indices", lambda lib, x: x.tensor_split([1, 5, 3, 9]), (7, 2)),
    Case("unbind_all", lambda lib, x: lib.unbind(x, -1), (2, 3)),
    Case("repeat_interleave_flat", lambda lib, x: x.repeat_interleave(3), (2, 3)),
    Case("repeat_interleave_tensor",
         lambda lib, x: x.repeat_interleave(lib.tensor([2, 0, 1]), dim=1), (2, 3)),
    Case("repeat_interleave_tensor_flat", lambda lib, x: lib.repeat_interleave(x, lib.tensor([1, 2, 3])), (3,)),
    Case("repeat_interleave_one_count", lambda lib, x: x.repeat_interleave(lib.tensor([2]), dim=0), (3, 2)),
    Case("movedim_to_front", lambda lib, x: lib.movedim(x, (2, 1), (0, 1)), (2, 3, 4)),
    Case("broadcast_tensors", lambda lib, x: lib.broadcast_tensors(x, x.unsqueeze(-1)), (3, 1)),
    Case("reshape_0d", lambda lib, x: x.reshape(-1), ()),
    Case("reshape_empty", lambda lib, x: x.reshape(3, 0, 2), (2, 0, 3)),
    Case("reshape_empty_ambiguous", lambda lib, x: x.reshape(0, 2, -1), (2, 0, 3)),
]

ALL = VIEWS + COPIES + OTHERS


@pytest.mark.parametrize("case", ALL, ids=[c.name for c in ALL])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_values_and_gradients(case, dtype):
    assert_parity(case.fn, make_tensor(case.shape, dtype))


# A tensor of only size-1 dims is contiguous whatever its strides.
STRIDED = [c for c in ALL if any(s > 1 for s in c.shape)]


@pytest.mark.parametrize("case", STRIDED, ids=[c.name for c in STRIDED])
def test_noncontiguous_input(case):
    assert_parity(case.fn, make_tensor(case.shape), noncontiguous=True)


DIFFERENTIABLE = [c for c in ALL if c.name not in ("getitem_mask", "reshape_empty_ambiguous")]


@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=[c.name for c in DIFFERENTIABLE])
def test_gradcheck(case):
    x = ember.tensor(make_tensor(case.shape, "float64"), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: case.fn(ember, t), (x,))


# --- views share memory like PyTorch's --------------------------------------------------


def _both(shape, noncontiguous=False):
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    if noncontiguous:  # the same values, every other element of a wider tensor
        wide = np.repeat(data, 2, axis=-1) if data.ndim else data
        return (ember.from_numpy(wide.copy())[..., ::2] if data.ndim else ember.tensor(data),
                torch.from_numpy(wide.copy())[..., ::2] if data.ndim else torch.tensor(data))
    return ember.tensor(data), torch.tensor(data)


def _root(t):
    return t if t._base is None else t._base


@pytest.mark.parametrize("noncontiguous", [False, True])
@pytest.mark.parametrize("case", VIEWS, ids=[c.name for c in VIEWS])
def test_view_layout_matches_torch(case, noncontiguous):
    noncontiguous = noncontiguous and case in STRIDED  # only size-1 dims: always contiguous
    base, tbase = _both(case.shape, noncontiguous)
    out, expected = case.fn(ember, base), case.fn(torch, tbase)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert out.is_contiguous() == expected.is_contiguous()
    if expected.numel():
        # Empty tensors: ember reports contiguous strides and NumPy's offset (see report).
        assert out.stride() == expected.stride()
        assert out.storage_offset() == expected.storage_offset()
    assert expected._base is not None and out._base is _root(base)


@pytest.mark.parametrize("case", [c for c in VIEWS if c.name != "expand_as" and "expand" not in c.name
                                  and c.name != "broadcast_to"],
                         ids=lambda c: c.name)
def test_view_writes_are_shared_both_ways(case):
    base, _ = _both(case.shape)
    out = case.fn(ember, base)
    assert out.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    if out.numel() == 0:
        return
    version = base._version
    out.fill_(-7.0)  # through the view ...
    assert base._version == version + 1 and out._version == base._version
    expected = torch.tensor(np.arange(base.numel(), dtype=np.float32).reshape(case.shape))
    case.fn(torch, expected).fill_(-7.0)
    np.testing.assert_array_equal(base.numpy(), expected.numpy())
    base.add_(1.0)  # ... and through the base
    expected.add_(1.0)
    np.testing.assert_array_equal(out.numpy(), case.fn(torch, expected).numpy())


def test_view_of_view_has_root_base():
    x = ember.zeros(4, 6)
    v = x[1:].t().unsqueeze(0)[0, ::2]
    assert v._base is x
    assert x.view(24).view(2, 12)._base is x


def test_view_dtype_shares_memory():
    x = ember.tensor([1.0, 2.0])
    as_int = x.view(ember.int32)
    assert as_int.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    # Not a view for autograd, as in torch (the bytes mean something else), but one memory and version.
    assert as_int._is_view() is torch.tensor([1.0]).view(torch.int32)._is_view() is False
    np.testing.assert_array_equal(as_int.numpy(), torch.tensor([1.0, 2.0]).view(torch.int32).numpy())
    as_int.add_(1)
    assert x._version == 1


@pytest.mark.parametrize("case", COPIES, ids=[c.name for c in COPIES])
def test_copying_ops_do_not_share_memory(case):
    base, _ = _both(case.shape)
    out = case.fn(ember, base)
    assert out._base is None
    before = base.numpy().copy()
    out.fill_(123.0)
    np.testing.assert_array_equal(base.numpy(), before)


def test_writing_into_expanded_tensor_raises():
    x = ember.zeros(3, 1).expand(3, 4)
    with pytest.raises(RuntimeError, match="single memory location"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="single memory location"):
        x[0] = 2.0
    y = ember.zeros(2, 3)
    y.expand(1, 2, 3).add_(1)  # nothing broadcast: writeable, as in PyTorch
    assert y.sum().item() == 6


def test_inplace_through_views_in_graph():
    def fn(lib, x, w):
        y = x * 1
        y.t()[1].mul_(w[:3])
        y.unsqueeze(0)[0, 2].add_(w)
        y.narrow(1, 0, 2).div_(2)
        return y * x

    assert_parity(fn, make_tensor((3, 4)), make_tensor((4,), seed=2))


# --- errors -----------------------------------------------------------------------------


ERRORS = [
    Case("view_non_viewable", lambda lib, x: x.t().view(-1), (3, 4)),
    Case("view_bad_size", lambda lib, x: x.view(5, 3), (3, 4)),
    Case("view_two_minus1", lambda lib, x: x.view(-1, -1), (3, 4)),
    Case("view_zero_minus1", lambda lib, x: x.view(0, -1), (0, 4)),
    Case("reshape_bad_size", lambda lib, x: x.reshape(7, -1), (3, 4)),
    Case("permute_wrong_len", lambda lib, x: x.permute(1, 0), (2, 3, 4)),
    Case("permute_duplicate", lambda lib, x: x.permute(0, 0, 1), (2, 3, 4)),
    Case("transpose_bad_dim", lambda lib, x: x.transpose(0, 3), (2, 3, 4)),
    Case("t_3d", lambda lib, x: x.t(), (2, 3, 4)),
    Case("mT_1d", lambda lib, x: x.mT, (3,)),
    Case("expand_bad", lambda lib, x: x.expand(2, 4), (2, 3)),
    Case("expand_fewer", lambda lib, x: x.expand(3), (2, 3)),
    Case("unsqueeze_bad", lambda lib, x: x.unsqueeze(4), (2, 3, 4)),
    Case("squeeze_bad", lambda lib, x: x.squeeze(3), (2, 3, 4)),
    Case("flatten_bad", lambda lib, x: x.flatten(2, 1), (2, 3, 4)),
    Case("unflatten_bad", lambda lib, x: x.unflatten(1, (2, 2)), (2, 3, 4)),
    Case("narrow_too_long", lambda lib, x: x.narrow(1, 2, 2), (2, 3, 4)),
    Case("select_oob", lambda lib, x: x.select(1, 3), (2, 3, 4)),
    Case("select_0d", lambda lib, x: x.select(0, 0), ()),
    Case("split_bad_sizes", lambda lib, x: x.split([1, 1]), (3,)),
    Case("chunk_zero", lambda lib, x: x.chunk(0), (3,)),
    Case("cat_shape_mismatch", lambda lib, x: lib.cat([x, x[:, :1].t()]), (2, 3)),
    Case("cat_ndim_mismatch", lambda lib, x: lib.cat([x, x[0]]), (2, 3)),
    Case("cat_0d", lambda lib, x: lib.cat([x, x]), ()),
    Case("cat_empty_list", lambda lib, x: lib.cat([]), (2,)),
    Case("stack_mismatch", lambda lib, x: lib.stack([x, x[:1]]), (2, 3)),
    Case("repeat_too_few", lambda lib, x: x.repeat(2), (2, 3)),
    Case("movedim_mismatch", lambda lib, x: x.movedim((0, 1), (1,)), (2, 3)),
    Case("repeat_interleave_bad_len",
         lambda lib, x: x.repeat_interleave(lib.tensor([1, 2]), dim=0), (3,)),
    Case("repeat_interleave_negative", lambda lib, x: x.repeat_interleave(-1), (3,)),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c.name for c in ERRORS])
def test_errors_match_torch(case):
    with pytest.raises(Exception) as torch_error:
        case.fn(torch, torch.zeros(case.shape))
    with pytest.raises(torch_error.type):
        case.fn(ember, ember.zeros(case.shape))


def test_error_messages():
    with pytest.raises(RuntimeError, match=r"view size is not compatible .* Use \.reshape\(\.\.\.\) instead"):
        ember.zeros(3, 4).t().view(12)
    with pytest.raises(RuntimeError, match=r"shape '\[5, 3\]' is invalid for input of size 12"):
        ember.zeros(3, 4).view(5, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.zeros(3, 4).transpose(0, 2)
    with pytest.raises(RuntimeError, match="must match the existing size"):
        ember.zeros(2, 3).expand(2, 4)


def test_broadcast_shapes():
    assert ember.broadcast_shapes((2, 1), (3,), (1, 1, 1)) == torch.broadcast_shapes((2, 1), (3,), (1, 1, 1))
    assert ember.broadcast_shapes() == torch.broadcast_shapes()
    with pytest.raises(RuntimeError):
        ember.broadcast_shapes((2,), (3,))


@pytest.mark.parametrize("shapes", [((2, 3), (4, 3)), ((3, 1), (1, 4), (5, 4)), ((3,), (2,)), ((5, 2), (3,)),
                                    (3, (2,))], ids=str)
def test_broadcast_mismatches_give_torchs_messages(shapes):
    for call in (lambda lib: lib.broadcast_shapes(*shapes),
                 lambda lib: lib.broadcast_tensors(*[lib.ones(s) for s in shapes])):
        with pytest.raises(RuntimeError) as expected:
            call(torch)
        with pytest.raises(RuntimeError) as actual:
            call(ember)
        assert str(actual.value) == str(expected.value)


def test_flip_of_0d_out_of_range_raises_like_torch():
    assert_parity(lambda lib, x: lib.flip(x, (1,)), make_tensor(()))


@pytest.mark.parametrize("shapes", [((5, 1), 5), (2, (3, 1)), (3,), ((2,), 3), (-1,), ((2, -1),)])
def test_broadcast_shapes_takes_ints_like_torch(shapes):
    results = []
    for lib in (ember, torch):
        try:
            results.append(tuple(lib.broadcast_shapes(*shapes)))
        except Exception as error:
            results.append(type(error))
    assert results[0] == results[1]
