"""Memory formats (ember/memory_format.py) against PyTorch: the strides of clone,
*_like and reductions (NOTE [ preserve_format ]), contiguous/is_contiguous with a
memory format, and the format objects."""

import pickle

import numpy as np
import pytest
import torch

import ember

LAYOUTS = {
    "contiguous": lambda lib: lib.zeros(3, 4),
    "transpose": lambda lib: lib.zeros(3, 4).t(),
    "permute": lambda lib: lib.zeros(2, 3, 4).permute(2, 0, 1),
    "expanded_row": lambda lib: lib.zeros(1, 4).expand(3, 4),
    "expanded_column": lambda lib: lib.zeros(3, 1).expand(3, 4),
    "expanded_transposed": lambda lib: lib.zeros(2, 1, 3).expand(2, 5, 3).transpose(0, 2),
    "sliced": lambda lib: lib.zeros(4, 6)[:, ::2],
    "sliced_transpose": lambda lib: lib.zeros(4, 6).t()[::2],
    "size_one_dims": lambda lib: lib.zeros(3, 1, 4).permute(1, 2, 0),
    "sliced_permuted_4d": lambda lib: lib.zeros(2, 3, 4, 5)[:, :, ::2].permute(0, 3, 1, 2),
}
MAKERS = {
    "clone": lambda lib, x: x.clone(),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "ones_like": lambda lib, x: lib.ones_like(x),
    "empty_like": lambda lib, x: lib.empty_like(x),
    "full_like": lambda lib, x: lib.full_like(x, 2.0),
    "clone_contiguous": lambda lib, x: x.clone(memory_format=lib.contiguous_format),
    "zeros_like_contiguous": lambda lib, x: lib.zeros_like(x, memory_format=lib.contiguous_format),
    "sum_keepdim": lambda lib, x: x.sum(0, keepdim=True),
    "sum_last": lambda lib, x: x.sum(-1),
    "mean_keepdim": lambda lib, x: x.mean(-1, keepdim=True),
    "amax_keepdim": lambda lib, x: x.amax(0, keepdim=True),
    "sort": lambda lib, x: x.sort(dim=0, stable=True).indices,
    "topk": lambda lib, x: x.topk(1, 0).values,
    "cumsum": lambda lib, x: x.cumsum(-1),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("maker", MAKERS)
def test_strides_match_torch(layout, maker):
    expected = MAKERS[maker](torch, LAYOUTS[layout](torch))
    actual = MAKERS[maker](ember, LAYOUTS[layout](ember))
    assert tuple(actual.shape) == tuple(expected.shape)
    assert actual.stride() == expected.stride()
    if maker != "empty_like":
        np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_clone_keeps_values_of_a_transpose():
    x = ember.arange(12.0).reshape(3, 4).t()
    y = x.clone()
    assert y.stride() == (1, 4) and (y.numpy() == x.numpy()).all()


@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last", "preserve_format"])
def test_contiguous_and_is_contiguous_with_a_format(fmt):
    def make(lib):
        return lib.arange(120.0).reshape(2, 3, 4, 5)

    e, t = make(ember), make(torch)
    if fmt != "preserve_format":
        assert e.is_contiguous(memory_format=getattr(ember, fmt)) == t.is_contiguous(memory_format=getattr(torch, fmt))
        e2, t2 = e.contiguous(memory_format=getattr(ember, fmt)), t.contiguous(memory_format=getattr(torch, fmt))
        assert e2.stride() == t2.stride() and (e2.numpy() == t2.numpy()).all()
        assert e2.is_contiguous(memory_format=getattr(ember, fmt))
    e3 = ember.empty_like(e, memory_format=getattr(ember, fmt))
    assert e3.stride() == torch.empty_like(t, memory_format=getattr(torch, fmt)).stride()


def test_format_objects_print_and_pickle_like_torch():
    for name in ("preserve_format", "contiguous_format", "channels_last"):
        fmt = getattr(ember, name)
        assert repr(fmt) == repr(getattr(torch, name)).replace("torch", "ember")
        assert pickle.loads(pickle.dumps(fmt)) is fmt


# NOTE [ The layout of an advanced index ] (ember/native/indexing.py)
INDEX_KEYS = {
    "last_dim": lambda lib: (slice(None), slice(None), [0, 1]),
    "first_dim": lambda lib: ([0, 1],),
    "middle_dim": lambda lib: (slice(None), [0, 1]),
    "ellipsis_2d_index": lambda lib: (Ellipsis, [[0], [1]]),
    "separated": lambda lib: ([0, 1], slice(None), [1, 0]),
    "mask": lambda lib: (lib.tensor([True, False, True]),),
    "tensor_2d": lambda lib: (slice(None), lib.tensor([[0, 1], [1, 0]])),
    "int_and_list": lambda lib: (0, slice(None), [0, 1]),
}
INDEXED = {
    "permuted": lambda lib: lib.arange(24.0).reshape(2, 3, 4).permute(2, 1, 0),
    "transposed": lambda lib: lib.arange(12.0).reshape(3, 4).t(),
    "sliced": lambda lib: lib.arange(24.0).reshape(4, 6)[:, ::2],
}


@pytest.mark.parametrize("source", INDEXED)
@pytest.mark.parametrize("key", INDEX_KEYS)
def test_advanced_index_layout_matches_torch(source, key):
    t, e = INDEXED[source](torch), INDEXED[source](ember)
    try:
        expected = t[INDEX_KEYS[key](torch)]
    except (IndexError, RuntimeError):
        return  # the key does not fit this shape: tests/core/native/test_indexing.py covers errors
    actual = e[INDEX_KEYS[key](ember)]
    assert actual.stride() == expected.stride()
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_tensor_to_memory_format_aliases_like_torch():
    # PyTorch returns the tensor itself when its strides already suggest the format,
    # even a non-contiguous one; otherwise a copy in that format.
    def cases(lib):
        x = lib.arange(120.0).reshape(2, 3, 4, 5)
        return [x, x.permute(0, 1, 3, 2), x.contiguous(memory_format=lib.channels_last), x[:, :, ::2]]

    for fmt in ("channels_last", "contiguous_format"):
        for e, t in zip(cases(ember), cases(torch)):
            e2, t2 = e.to(memory_format=getattr(ember, fmt)), t.to(memory_format=getattr(torch, fmt))
            assert (e2 is e) == (t2 is t)
            assert e2.stride() == t2.stride() and (e2.numpy() == t2.numpy()).all()
            e3, t3 = e.to(ember.float64, memory_format=getattr(ember, fmt)), t.to(torch.float64,
                                                                                  memory_format=getattr(torch, fmt))
            assert e3.stride() == t3.stride() and e3.dtype == ember.float64


def test_module_to_channels_last_lays_out_4d_parameters_only():
    def model(lib):
        return lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Flatten(), lib.nn.Linear(4, 2))

    e, t = model(ember), model(torch)
    e.to(memory_format=ember.channels_last)
    t.to(memory_format=torch.channels_last)
    strides_e = {k: v.stride() for k, v in e.state_dict().items()}
    strides_t = {k: v.stride() for k, v in t.state_dict().items()}
    assert strides_e == strides_t
    assert e[0].weight.is_contiguous(memory_format=ember.channels_last) and not e[0].weight.is_contiguous()
