"""Pooling: max, average and adaptive pooling.

PyTorch counterpart: aten/src/ATen/native/DilatedMaxPool2d.cpp and its neighbours (v2.13).
"""
