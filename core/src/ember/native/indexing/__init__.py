"""Indexing: ``x[key]``, gather/scatter, masked ops.

PyTorch counterpart: aten/src/ATen/native/TensorAdvancedIndexing.cpp (v2.13).
"""
