"""Variable-length sequences for the recurrent layers: ``PackedSequence`` and the
functions that pad, pack and unpack.

PyTorch counterpart: torch/nn/utils/rnn.py (v2.13), with ATen's
``_pack_padded_sequence`` / ``_pad_packed_sequence`` / ``pad_sequence``
(aten/src/ATen/native/PackedSequence.cpp) written here with ember ops, so gradients
flow through packing and padding.

A packed batch stores the sequences time step by time step, longest first: for
sequences ``[a1 a2 a3]``, ``[b1 b2]``, ``[c1]`` the data is ``a1 b1 c1 a2 b2 a3`` and
``batch_sizes`` is ``[3, 2, 1]`` (how many sequences are alive at each step).
"""

from collections import namedtuple

import numpy as np


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Packed sequences: ``data`` (sum of lengths, *), ``batch_sizes`` (a CPU int64 tensor,
    one count per time step), and, when the batch was sorted by length on the way in,
    ``sorted_indices`` (which original sequence sits at each packed row) and its
    inverse ``unsorted_indices``. Made by ``pack_padded_sequence`` / ``pack_sequence``,
    not by hand.

    >>> import ember
    >>> from ember.nn.utils.rnn import pack_sequence
    >>> packed = pack_sequence([ember.tensor([1, 2, 3]), ember.tensor([4, 5]), ember.tensor([6])])
    >>> packed.data.tolist(), packed.batch_sizes.tolist()
    ([1, 4, 6, 2, 5, 3], [3, 2, 1])
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                             "created manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn.")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Convert ``data`` (``Tensor.to``'s arguments); the indices follow its device,
        ``batch_sizes`` stays on the CPU. Returns ``self`` when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        indices = [None if t is None else t.to(data.device) for t in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *indices)

    def cuda(self, *args, **kwargs):
        return self.to("cuda", *args, **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to("cpu", *args, **kwargs)

    def double(self):
        return self.to(dtype=_dtype("float64"))

    def float(self):
        return self.to(dtype=_dtype("float32"))

    def half(self):
        return self.to(dtype=_dtype("float16"))

    def long(self):
        return self.to(dtype=_dtype("int64"))

    def int(self):
        return self.to(dtype=_dtype("int32"))

    def short(self):
        return self.to(dtype=_dtype("int16"))

    def char(self):
        return self.to(dtype=_dtype("int8"))

    def byte(self):
        return self.to(dtype=_dtype("uint8"))

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _dtype(name):
    from ember import dtypes

    return dtypes._BY_NAME[name]


def invert_permutation(permutation):
    """The inverse of a 1-d permutation tensor (None stays None)."""
    if permutation is None:
        return None
    from ember.native.factory import arange, empty_like

    output = empty_like(permutation)
    return output.scatter_(0, permutation, arange(permutation.numel(), device=permutation.device))


def _lengths_array(lengths):
    """``lengths`` (a list or a CPU tensor) as a NumPy int64 array."""
    from ember.tensor import Tensor

    if isinstance(lengths, Tensor):
        if lengths.device.type != "cpu" or lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                               f"{lengths.device} tensor")
        return lengths.numpy().astype(np.int64)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of
    sequences with the given ``lengths``.

    With ``enforce_sorted=True`` the lengths must be in decreasing order; with
    ``False`` the batch is sorted here and the order is kept in ``sorted_indices``.

    >>> import ember
    >>> from ember.nn.utils.rnn import pack_padded_sequence
    >>> padded = ember.tensor([[1, 4], [2, 5], [3, 0]])   # (T=3, B=2)
    >>> pack_padded_sequence(padded, [3, 2]).data.tolist()
    [1, 4, 2, 5, 3]
    """
    from ember.native.factory import tensor

    lengths = _lengths_array(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = tensor(order, device=input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pack_padded(input, lengths, batch_first):
    """ATen's ``_pack_padded_sequence``: the rows alive at each step, concatenated."""
    from ember.native.factory import tensor
    from ember.native.shape.shape import cat

    if input.dim() < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if batch_first:
        input = input.transpose(0, 1)
    batch_size = input.size(1)
    if len(lengths) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={batch_size})")
    if np.any(np.diff(lengths) > 0):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                           "this requirement if you do not need ONNX exportability.")
    if lengths.size == 0 or lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if lengths[0] > input.size(0):
        raise RuntimeError(f"Expected the longest length {lengths[0]} to be at most the padded length "
                           f"{input.size(0)} (ember checks; PyTorch reads past the end)")
    steps = np.arange(lengths[0])
    batch_sizes = (lengths[None, :] > steps[:, None]).sum(1)
    data = cat([input[t, :size] for t, size in enumerate(batch_sizes.tolist())])
    return data, tensor(batch_sizes, dtype=_dtype("int64"))


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo ``pack_padded_sequence``: returns ``(padded, lengths)`` with the batch in the
    order it had before packing; ``total_length`` pads the time dim further.

    >>> import ember
    >>> from ember.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    >>> packed = pack_padded_sequence(ember.tensor([[1, 4], [2, 5], [3, 0]]), [3, 2])
    >>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
    >>> padded.tolist(), lengths.tolist()
    ([[1, 2, 3], [4, 5, 0]], [3, 2])
    """
    from ember.native.factory import full, tensor
    from ember.native.shape.shape import cat, stack

    batch_sizes = sequence.batch_sizes.tolist()
    max_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_length}")
        max_length = total_length
    data = sequence.data
    batch = batch_sizes[0] if batch_sizes else 0
    trailing = tuple(data.shape[1:])
    steps = []
    for piece, size in zip(data.split(batch_sizes), batch_sizes):
        if size < batch:
            piece = cat([piece, full((batch - size, *trailing), padding_value, dtype=data.dtype, device=data.device)])
        steps.append(piece)
    steps += [full((batch, *trailing), padding_value, dtype=data.dtype, device=data.device)] * (
        max_length - len(batch_sizes))
    padded = stack(steps)
    if batch_first:
        padded = padded.transpose(0, 1)
    counts = np.asarray(batch_sizes, dtype=np.int64)
    lengths = (counts[None, :] > np.arange(batch)[:, None]).sum(1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu().numpy()]
    return padded, tensor(lengths, dtype=_dtype("int64"))


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences ``(L_i, *)`` of different lengths into ``(T, B, *)`` (``(B, T, *)``
    with ``batch_first``), filling with ``padding_value`` on ``padding_side``.

    >>> import ember
    >>> from ember.nn.utils.rnn import pad_sequence
    >>> pad_sequence([ember.tensor([1, 2, 3]), ember.tensor([4])], batch_first=True).tolist()
    [[1, 2, 3], [4, 0, 0]]
    """
    from ember.native.factory import full
    from ember.native.shape.shape import cat, stack
    from ember.tensor import Tensor

    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    try:
        sequences = tuple(sequences)
    except TypeError:
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}") from None
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    max_length = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        if s.shape[1:] != sequences[0].shape[1:]:
            raise RuntimeError(f"pad_sequence: every sequence must have the same trailing dims, got "
                               f"{list(sequences[0].shape[1:])} and {list(s.shape[1:])}")
        missing = max_length - s.size(0)
        if missing:
            fill = full((missing, *s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences in a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(length)] for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """``pack_padded_sequence(pad_sequence(sequences), lengths)`` for a list of ``(L_i, *)``
    tensors (longest first unless ``enforce_sorted=False``)."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences in a ``PackedSequence``, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]
