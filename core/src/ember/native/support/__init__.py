"""The machinery the op families share: in-place and view autograd, the kernel stubs
plugins replace, the core's own plugin, BLAS sums, pinned memory. No op family of its own.

PyTorch counterpart: aten/src/ATen/native/DispatchStub.h, torch/csrc/autograd/functions/tensor.cpp (v2.13).
"""
