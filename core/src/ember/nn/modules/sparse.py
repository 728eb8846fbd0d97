"""``Embedding``: a lookup table of learned vectors, indexed by integer ids, and
``EmbeddingBag``: the sum, mean or max of the vectors of each bag of ids.

PyTorch counterpart: torch/nn/modules/sparse.py (v2.13). With ``sparse=True`` the
weight's gradient is a sparse COO tensor (ember/native/sparse/), for ``optim.SGD`` or
``optim.SparseAdam``.
"""

from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter


def _wrapped_padding_idx(padding_idx, num_embeddings, spelled):
    """``padding_idx`` checked to be a row and counted from the front; ``spelled`` is how
    torch's message capitalises it (Embedding and EmbeddingBag differ)."""
    if padding_idx is None:
        return None
    if padding_idx > 0:
        assert padding_idx < num_embeddings, f"{spelled} must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num_embeddings, f"{spelled} must be within num_embeddings"
        padding_idx = num_embeddings + padding_idx
    return padding_idx


class Embedding(Module):
    """Look up rows of ``weight`` by index: ``out[..., :] = weight[input[...], :]``.

    Args:
        num_embeddings: rows in the table.
        embedding_dim: size of each vector.
        padding_idx: a row that is initialised to zero and never receives a gradient
            (negative values count from the end).
        max_norm: rows looked up whose ``norm_type``-norm exceeds it are rescaled to
            it, in place, on every forward.
        norm_type: the p of that norm.
        scale_grad_by_freq: divide each row's gradient by its count in the batch.
        sparse: give the weight a sparse COO gradient (see the module docstring).

    Attributes:
        weight: ``(num_embeddings, embedding_dim)``, initialised N(0, 1).

    >>> import ember
    >>> m = ember.nn.Embedding(10, 3, padding_idx=0)
    >>> m(ember.tensor([[0, 2], [4, 9]])).shape
    ember.Size([2, 2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _wrapped_padding_idx(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            from ember.native.factory import empty

            weight = empty(num_embeddings, embedding_dim, device=device, dtype=dtype)
            self.weight = Parameter(weight, requires_grad=not _freeze)
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                "Shape of weight does not match num_embeddings and embedding_dim"
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            from ember.autograd.grad_mode import no_grad

            with no_grad():
                self.weight[self.padding_idx] = 0

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is ``embeddings`` (shared memory, not copied; the
        padding row is left as given). ``freeze=True`` keeps it out of training.

        >>> import ember
        >>> m = ember.nn.Embedding.from_pretrained(ember.tensor([[1., 2.], [3., 4.]]))
        >>> m(ember.tensor([1]))
        tensor([[3., 4.]])
        """
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Reduce bags of embeddings without materialising each lookup: ``forward(input,
    offsets=None, per_sample_weights=None)`` gives ``(B, embedding_dim)``; see
    :func:`ember.nn.functional.embedding_bag` for the bags, modes and weights.

    >>> import ember
    >>> bag = ember.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag(ember.tensor([1, 2, 4, 5, 4, 3]), ember.tensor([0, 4])).shape
    ember.Size([2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _wrapped_padding_idx(padding_idx, num_embeddings, "padding_idx")
        if _weight is None:
            from ember.native.factory import empty

            self.weight = Parameter(empty(num_embeddings, embedding_dim, device=device, dtype=dtype))
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                "Shape of weight does not match num_embeddings and embedding_dim"
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    reset_parameters = Embedding.reset_parameters
    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose weight is ``embeddings`` (shared, not copied);
        ``freeze=True`` keeps it out of training."""
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
                  include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
