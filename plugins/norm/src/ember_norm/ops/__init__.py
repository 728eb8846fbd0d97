"""The fused operators of ember-norm: ``norm::batch_norm*`` and ``norm::layer_norm*``.

PyTorch counterpart: aten/src/ATen/native/Normalization.cpp and layer_norm.cpp (v2.13).
"""
