"""Convolution: the im2col + GEMM reference kernels, and the algorithms beside them.

PyTorch counterpart: aten/src/ATen/native/Convolution.cpp and its neighbours (v2.13).
"""
