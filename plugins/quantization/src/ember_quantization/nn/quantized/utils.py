"""Weight quantization and the per-row qparams the int8 kernels take.

PyTorch counterpart: torch/ao/nn/quantized/modules/utils.py (v2.13).
"""

import ember
from ember_quantization.dtypes import per_channel_affine, per_channel_symmetric
from ember_quantization.qtensor import QTensor, quantize_per_channel, quantize_per_tensor


def quantize_weight(float_weight, observer):
    """Quantize a float weight with the qparams its (already run) weight observer chose."""
    scale, zero_point = observer.calculate_qparams()
    if observer.qscheme in (per_channel_affine, per_channel_symmetric):
        return quantize_per_channel(float_weight.detach().float(), scale.to(ember.float64),
                                    zero_point.to(ember.int64), observer.ch_axis, observer.dtype)
    return quantize_per_tensor(float_weight.detach().float(), float(scale.item()), int(zero_point.item()),
                               observer.dtype)


def row_qparams(weight):
    """(scales float64, zero points int64), one per output row, for a per-tensor or per-channel weight."""
    rows = weight.shape[0]
    if weight.qscheme() in (per_channel_affine, per_channel_symmetric):
        if weight.q_per_channel_axis() != 0:
            raise RuntimeError("quantized weights must be per-channel along axis 0 (output channels)")
        return weight.q_per_channel_scales(), weight.q_per_channel_zero_points()
    return (ember.full((rows,), weight.q_scale(), dtype=ember.float64),
            ember.full((rows,), weight.q_zero_point(), dtype=ember.int64))


def require_quantized(x, module):
    if not isinstance(x, QTensor):
        raise RuntimeError(f"{module} expects a quantized input (a QTensor from a QuantStub/Quantize); got "
                           f"{type(x).__name__}. Did you forget a QuantStub before it?")
    return x
