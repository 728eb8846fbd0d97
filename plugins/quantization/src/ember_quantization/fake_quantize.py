"""Fake quantization: round to the int8 grid in the forward pass, pass gradients straight through.

PyTorch counterpart: torch/ao/quantization/fake_quantize.py and the
``fake_quantize_per_tensor_affine`` / ``fake_quantize_per_channel_affine`` kernels of
aten/src/ATen/native/quantized/FakeQuantPerTensorAffine.cpp (v2.13).

# NOTE [ The straight-through estimator ]
``fake_quantize(x) = (clamp(rint(x / s + z), qmin, qmax) - z) * s`` is a staircase: its
true derivative is zero almost everywhere. Quantization-aware training uses the
straight-through estimator instead: the gradient passes unchanged where the rounded
value fell inside ``[qmin, qmax]`` and is zero where it was clamped. The mask is
recomputed from the saved input in backward, exactly as torch's cachemask kernel stores it.
"""

import ember
from ember import library
from ember_quantization.dtypes import per_channel_affine, per_channel_symmetric
from ember_quantization.observer import MovingAverageMinMaxObserver, _with_args


def _fused(xp, x, scale, zero_point):
    """``rint(x * (1/scale)) + zero_point``: torch's fake-quant kernels round the float32 product,
    then add the zero point (unlike quantize_per_tensor's fused multiply-add, kernels.py)."""
    inv_scale = xp.float32(1.0) / scale.astype(xp.float32)
    return xp.rint(x.astype(xp.float32) * inv_scale).astype(xp.float64) + zero_point.astype(xp.float64)


@library.custom_op("quantized::fake_quantize_affine", save="inputs")
def fake_quantize_affine(xp, x, scale, zero_point, *, quant_min, quant_max):
    """``(clamp(rint(x/s + z), qmin, qmax) - z) * s``; ``scale``/``zero_point``
    broadcast against ``x``."""
    q = xp.clip(_fused(xp, x, scale, zero_point), quant_min, quant_max)
    return ((q - zero_point) * scale.astype(xp.float32)).astype(x.dtype)


@library.custom_op("quantized::fake_quantize_mask")
def fake_quantize_mask(xp, x, scale, zero_point, *, quant_min, quant_max):
    """Where the rounded value lies inside [quant_min, quant_max]: the straight-through mask."""
    q = _fused(xp, x, scale, zero_point)
    return ((q >= quant_min) & (q <= quant_max)).astype(x.dtype)


def _fake_quantize_backward(ctx, grad):
    x, scale, zero_point = ctx.saved_inputs
    mask = fake_quantize_mask(x.detach(), scale.detach(), zero_point.detach(),
                              **ctx.attrs)
    return grad * mask, None, None


library.register_autograd(fake_quantize_affine, _fake_quantize_backward)


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """torch.fake_quantize_per_tensor_affine: one scale and zero point."""
    scale = ember.as_tensor(scale, dtype=ember.float32).reshape(())
    zero_point = ember.as_tensor(zero_point).to(ember.int32).reshape(())
    return fake_quantize_affine(input, scale, zero_point, quant_min=quant_min, quant_max=quant_max)


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """torch.fake_quantize_per_channel_affine: one scale and zero point per slice along ``axis``."""
    shape = [1] * input.ndim
    shape[axis] = -1
    return fake_quantize_affine(input, scale.to(ember.float32).reshape(shape),
                                zero_point.to(ember.int32).reshape(shape), quant_min=quant_min,
                                quant_max=quant_max)


class FakeQuantize(ember.nn.Module):
    """Observe (update scale and zero point) and fake-quantize; each step can be switched off."""

    with_args = classmethod(_with_args)

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None, **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            observer_kwargs.update(quant_min=quant_min, quant_max=quant_max)
        self.activation_post_process = observer(**observer_kwargs)
        self.quant_min = self.activation_post_process.quant_min
        self.quant_max = self.activation_post_process.quant_max
        self.register_buffer("fake_quant_enabled", ember.tensor([1], dtype=ember.uint8))
        self.register_buffer("observer_enabled", ember.tensor([1], dtype=ember.uint8))
        self.register_buffer("scale", ember.tensor([1.0]))
        self.register_buffer("zero_point", ember.tensor([0], dtype=ember.int32))
        self.dtype = self.activation_post_process.dtype
        self.qscheme = self.activation_post_process.qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", -1)
        self.is_per_channel = self.qscheme in (per_channel_affine, per_channel_symmetric)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled[0] = 1 if enabled else 0
        return self

    def disable_fake_quant(self):
        return self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled[0] = 1 if enabled else 0
        return self

    def disable_observer(self):
        return self.enable_observer(False)

    def forward(self, X):
        if self.observer_enabled[0] == 1:
            self.activation_post_process(X.detach())
            scale, zero_point = self.calculate_qparams()
            self.scale, self.zero_point = scale.clone(), zero_point.to(ember.int32).clone()
        if self.fake_quant_enabled[0] == 1:
            if self.is_per_channel:
                return fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis,
                                                        self.quant_min, self.quant_max)
            return fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, self.quant_min, self.quant_max)
        return X

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # scale and zero_point take the loaded shape (one per channel once a per-channel
        # quantizer has observed), as torch's FakeQuantize resizes them before loading
        for name in ("scale", "zero_point"):
            if prefix + name in state_dict:
                shape = tuple(state_dict[prefix + name].shape)
                setattr(self, name, ember.zeros(shape, dtype=getattr(self, name).dtype))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"quant_min={self.quant_min}, quant_max={self.quant_max}, dtype={self.dtype}, "
                f"qscheme={self.qscheme}, ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")


__all__ = ["FakeQuantize", "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"]
