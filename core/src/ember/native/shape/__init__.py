"""Shape ops: views, joins, splits, diagonals and triangles.

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp (v2.13).
"""
