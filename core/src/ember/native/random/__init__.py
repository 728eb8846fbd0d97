"""Random numbers: the samplers and the transformations from a generator's words, as ATen's CPU kernels.

PyTorch counterpart: aten/src/ATen/native/Distributions.cpp, aten/src/ATen/core/TransformationHelper.h (v2.13).
"""
