"""Laws of views and broadcasting, checked on random inputs with Hypothesis
(MiniTorch's tensor_strategies.py style) against PyTorch.

A random shape and a random chain of view ops (transpose, permute, narrow, unsqueeze,
expand, select, slicing with a step) applied to the same data in ember and torch give
equal values, strides, storage offsets and contiguity, and the result still shares
memory with the base. Strides and offsets are compared for non-empty results only:
ember reports contiguous strides and NumPy's offset for empty tensors.

Every view op is a view (``_is_view()``, ``_base``) exactly when torch's is, decided
by the op, not by whether memory happens to be shared.

Random pairs of shapes broadcast (``broadcast_shapes``, ``a + b``) to torch's shape,
or fail like torch.
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@st.composite
def view_chains(draw):
    """A start shape and a list of (op name, args) valid for it, applied in order."""
    start_shape = draw(shapes)
    shape = list(start_shape)
    ops = []
    for _ in range(draw(st.integers(1, 5))):
        ndim = len(shape)
        choices = ["unsqueeze"] + (["transpose", "permute", "narrow", "select", "slice", "expand"] if ndim else [])
        op = draw(st.sampled_from(choices))
        if op == "unsqueeze":
            dim = draw(st.integers(-ndim - 1, ndim))
            args = (dim,)
            shape.insert(dim % (ndim + 1), 1)
        elif op == "transpose":
            args = (draw(st.integers(-ndim, ndim - 1)), draw(st.integers(-ndim, ndim - 1)))
            a, b = args[0] % ndim, args[1] % ndim
            shape[a], shape[b] = shape[b], shape[a]
        elif op == "permute":
            args = tuple(draw(st.permutations(range(ndim))))
            shape = [shape[d] for d in args]
        elif op == "narrow":
            dim = draw(st.integers(0, ndim - 1))
            start = draw(st.integers(0, shape[dim]))
            length = draw(st.integers(0, shape[dim] - start))
            args = (dim, start, length)
            shape[dim] = length
        elif op == "select":
            dim = draw(st.integers(0, ndim - 1))
            if shape[dim] == 0:
                continue
            args = (dim, draw(st.integers(-shape[dim], shape[dim] - 1)))
            del shape[dim]
        elif op == "slice":
            dim = draw(st.integers(0, ndim - 1))
            start = draw(st.one_of(st.none(), st.integers(-5, 5)))
            stop = draw(st.one_of(st.none(), st.integers(-5, 5)))
            step = draw(st.integers(1, 3))
            args = (dim, slice(start, stop, step))
            shape[dim] = len(range(*slice(start, stop, step).indices(shape[dim])))
        else:  # expand: size-1 dims grow, and maybe a new leading dim
            new = [draw(st.integers(1, 3)) if s == 1 else s for s in shape]
            lead = draw(st.lists(st.integers(1, 3), max_size=1))
            args = tuple(lead + new)
            shape = list(args)
        ops.append((op, args))
    return start_shape, ops


def apply(x, ops):
    for op, args in ops:
        if op == "slice":
            dim, key = args
            x = x[(slice(None),) * dim + (key,)]
        else:
            x = getattr(x, op)(*args)
    return x


@settings(max_examples=100, deadline=None)
@given(chain=view_chains(), noncontiguous=st.booleans())
def test_view_chain_matches_torch(chain, noncontiguous):
    shape, ops = chain
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    if noncontiguous and data.ndim and data.size:  # same values, every other element
        wide = np.repeat(data, 2, axis=-1)
        x, t = ember.from_numpy(wide.copy())[..., ::2], torch.from_numpy(wide.copy())[..., ::2]
    else:
        x, t = ember.tensor(data), torch.tensor(data)
    out, expected = apply(x, ops), apply(t, ops)
    assert tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert out.is_contiguous() == expected.is_contiguous()
    if expected.numel():
        assert out.stride() == expected.stride()
        assert out.storage_offset() == expected.storage_offset()
        assert out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert out is x or out._base is (x if x._base is None else x._base)


@settings(max_examples=100, deadline=None)
@given(chain=view_chains())
def test_write_through_view_chain_reaches_base(chain):
    shape, ops = chain
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x, t = ember.tensor(data), torch.tensor(data)
    out, expected = apply(x, ops), apply(t, ops)
    # A view whose own elements overlap (through expand) refuses the write in both.
    try:
        expected.mul_(-1)
    except RuntimeError as error:
        with pytest.raises(RuntimeError, match="single memory location") as info:
            out.mul_(-1)
        assert str(info.value) == str(error)
        return
    out.mul_(-1)
    np.testing.assert_array_equal(x.numpy(), t.numpy())


def _broadcastable_pair(draw):
    a = draw(shapes)
    b = list(a[draw(st.integers(0, len(a))):])  # a suffix of a ...
    b = [draw(st.sampled_from([s, 1])) if draw(st.booleans()) else s for s in b]  # ... with some 1s
    return a, tuple(draw(st.lists(st.integers(1, 3), max_size=2)) + b)


broadcast_pairs = st.composite(_broadcastable_pair)()


@settings(max_examples=100, deadline=None)
@given(pair=st.one_of(broadcast_pairs, st.tuples(shapes, shapes)), swap=st.booleans())
def test_broadcast_shapes_match_torch(pair, swap):
    a, b = pair[::-1] if swap else pair
    try:
        expected = torch.broadcast_shapes(a, b)
    except RuntimeError:
        try:
            ember.broadcast_shapes(a, b)
        except RuntimeError:
            pass
        else:
            raise AssertionError(f"torch refuses to broadcast {a} with {b}; ember did not")
        try:
            ember.zeros(a) + ember.zeros(b)
        except RuntimeError:
            return
        raise AssertionError(f"ember added tensors of shapes {a} and {b}") from None
    assert tuple(ember.broadcast_shapes(a, b)) == tuple(expected)
    assert tuple((ember.zeros(a) + ember.ones(b)).shape) == tuple(expected)


# Each entry: the op applied to a (2, 3) non-leaf base. torch decides view-ness from the
# op's schema; so does ember (Op(..., view=True)), so both agree on every entry.
VIEW_OPS = {
    "view": lambda x: x.view(6),
    "view_same_shape": lambda x: x.view(2, 3),
    "view_as": lambda x: x.view_as(x),
    "view_dtype": lambda x: x.view(x.dtype),
    "reshape_contiguous": lambda x: x.reshape(6),
    "reshape_same_shape": lambda x: x.reshape(2, 3),
    "reshape_alias": lambda x: x.t().reshape(3, 2),
    "reshape_copy": lambda x: x.t().reshape(6),
    "reshape_as": lambda x: x.reshape_as(x),
    "permute": lambda x: x.permute(1, 0),
    "transpose": lambda x: x.transpose(0, 1),
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "adjoint": lambda x: x.adjoint(),
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "expand": lambda x: x[:1].expand(4, 3),
    "expand_same": lambda x: x.expand(2, 3),
    "expand_as": lambda x: x.expand_as(x),
    "squeeze": lambda x: x.squeeze(),
    "squeeze_dim": lambda x: x[:1].squeeze(0),
    "squeeze_noop": lambda x: x.squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "flatten": lambda x: x.flatten(),
    "flatten_one_dim": lambda x: x.flatten(0, 0),
    "flatten_copy": lambda x: x.t().flatten(),
    "unflatten": lambda x: x.unflatten(1, (3, 1)),
    "narrow": lambda x: x.narrow(1, 0, 2),
    "select": lambda x: x.select(1, 1),
    "int_index": lambda x: x[:, 1],
    "slice": lambda x: x[:, 1:],
    "full_slice": lambda x: x[:],
    "ellipsis": lambda x: x[...],
    "none": lambda x: x[None],
    "unbind": lambda x: x.unbind(0)[1],
    "split": lambda x: x.split(1)[1],
    "split_with_sizes": lambda x: x.split([1, 1])[1],
    "chunk": lambda x: x.chunk(2)[0],
    "tensor_split": lambda x: x.tensor_split(2)[1],
    "movedim": lambda x: x.movedim(0, 1),
    "as_strided": lambda x: x.as_strided((2, 2), (1, 2)),
    "detach": lambda x: x.detach(),
    "data": lambda x: x.data,
    "contiguous": lambda x: x.contiguous(),
    "contiguous_copy": lambda x: x.t().contiguous(),
    "clone": lambda x: x.clone(),
    "index_tensor": lambda x: x[x.new_tensor([0]).long()],
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset": lambda x: x.diagonal(1),
}


def _view_facts(lib, name):
    base = lib.arange(6.0).reshape(2, 3).requires_grad_().clone()
    out = VIEW_OPS[name](base)
    return out._is_view(), out._base is base, out is base, out.requires_grad


@pytest.mark.parametrize("name", VIEW_OPS)
def test_view_ops_are_views_as_in_torch(name):
    assert _view_facts(ember, name) == _view_facts(torch, name)
