"""The fused operators of ember-norm: ``norm::batch_norm*``, ``norm::layer_norm*``,
``norm::group_norm*`` and ``norm::rms_norm*``, one file per family.

PyTorch counterpart: aten/src/ATen/native/Normalization.cpp, layer_norm.cpp and
group_norm.cpp (v2.13).
"""
