"""Layouts: how a tensor's elements are stored, ``ember.strided`` or one of the sparse
formats (``ember.sparse_coo``, ``ember.sparse_csr``, ...), read from ``Tensor.layout``.

PyTorch counterpart: c10/core/Layout.h and torch/csrc/utils/tensor_layouts.cpp (v2.13).

ember stores ``strided`` tensors (a backend array) and ``sparse_coo`` tensors (indices
and values: ember/native/sparse/sparse_tensor.py), and ``sparse_csr`` ones for the few
ops that take them (ember/native/sparse/csr.py). The other names exist so programs that
compare against them run.
"""


class layout:
    """A storage layout, such as ``ember.sparse_coo``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"ember.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")
_LAYOUTS = {each.name: each for each in (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged)}


def _by_name(name):
    return _LAYOUTS[name]
