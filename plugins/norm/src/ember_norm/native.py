"""torch's ``native_*`` normalization functions, which return the statistics saved for
the backward beside the output: ``native_batch_norm``, ``_native_batch_norm_legit``,
``_batch_norm_with_update``, ``native_layer_norm`` and ``native_group_norm``
(``ember.native_batch_norm`` etc. forward here: torch has them at its top level).

PyTorch counterpart: ``native_batch_norm``, ``_native_batch_norm_legit`` and
``_batch_norm_with_update`` in aten/src/ATen/native/Normalization.cpp, ``layer_norm_cpu``
in layer_norm.cpp and ``native_group_norm`` in group_norm.cpp (v2.13).

Each is the functional form (ember_norm/functional.py) plus its statistics:
- batch norm: the batch mean and ``1 / sqrt(var + eps)`` per channel in training (the
  running statistics move as in ``batch_norm``), empty tensors in evaluation; not
  differentiable, as torch's;
- layer norm: the mean and ``1 / sqrt(var + eps)`` of each row, with the normalized
  dims kept as size 1; not differentiable;
- group norm: the mean and ``1 / sqrt(var + eps)`` of each (sample, group), which torch
  differentiates (they are outputs of ``native_group_norm`` with a backward), so they
  are computed here with ember ops and carry a gradient.
"""

import ember
from ember_norm import functional
from ember_norm.ops.batch_norm import batch_norm_stats
from ember_norm.ops.layer_norm import layer_norm_stats


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``(output, save_mean, save_invstd)`` of batch norm (empty statistics in evaluation)."""
    out = functional.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = ember.empty(0, dtype=input.dtype, device=input.device)
        return out, empty, empty.clone()
    with ember.no_grad():
        mean, invstd, _ = batch_norm_stats(input.detach(), eps=eps)
    return out, mean, invstd


def _native_batch_norm_legit(input, weight, bias, *args):
    """``native_batch_norm`` in torch's two schemas: ``(input, weight, bias, running_mean,
    running_var, training, momentum, eps)`` and, without running statistics,
    ``(input, weight, bias, training, momentum, eps)``."""
    if len(args) == 3:
        training, momentum, eps = args
        return native_batch_norm(input, weight, bias, None, None, training, momentum, eps)
    running_mean, running_var, training, momentum, eps = args
    return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def _batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    """Training batch norm that updates the running statistics: ``(output, save_mean,
    save_invstd, reserve)``, ``reserve`` an empty uint8 tensor (cuDNN's workspace in
    torch; nothing on the CPU)."""
    out, mean, invstd = native_batch_norm(input, weight, bias, running_mean, running_var, True, momentum, eps)
    return out, mean, invstd, ember.empty(0, dtype=ember.uint8, device=input.device)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``(output, mean, rstd)`` of layer norm; the statistics have the input's leading
    dims and a 1 for each normalized dim."""
    out = functional.layer_norm(input, normalized_shape, weight, bias, eps)
    ndim = len(functional._as_shape(normalized_shape, "native_layer_norm"))
    with ember.no_grad():
        mean, rstd = layer_norm_stats(input.detach(), normalized_ndim=ndim, eps=eps)
    return out, mean, rstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``(output, mean, rstd)`` of group norm; the statistics are (N, group) and carry
    a gradient (the module docstring)."""
    out = functional.group_norm(input, group, weight, bias, eps)
    rows = input.reshape(N, group, C // group * HxW)
    mean = rows.mean(-1)
    rstd = (rows.var(-1, correction=0) + eps).rsqrt()
    return out, mean, rstd
