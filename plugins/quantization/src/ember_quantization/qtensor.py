"""Quantized tensors: integers plus the scale and zero point that give them real values.

PyTorch counterpart: aten/src/ATen/quantized/Quantizer.cpp and aten/src/ATen/quantized/QTensorImpl.h, and the
quantized-tensor functions of torch/_tensor.py and torch/_utils.py (v2.13).

# NOTE [ A quantized tensor is a value class in ember ]
In PyTorch a quantized tensor is a ``Tensor`` whose dtype is ``torch.quint8`` and which
carries a ``Quantizer``; most ops refuse it, and the quantized modules call
``torch.ops.quantized.*`` on it. ember keeps the same user protocol
(``quantize_per_tensor``, ``dequantize``, ``int_repr``, ``q_scale``, ...) but makes the
quantized tensor a small class of its own, ``QTensor``, holding an ordinary integer
``ember.Tensor`` and the quantizer parameters. The dispatcher, promotion table and
autograd never see quantized dtypes, so none of them pays a check for them; the
quantized ops (kernels.py) unwrap ``QTensor`` into its integer array. A few shape
methods (``reshape``, ``flatten``, ``size``) act on the integers directly, as torch's do.
"""

import ember
from ember_quantization import kernels
from ember_quantization.dtypes import as_qdtype, per_channel_affine, per_tensor_affine, qint8, qint32, quint8


class QTensor:
    """A quantized tensor: ``int_repr()`` integers, a qdtype, and per-tensor or per-channel qparams."""

    is_quantized = True

    def __init__(self, int_repr, dtype, scale, zero_point, axis=None):
        self._int_repr = int_repr
        self.dtype = dtype
        self._scale = scale            # float, or a float64 Tensor per channel
        self._zero_point = zero_point  # int, or an int64 Tensor per channel
        self._axis = axis
        self.requires_grad = False

    # --- the quantizer -----------------------------------------------------------
    def qscheme(self):
        return per_tensor_affine if self._axis is None else per_channel_affine

    def q_scale(self):
        self._require(per_tensor_affine, "q_scale")
        return self._scale

    def q_zero_point(self):
        self._require(per_tensor_affine, "q_zero_point")
        return self._zero_point

    def q_per_channel_scales(self):
        self._require(per_channel_affine, "q_per_channel_scales")
        return self._scale

    def q_per_channel_zero_points(self):
        self._require(per_channel_affine, "q_per_channel_zero_points")
        return self._zero_point

    def q_per_channel_axis(self):
        self._require(per_channel_affine, "q_per_channel_axis")
        return self._axis

    def _require(self, scheme, what):
        if self.qscheme() is not scheme:
            kind = "Tensor" if scheme is per_tensor_affine else "Channel"
            raise RuntimeError(f"Expected quantizer->qscheme() == kPer{kind}Affine to be true, but got false. "
                               f"({what} on a {self.qscheme().name} tensor)")

    # --- values ---------------------------------------------------------------------
    def int_repr(self):
        return self._int_repr.clone()

    def dequantize(self):
        if self._axis is None:
            return kernels.dequantize_per_tensor(self._int_repr, scale=self._scale, zero_point=self._zero_point)
        return kernels.dequantize_per_channel(self._int_repr, self._scale, self._zero_point, axis=self._axis)

    # --- shape (acting on the integers, as torch's quantized views do) ----------------
    @property
    def shape(self):
        return self._int_repr.shape

    def size(self, dim=None):
        return self._int_repr.size() if dim is None else self._int_repr.size(dim)

    def dim(self):
        return self._int_repr.ndim

    ndim = property(dim)

    def numel(self):
        return self._int_repr.numel()

    @property
    def device(self):
        return self._int_repr.device

    def _same_qparams(self, int_repr):
        return QTensor(int_repr, self.dtype, self._scale, self._zero_point, self._axis)

    def reshape(self, *shape):
        self._require(per_tensor_affine, "reshape")
        return self._same_qparams(self._int_repr.reshape(*shape))

    view = reshape

    def flatten(self, start_dim=0, end_dim=-1):
        self._require(per_tensor_affine, "flatten")
        return self._same_qparams(self._int_repr.flatten(start_dim, end_dim))

    def __len__(self):
        return len(self._int_repr)

    def __repr__(self):
        values = repr(self.dequantize())[:-1]
        size = tuple(self.shape)
        head = f"{values}, size={size}, dtype={self.dtype},\n       quantization_scheme={self.qscheme()}, "
        if self._axis is None:
            return head + f"scale={self._scale}, zero_point={self._zero_point})"
        return (head + f"\n       scale={self._scale},\n       zero_point={self._zero_point}, "
                f"axis={self._axis})")


