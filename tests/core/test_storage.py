"""``untyped_storage()``, ``storage_offset()`` and ``data_ptr()`` (ember/storage.py)
against PyTorch: views share one storage, copies get their own."""

import numpy as np
import pytest
import torch

import ember


def _pair():
    return ember.arange(24.0).reshape(2, 3, 4), torch.arange(24.0).reshape(2, 3, 4)


VIEWS = [
    ("select", lambda x: x[1]),
    ("slice_step", lambda x: x[:, 1:, ::2]),
    ("transpose", lambda x: x.transpose(0, 2)),
    ("expand", lambda x: x[:, :1].expand(2, 5, 4)),
    ("as_strided", lambda x: x.as_strided((2, 2), (5, 1), 3)),
    ("as_strided_of_view", lambda x: x[1].as_strided((2, 2), (1, 2))),
    ("element", lambda x: x[1, 2, 3]),
]


@pytest.mark.parametrize("name,fn", VIEWS, ids=[n for n, _ in VIEWS])
def test_views_share_storage(name, fn):
    x, t = _pair()
    v, tv = fn(x), fn(t)
    assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert v.untyped_storage() == x.untyped_storage()
    assert v.storage_offset() == tv.storage_offset()
    assert v.data_ptr() - x.data_ptr() == tv.data_ptr() - t.data_ptr()
    assert v.untyped_storage().nbytes() == tv.untyped_storage().nbytes()
    np.testing.assert_array_equal(v.numpy(), tv.numpy())


def test_copies_have_their_own_storage():
    x, _ = _pair()
    for copy in (x.clone(), x.transpose(0, 1).contiguous(), x[[0]], x.flip(0), x * 1):
        assert copy.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
        assert copy.storage_offset() == 0


def test_storage_sizes_and_bytes_match_torch():
    x, t = ember.tensor([1.0, 2.5], dtype=ember.float32), torch.tensor([1.0, 2.5], dtype=torch.float32)
    assert len(x.untyped_storage()) == len(t.untyped_storage()) == 8
    assert x.untyped_storage().tolist() == t.untyped_storage().tolist()
    assert x.untyped_storage().element_size() == 1
    assert x.untyped_storage().device == ember.device("cpu")


def test_view_dtype_shares_storage():
    x = ember.zeros(4)
    assert x.view(ember.int32).untyped_storage() == x.untyped_storage()
