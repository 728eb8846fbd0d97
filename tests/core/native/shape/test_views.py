"""View ops of ember/native/shape/views.py against torch where issue 11 found them apart:
``as_strided`` over memory that is not row-major, writes into expanded tensors (NOTE
[ Writing into overlapping memory ] in native/_inplace.py), and when ``reshape`` views.
(The layout of every view op is compared in test_shape.py and test_view_properties.py.)
"""

import warnings

import numpy as np
import pytest
import torch

import ember

# Tensors whose memory is dense but not row-major: clones keep their input's dim order.
NOT_ROW_MAJOR = {
    "clone_of_transpose": lambda lib: lib.arange(6.0).reshape(2, 3).t().clone(),
    "clone_of_permute": lambda lib: lib.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1).clone(),
}


@pytest.mark.parametrize("make", NOT_ROW_MAJOR, ids=list(NOT_ROW_MAJOR))
@pytest.mark.parametrize("geometry", [((2, 2), (1, 2), 1), ((3,), (2,), 0), ((2, 3), (3, 1), None)])
def test_as_strided_reads_memory_as_it_lies(make, geometry):
    size, stride, offset = geometry
    mine, theirs = NOT_ROW_MAJOR[make](ember), NOT_ROW_MAJOR[make](torch)
    assert mine.stride() == theirs.stride()
    np.testing.assert_array_equal(mine.as_strided(size, stride, offset).numpy(),
                                  theirs.as_strided(size, stride, offset).numpy())


@pytest.mark.parametrize("make", NOT_ROW_MAJOR, ids=list(NOT_ROW_MAJOR))
def test_write_through_as_strided_reaches_the_tensor(make):
    mine, theirs = NOT_ROW_MAJOR[make](ember), NOT_ROW_MAJOR[make](torch)
    mine.as_strided((2, 2), (1, 2), 1).mul_(-10)
    theirs.as_strided((2, 2), (1, 2), 1).mul_(-10)
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert mine._version == theirs._version


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_as_strided_gradient_on_non_row_major_input(dtype):
    data = np.arange(6.0).reshape(2, 3)
    grads = []
    for lib in (ember, torch):
        w = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        x = w.t().clone()
        weights = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=getattr(lib, dtype))
        (x.as_strided((2, 2), (1, 2), 1) * weights).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_array_equal(*grads)


# --- writes into expanded tensors ---------------------------------------------------


def _expanded(lib):
    return lib.zeros(3).expand(2, 3)


ALLOWED = {
    "fill_": lambda e, lib: e.fill_(2.0),
    "zero_": lambda e, lib: e.zero_(),
    "setitem_row": lambda e, lib: e.__setitem__(0, 5.0),
    "setitem_row_tensor": lambda e, lib: e.__setitem__(0, lib.tensor([1.0, 2.0, 3.0])),
    "row_mul_": lambda e, lib: e[1].add_(4.0),
    "empty_add_": lambda e, lib: lib.zeros(1, 0).expand(3, 0).add_(1),
    "size_one_expand": lambda e, lib: lib.zeros(3).expand(1, 3).add_(1),
}


