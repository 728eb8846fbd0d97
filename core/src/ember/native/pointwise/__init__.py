"""Elementwise ops: unary and binary math, comparisons, addcmul/addcdiv.

PyTorch counterpart: aten/src/ATen/native/UnaryOps.cpp, BinaryOps.cpp, PointwiseOps.cpp (v2.13).
"""
