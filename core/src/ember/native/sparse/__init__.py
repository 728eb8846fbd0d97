"""Sparse tensors: the COO layout (indices and values), its conversions and the ops graph
networks use, and the few CSR ops torch's operator database exercises.

PyTorch counterpart: aten/src/ATen/native/sparse/ (v2.13).

- ``sparse_tensor.py``: the COO tensor itself (SparseTensorImpl), ``sparse_coo_tensor``,
  ``to_sparse``, ``to_dense``, ``coalesce``;
- ``coalesce.py``: the index bookkeeping in plain NumPy (sorting, merging duplicates);
- ``sparse_math.py``: ``mm``/``addmm``/``spmm``, ``sum``, addition (SparseTensorMath.cpp);
- ``softmax.py``: ``sparse.softmax``/``log_softmax`` (SoftMax.cpp);
- ``csr.py``: compressed rows, ``sampled_addmm`` and ``sparse.mm`` with a reduction;
- ``gradients.py``: how a sparse gradient is summed and added into ``.grad``.

NOTE [ Sparse values carry the gradient ]
A sparse tensor here is plain data: an int64 ``indices`` tensor ``[sparse_dim, nnz]`` and
a ``values`` tensor ``[nnz, *dense_dims]``. Its ops compute the index bookkeeping with
NumPy on the indices (which never need a gradient) and the arithmetic with ember's dense
ops on the values (``index_select``, ``index_add``, ``mul``): autograd records those, so
gradients reach the values, and through them whatever the values were made from, with no
sparse node in the graph. torch records sparse nodes and hands a sparse leaf a sparse
gradient; ember's sparse leaf reads its gradient from its values' (``SparseTensor.grad``):
the same pattern and numbers where torch's gradient keeps the input's pattern
(``sparse.mm``, ``sparse.sum``, ``to_dense``), a sparse gradient where torch's ``mm``
gives a dense one (docs chapter on tensors, "Sparse tensors").
"""
