"""Reductions: sums, means, norms, extremes, medians.

PyTorch counterpart: aten/src/ATen/native/ReduceOps.cpp (v2.13).
"""
