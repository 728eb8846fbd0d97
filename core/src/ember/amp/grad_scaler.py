"""``GradScaler``: loss scaling for float16 training, so small gradients survive in
half precision: scale the loss up, unscale the gradients before the step, skip steps
whose gradients overflowed, and adapt the scale.

PyTorch counterpart: torch/amp/grad_scaler.py (v2.13), with the two kernels it calls,
``_amp_foreach_non_finite_check_and_unscale_`` and ``_amp_update_scale_``
(aten/src/ATen/native/AmpKernels.cpp), written here with ember ops. ember leaves out
the per-device replication of the scale (one device per scaler).
"""

import math
import warnings
from enum import Enum

import ember


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Dynamic loss scaling::

        scaler.scale(loss).backward()   # gradients of scale * loss
        scaler.step(optimizer)          # unscale; step unless a gradient is inf/NaN
        scaler.update()                 # overflow: scale *= backoff_factor;
                                        # growth_interval clean steps: scale *= growth_factor

    Args:
        device: the device type of the gradients (``"cuda"``, PyTorch's default, or ``"cpu"``).
        init_scale: the first scale (2**16).
        growth_factor, backoff_factor: how the scale grows and shrinks (2.0, 0.5).
        growth_interval: clean steps between growths (2000).
        enabled: False makes every method a pass-through (``step`` just steps).
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not ember.cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = {}

    def _lazy_init(self, device):
        if self._scale is None:
            self._scale = ember.full((), self._init_scale, dtype=ember.float32, device=device)
            self._growth_tracker = ember.full((), self._init_growth_tracker, dtype=ember.int32, device=device)

    def _optimizer_state(self, optimizer):
        return self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())

    def scale(self, outputs):
        """``outputs * scale`` (a tensor, or each tensor of a list/tuple/iterable)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, ember.Tensor):
            self._lazy_init(outputs.device)
            return outputs * self._scale.to(outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        try:
            return map(self.scale, outputs)
        except TypeError:
            raise ValueError("outputs must be a Tensor or an iterable of Tensors") from None

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        """Multiply every gradient by ``inv_scale``; add 1 to ``found_inf`` if any is not finite."""
        with ember.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype == ember.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if not bool(ember.isfinite(param.grad).all()):
                        found_inf.fill_(1.0)
                    param.grad.mul_(inv_scale.to(param.grad.dtype))
        return {str(inv_scale.device): found_inf}

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale (once per step), noting overflows."""
        if not self._enabled:
            return
        state = self._optimizer_state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        if self._scale is None:
            raise AssertionError("Attempted unscale_ but _scale is None.  This may indicate your script did not "
                                 "use scaler.scale(loss or outputs) earlier in the iteration.")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = ember.full((), 0.0, dtype=ember.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless done), then ``optimizer.step(*args, **kwargs)`` unless a gradient
        overflowed; returns the step's result (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._optimizer_state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(float(v) for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None):
        """Adapt the scale to this iteration's overflows (or set ``new_scale``)."""
        if not self._enabled:
            return
        if self._scale is None:
            raise AssertionError("Attempted update but _scale is None.  This may indicate your script did not "
                                 "use scaler.scale(loss or outputs) earlier in the iteration.")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                if not (isinstance(new_scale, ember.Tensor) and new_scale.numel() == 1
                        and new_scale.dtype == ember.float32 and not new_scale.requires_grad):
                    raise AssertionError("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                                         "torch.FloatTensor with requires_grad=False.")
                self._scale.copy_(new_scale.reshape(()))
        else:
            found = [v for state in self._per_optimizer_states.values()
                     for v in state["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._update_scale(sum(float(v) for v in found))
        self._per_optimizer_states = {}

    def _update_scale(self, found_inf):
        """ATen's ``_amp_update_scale_``: back off on overflow, grow after
        ``growth_interval`` clean steps (only to a finite scale)."""
        if found_inf > 0:
            self._scale.mul_(self._backoff_factor)
            self._growth_tracker.fill_(0)
            return
        successful = int(self._growth_tracker) + 1
        if successful == self._growth_interval:
            grown = float(self._scale) * self._growth_factor
            if math.isfinite(ember.tensor(grown, dtype=ember.float32).item()):
                self._scale.fill_(grown)
            successful = 0
        self._growth_tracker.fill_(successful)

    # --- settings and state --------------------------------------------------------
    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale)

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker)

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
