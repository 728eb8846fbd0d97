"""Weight quantization and the per-row qparams the int8 kernels take.

PyTorch counterpart: torch/ao/nn/quantized/modules/utils.py (v2.13).
"""

import ember
from ember_quantization import kernels
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


class WeightedQuantizedModule(ember.nn.Module):
    """What the quantized Linear and Conv2d share: a quantized weight with the per-row
    qparams the int8 kernels read, an optional float bias, the output's ``scale`` and
    ``zero_point``, an optional fused ReLU, and how they are made from an observed float
    module (torch's ``WeightedQuantizedModule`` in the same file of torch). Subclasses name
    themselves (``_names``: plain, with ReLU) and keep their own state-dict layout, which
    differs between torch's Linear and Conv2d.
    """

    _relu = False
    _names = ("", "")

    def set_weight_bias(self, weight, bias):
        """Set the quantized weight and float bias; the packed weights of the old one are
        dropped (NOTE [ Packed weights ] in ember_quantization/kernels.py)."""
        self._weight, self._bias = weight, bias
        self._scales, self._zero_points = row_qparams(weight)
        self._weight_bound = kernels.weight_bound(self._zero_points)
        self._bias_or_zeros = bias if bias is not None else ember.zeros(weight.shape[0])
        self._packed = {}  # GEMM type name -> the weight packed in it, made on first use

    def _packed_weight(self, activation_bound):
        """The weight packed for activations shifted by at most ``activation_bound``."""
        k = self._weight._int_repr[0].numel()
        dtype = kernels.gemm_dtype(k, activation_bound, self._weight_bound)
        packed = self._packed.get(dtype)
        if packed is None:
            packed = self._packed[dtype] = kernels.pack_weight(self._weight._int_repr, self._zero_points,
                                                               dtype=dtype)
        return packed

    def weight(self):
        return self._weight

    def bias(self):
        return self._bias

    def _get_name(self):
        return self._names[1] if self._relu else self._names[0]

    def _load_output_qparams(self, state_dict, prefix):
        if prefix + "scale" in state_dict:
            self.scale = float(state_dict[prefix + "scale"].item())
        if prefix + "zero_point" in state_dict:
            self.zero_point = int(state_dict[prefix + "zero_point"].item())

    @staticmethod
    def _observed(mod):
        """``(float module, fused relu?, weight observer after seeing the weight, (scale,
        zero_point) of the output)`` of an observed module (after ``prepare`` and
        calibration); a fused module is a ``(float module, ReLU)`` Sequential."""
        relu = isinstance(mod, ember.nn.Sequential)
        float_module = mod[0] if relu else mod
        weight_observer = getattr(float_module, "weight_fake_quant", None) or mod.qconfig.weight()
        weight_observer(float_module.weight)
        return float_module, relu, weight_observer, mod.activation_post_process.calculate_qparams()

    def _take_observed(self, float_module, relu, weight_observer, qparams):
        """Quantize ``float_module``'s weight with the observer's qparams, keep its bias, and
        set the output's qparams."""
        self._relu = relu
        bias = None if float_module.bias is None else float_module.bias.detach().clone()
        self.set_weight_bias(quantize_weight(float_module.weight, weight_observer), bias)
        scale, zero_point = qparams
        self.scale, self.zero_point = float(scale.item()), int(zero_point.item())
        return self

