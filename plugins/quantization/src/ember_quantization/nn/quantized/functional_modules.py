"""QFunctional: ``add``, ``add_relu`` and ``cat`` on quantized tensors, with an output scale.

PyTorch counterpart: torch/ao/nn/quantized/modules/functional_modules.py (v2.13).
"""

import ember
from ember_quantization import kernels
from ember_quantization.dtypes import quint8
from ember_quantization.nn.quantized.utils import require_quantized
from ember_quantization.qtensor import QTensor


class QFunctional(ember.nn.Module):
    """Replaces a calibrated FloatFunctional; each result is requantised to ``scale``/``zero_point``."""

    def __init__(self):
        super().__init__()
        self.scale, self.zero_point = 1.0, 0
        self.activation_post_process = ember.nn.Identity()

    def forward(self, x):
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the underlying operation")

    def _add(self, x, y, relu):
        x, y = require_quantized(x, "QFunctional.add"), require_quantized(y, "QFunctional.add")
        out = kernels.add(x._int_repr, y._int_repr, a_scale=x.q_scale(), a_zero_point=x.q_zero_point(),
                          b_scale=y.q_scale(), b_zero_point=y.q_zero_point(), out_scale=self.scale,
                          out_zero_point=self.zero_point, relu=relu)
        return QTensor(out, quint8, self.scale, self.zero_point)

    def add(self, x, y):
        return self._add(x, y, relu=False)

    def add_relu(self, x, y):
        return self._add(x, y, relu=True)

    def cat(self, x, dim=0):
        x = [require_quantized(t, "QFunctional.cat") for t in x]
        out = kernels.cat(*[t._int_repr for t in x], scales=[t.q_scale() for t in x],
                          zero_points=[t.q_zero_point() for t in x], dim=dim, out_scale=self.scale,
                          out_zero_point=self.zero_point)
        return QTensor(out, quint8, self.scale, self.zero_point)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        destination[prefix + "scale"] = ember.tensor(self.scale)
        destination[prefix + "zero_point"] = ember.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.scale = float(state_dict[prefix + "scale"].item())
        self.zero_point = int(state_dict[prefix + "zero_point"].item())

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        new = cls()
        new.scale, new.zero_point = float(scale.item()), int(zero_point.item())
        return new


__all__ = ["QFunctional"]