@pytest.mark.parametrize("name", ALLOWED)
def test_writes_torch_allows_on_expanded_tensors(name):
    results = []
    for lib in (ember, torch):
        e = _expanded(lib)
        out = ALLOWED[name](e, lib)
        results.append((e.tolist(), e._version, None if out is None else out.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["fill_", "zero_"])
def test_fill_through_an_expanded_view_of_a_recorded_tensor(name):
    # One value everywhere: the write is well defined, and the base's history becomes CopySlices.
    results = []
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        base = x * 2
        view = base.expand(2, 3)
        ALLOWED[name](view, lib)
        results.append((base.tolist(), view.tolist(), type(base.grad_fn).__name__, type(view.grad_fn).__name__,
                        base._version, x.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("mask", [[True, False, True], [[True, False, False], [False, False, True]]])
def test_masked_fill_on_expanded_tensor_warns_and_fills_every_alias(mask):
    results = []
    for lib in (ember, torch):
        e = _expanded(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            e.masked_fill_(lib.tensor(mask), 7.0)
        messages = [str(w.message).split(" (Triggered")[0] for w in caught]
        results.append((e.tolist(), messages))
    assert results[0] == results[1]


REFUSED = {
    "add_": lambda e, lib: e.add_(1),
    "fill_0d_tensor": lambda e, lib: e.fill_(lib.tensor(3.0)),
    "mul_": lambda e, lib: e.mul_(2),
    "copy_": lambda e, lib: e.copy_(lib.ones(2, 3)),
    "copy_broadcast": lambda e, lib: e.copy_(lib.ones(3)),
    "setitem_all": lambda e, lib: e.__setitem__(slice(None), 5.0),
    "setitem_column": lambda e, lib: e.__setitem__((slice(None), 0), 5.0),
    "sigmoid_": lambda e, lib: e.sigmoid_(),
    "clamp_": lambda e, lib: e.clamp_(0, 1),
    "column_add_": lambda e, lib: e[:, 0].add_(1),
}


@pytest.mark.parametrize("name", REFUSED)
def test_writes_torch_refuses_on_expanded_tensors(name):
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            REFUSED[name](_expanded(lib), lib)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


# --- when reshape is a view -----------------------------------------------------------


RESHAPES = {
    "contiguous": lambda x: x.reshape(6),
    "same_shape": lambda x: x.reshape(2, 3),
    "strided_alias": lambda x: x.t().reshape(3, 2),
    "merge_needs_copy": lambda x: x.t().reshape(6),
    "slice_alias": lambda x: x[:, :2].reshape(2, 2),
    "flatten_needs_copy": lambda x: x.t().flatten(),
}


@pytest.mark.parametrize("name", RESHAPES)
def test_reshape_is_a_view_exactly_when_torchs_is(name):
    facts = []
    for lib in (ember, torch):
        base = lib.arange(6.0).reshape(2, 3).requires_grad_().clone()
        out = RESHAPES[name](base)
        facts.append((out._is_view(), out._base is base, out.grad_fn.name(), out.stride(), out.tolist()))
    assert facts[0] == facts[1]


# --- cases the differential fuzzer found (tests/core/fuzz) ---------------------------------


@pytest.mark.parametrize("program", [
    lambda lib: [list(p.shape) for p in lib.zeros(0, 3).split(2)],
    lambda lib: [list(p.shape) for p in lib.zeros(3, 0).split(1, 1)],
    lambda lib: [list(p.shape) for p in lib.zeros(0, 3).chunk(2)],
    lambda lib: (lambda y: (y._is_view(), y.tolist()))(lib.tensor(2.0).movedim(0, 0)),
    lambda lib: lib.tensor(1.0).expand([]).tolist(),
    lambda lib: (lambda x: (x.copy_(7.9), x.tolist(), x._version)[1:])(lib.zeros(3, dtype=lib.int64)),
    lambda lib: lib.zeros(2).copy_(True).tolist(),
    lambda lib: (lambda x: (x.mT is x, x.tolist()))(lib.tensor(2.0)),
    lambda lib: (lambda x, piece: (x.abs_(), piece.tolist())[1])(*(lambda x: (x, x.unbind()[0]))(lib.tensor([-4]))),
], ids=["split_empty_dim", "split_empty_dim_1", "chunk_empty_dim", "movedim_0d", "expand_0d_empty",
        "copy_float_into_int", "copy_bool", "mT_of_0d",
        "unbind_0d_piece_is_a_view"])
@pytest.mark.filterwarnings("ignore:Tensor.mT is deprecated on 0-D")
def test_fuzzer_findings_match_torch(program):
    assert program(ember) == program(torch)


def test_expand_without_sizes_raises_like_torch():
    messages = []
    for lib in (ember, torch):
        with pytest.raises(TypeError) as info:
            lib.ones(2).expand()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


COPIES_INTO_ALIASES = {
    "unsqueezed_self": lambda x: x[None, :].copy_(x),
    "shifted": lambda x: x[1:].copy_(x[:3]),
    "itself": lambda x: x.copy_(x),
    "interleaved": lambda x: x[::2].copy_(x[1::2]),
    "disjoint": lambda x: x[:2].copy_(x[2:]),
    "transposed_self": lambda x: x.reshape(2, 2).t().copy_(x.reshape(2, 2).t()),
    "setitem_shifted": lambda x: x.__setitem__(slice(1, None), x[:3]),
    "setitem_new_axis": lambda x: x.__setitem__(None, x),
    "setitem_ellipsis": lambda x: x.__setitem__(Ellipsis, x),
    "setitem_new_axis_and_slice": lambda x: x.__setitem__((None, slice(None)), x),
}


@pytest.mark.parametrize("name", COPIES_INTO_ALIASES)
def test_copy_between_aliases_of_one_memory_as_in_torch(name):
    # PyTorch refuses a copy between dense, partly overlapping ranges of one memory.
    results = []
    for lib in (ember, torch):
        x = lib.arange(4.0)
        try:
            COPIES_INTO_ALIASES[name](x)
            results.append(x.tolist())
        except RuntimeError as error:
            results.append(str(error))
    assert results[0] == results[1]
