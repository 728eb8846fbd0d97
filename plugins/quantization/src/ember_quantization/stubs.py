"""Markers a float model carries for eager-mode quantization: where to quantize, dequantize, and float ops.

PyTorch counterpart: torch/ao/quantization/stubs.py and
torch/ao/nn/quantized/modules/functional_modules.py (``FloatFunctional``) (v2.13).

Before ``convert`` these are identities (``QuantStub``, ``DeQuantStub``) or plain float
arithmetic (``FloatFunctional``) with an observer on the result; ``convert`` swaps them
for ``Quantize``, ``DeQuantize`` and ``QFunctional``.
"""

import ember


class _Stub(ember.nn.Module):
    """An identity that marks a place in the model for prepare and convert."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantStub(_Stub):
    """Where float input becomes quantized; an identity (with an observer) until convert."""


class DeQuantStub(_Stub):
    """Where quantized values go back to float; an identity until convert."""


class FloatFunctional(ember.nn.Module):
    """Float ``add``/``cat``/``add_relu`` whose results an observer watches (replaced by QFunctional)."""

    def __init__(self):
        super().__init__()
        self.activation_post_process = ember.nn.Identity()

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying "
                           "operation")

    def add(self, x, y):
        return self.activation_post_process(ember.add(x, y))

    def add_relu(self, x, y):
        return self.activation_post_process(ember.relu(ember.add(x, y)))

    def cat(self, x, dim=0):
        return self.activation_post_process(ember.cat(x, dim=dim))


__all__ = ["QuantStub", "DeQuantStub", "FloatFunctional"]
