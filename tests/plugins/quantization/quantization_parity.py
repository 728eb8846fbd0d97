"""Shared helpers for the ember-quantization tests: torch's names for the plugin's dtypes and schemes."""

import ember_quantization as eq
import torch

DTYPES = {torch.quint8: eq.quint8, torch.qint8: eq.qint8, torch.qint32: eq.qint32}
SCHEMES = {torch.per_tensor_affine: eq.per_tensor_affine, torch.per_tensor_symmetric: eq.per_tensor_symmetric,
           torch.per_channel_affine: eq.per_channel_affine, torch.per_channel_symmetric: eq.per_channel_symmetric}


def ours(kwargs):
    """Observer/qconfig keyword arguments with torch's dtypes and schemes replaced by the plugin's."""
    return {k: DTYPES.get(v, SCHEMES.get(v, v)) if isinstance(v, (torch.dtype, torch.qscheme)) else v
            for k, v in kwargs.items()}


def from_torch(value):
    """A torch state-dict value as ember's: quantized tensors become QTensors, tuples recurse."""
    import ember

    if isinstance(value, tuple):
        return tuple(from_torch(v) for v in value)
    if isinstance(value, torch.dtype):
        return DTYPES.get(value, value)
    if not isinstance(value, torch.Tensor):
        return value
    if not value.is_quantized:
        return ember.tensor(value.detach().numpy())
    int_repr = ember.tensor(value.int_repr().numpy())
    if value.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
        return eq.QTensor(int_repr, DTYPES[value.dtype], ember.tensor(value.q_per_channel_scales().numpy()),
                          ember.tensor(value.q_per_channel_zero_points().numpy()), value.q_per_channel_axis())
    return eq.QTensor(int_repr, DTYPES[value.dtype], value.q_scale(), value.q_zero_point())


def state_dict_from_torch(module):
    return {k: from_torch(v) for k, v in module.state_dict().items()}
