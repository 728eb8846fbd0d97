"""Linear algebra: matrix products and the ``ember.linalg`` factorizations.

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp, BatchLinearAlgebra.cpp (v2.13).
"""
