"""nn.utils.rnn against torch: pad_sequence, pack_padded_sequence (sorted and not),
pack_sequence, pad_packed_sequence, PackedSequence, unpack/unpad; values, gradients
through packing and padding, errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close

E, T = ember.nn.utils.rnn, torch.nn.utils.rnn


def _sequences(lengths, trailing=(2,), dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, *trailing)).astype(dtype) for n in lengths]
    return ([ember.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _same_packed(e, t):
    assert_close(e.data, t.data)
    assert e.batch_sizes.tolist() == t.batch_sizes.tolist()
    assert e.batch_sizes.dtype == ember.int64
    for a, b in ((e.sorted_indices, t.sorted_indices), (e.unsorted_indices, t.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("trailing", [(), (2,), (2, 3)])
def test_pad_sequence(batch_first, padding_side, trailing):
    e_seqs, t_seqs = _sequences([3, 5, 1], trailing)
    e = E.pad_sequence(e_seqs, batch_first=batch_first, padding_value=-1.5, padding_side=padding_side)
    t = T.pad_sequence(t_seqs, batch_first=batch_first, padding_value=-1.5, padding_side=padding_side)
    assert_close(e, t)
    cotangent = np.random.default_rng(1).standard_normal(tuple(t.shape)).astype(np.float32)
    e.backward(ember.tensor(cotangent))
    t.backward(torch.tensor(cotangent))
    for a, b in zip(e_seqs, t_seqs):
        assert_close(a.grad, b.grad)


@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [5, 3, 3, 1]), (False, [3, 5, 1, 3]),
                                                     (False, [2, 2, 2, 2])])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_round_trip(enforce_sorted, lengths, batch_first):
    rng = np.random.default_rng(2)
    shape = (4, 5, 2) if batch_first else (5, 4, 2)
    array = rng.standard_normal(shape)
    e_x, t_x = ember.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)
    e_p = E.pack_padded_sequence(e_x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    t_p = T.pack_padded_sequence(t_x, torch.tensor(lengths), batch_first=batch_first, enforce_sorted=enforce_sorted)
    _same_packed(e_p, t_p)
    e_pad, e_len = E.pad_packed_sequence(e_p, batch_first=batch_first, padding_value=7.0, total_length=6)
    t_pad, t_len = T.pad_packed_sequence(t_p, batch_first=batch_first, padding_value=7.0, total_length=6)
    assert_close(e_pad, t_pad)
    assert e_len.tolist() == t_len.tolist() and e_len.dtype == ember.int64
    cotangent = rng.standard_normal(tuple(t_pad.shape))
    e_pad.backward(ember.tensor(cotangent))
    t_pad.backward(torch.tensor(cotangent))
    assert_close(e_x.grad, t_x.grad)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack(enforce_sorted):
    lengths = [4, 2, 1] if enforce_sorted else [2, 4, 1]
    e_seqs, t_seqs = _sequences(lengths)
    e_p, t_p = E.pack_sequence(e_seqs, enforce_sorted), T.pack_sequence(t_seqs, enforce_sorted)
    _same_packed(e_p, t_p)
    for a, b in zip(E.unpack_sequence(e_p), T.unpack_sequence(t_p)):
        assert_close(a, b)
    padded, lens = E.pad_packed_sequence(e_p)
    for a, b in zip(E.unpad_sequence(padded, lens), e_seqs):
        assert ember.equal(a, b)


def test_packed_sequence_construction_and_conversion():
    e_p = E.pack_sequence([ember.tensor([1, 2, 3]), ember.tensor([4, 5])], enforce_sorted=False)
    assert e_p.double().data.dtype == ember.float64 and e_p.double().batch_sizes.dtype == ember.int64
    assert e_p.to(ember.int64) is e_p
    assert not e_p.is_cuda
    data, batch_sizes, sorted_indices, unsorted_indices = e_p
    rebuilt = E.PackedSequence(data, batch_sizes, sorted_indices)
    assert rebuilt.unsorted_indices.tolist() == unsorted_indices.tolist()
    assert E.PackedSequence((data, batch_sizes)).sorted_indices is None
    assert E.invert_permutation(ember.tensor([2, 0, 1])).tolist() == \
        T.invert_permutation(torch.tensor([2, 0, 1])).tolist()


@pytest.mark.parametrize("call,error,message", [
    (lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [4, 2, 3]), RuntimeError,
     "must be sorted in decreasing order when `enforce_sorted` is True"),
    (lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [3, 2, 0]), RuntimeError,
     "Length of all samples has to be greater than 0"),
    (lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [4, 3]), RuntimeError,
     r"Expected `len\(lengths\)` to be equal to batch_size, but got 2 \(batch_size=3\)"),
    (lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_sequence([lib.zeros(3), lib.zeros(2)]), total_length=2), ValueError,
     "Expected total_length to be at least the length of the longest sequence"),
    (lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(3)], padding_side="middle"), RuntimeError,
     "Expected padding_side to be one of left or right, but got middle."),
])
def test_errors_like_torch(call, error, message):
    for lib in (torch, ember):
        with pytest.raises(error, match=message):
            call(lib)