def from_checkpoint(int_repr, dtype, scale, zero_point, axis):
    """The ``QTensor`` a checkpoint's ``torch._utils._rebuild_qtensor`` describes, its arguments
    checked by the core (ember/serialization/quantized.py), which calls this through the hook
    ``ember_register_tensor_types``: integers ``int_repr``, qdtype name ``dtype``, and a
    per-tensor (``axis`` None) or per-channel quantizer."""
    return QTensor(int_repr, as_qdtype(dtype), scale, zero_point, axis)


def quantize_per_tensor(input, scale, zero_point, dtype):
    """Quantize a float tensor with one ``scale`` and ``zero_point``: ``clamp(rint(x / scale) + zp)``.

    >>> import ember
    >>> from ember_quantization import quantize_per_tensor, quint8
    >>> q = quantize_per_tensor(ember.tensor([0.0, 0.25, 1.0]), 0.5, 10, quint8)
    >>> q.int_repr(), q.dequantize()
    (tensor([10, 10, 12], dtype=ember.uint8), tensor([0., 0., 1.]))
    """
    dtype = as_qdtype(dtype)
    scale, zero_point = float(scale), int(zero_point)
    _check_float(input, "quantize_per_tensor")
    if zero_point < dtype.qmin:
        raise RuntimeError(f"quantize_tensor_per_tensor_affine zero_point {zero_point} is below lower bound.")
    if zero_point > dtype.qmax:
        raise RuntimeError(f"quantize_tensor_per_tensor_affine zero_point {zero_point} is above upper bound.")
    q = kernels.quantize_per_tensor(input.detach(), scale=scale, zero_point=zero_point, qmin=dtype.qmin,
                                    qmax=dtype.qmax, storage=dtype.storage.np)
    return QTensor(q, dtype, scale, zero_point)


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """Quantize with one scale and zero point per slice of ``input`` along ``axis``."""
    dtype = as_qdtype(dtype)
    _check_float(input, "quantize_per_channel")
    if not 0 <= axis < input.ndim:
        raise RuntimeError(f"Channel axis out of range in per channel affine quantization. Got: {axis}Expected: < "
                           f"{input.ndim}")
    scales = ember.as_tensor(scales).to(ember.float64)
    zero_points = ember.as_tensor(zero_points).to(ember.int64)
    if scales.numel() != input.shape[axis] or zero_points.numel() != input.shape[axis]:
        raise RuntimeError(f"length of scales and zero_points must equal the size of axis {axis} "
                           f"({input.shape[axis]}), got {scales.numel()} and {zero_points.numel()}")
    q = kernels.quantize_per_channel(input.detach(), scales, zero_points, axis=axis, qmin=dtype.qmin,
                                     qmax=dtype.qmax, storage=dtype.storage.np)
    return QTensor(q, dtype, scales, zero_points, axis)


def dequantize(tensor):
    """The float32 values of a quantized tensor (a float tensor passes through)."""
    return tensor.dequantize() if isinstance(tensor, QTensor) else tensor


def _check_float(input, where):
    if not isinstance(input, ember.Tensor) or not input.dtype.is_floating_point:
        raise RuntimeError(f"{where}: expected a floating point ember.Tensor, got "
                           f"{getattr(input, 'dtype', type(input).__name__)}")


__all__ = ["QTensor", "quantize_per_tensor", "quantize_per_channel", "dequantize", "quint8", "qint8", "qint32"]
