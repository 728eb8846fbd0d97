"""Shared helpers for the ember-quantization tests: torch's names for the plugin's dtypes and schemes."""

import torch

import ember_quantization as eq

DTYPES = {torch.quint8: eq.quint8, torch.qint8: eq.qint8, torch.qint32: eq.qint32}
SCHEMES = {torch.per_tensor_affine: eq.per_tensor_affine, torch.per_tensor_symmetric: eq.per_tensor_symmetric,
           torch.per_channel_affine: eq.per_channel_affine, torch.per_channel_symmetric: eq.per_channel_symmetric}


def ours(kwargs):
    """Observer/qconfig keyword arguments with torch's dtypes and schemes replaced by the plugin's."""
    return {k: DTYPES.get(v, SCHEMES.get(v, v)) if isinstance(v, (torch.dtype, torch.qscheme)) else v
            for k, v in kwargs.items()}
