"""The learnable per-element scale and shift that batch, group and layer norm share.

PyTorch counterpart: the ``if self.affine: self.weight = Parameter(...)`` blocks and
``init.ones_(self.weight); init.zeros_(self.bias)`` lines of torch/nn/modules/batchnorm.py
and normalization.py (v2.13).
"""

import ember
from ember.nn import Parameter


def register_affine(module, affine, shape, bias, device, dtype):
    """Give ``module`` a ``weight`` and (with ``bias``) a ``bias`` of ``shape`` when
    ``affine``; the missing ones are registered as None. Their values are set by
    :func:`reset_affine`."""
    if affine:
        module.weight = Parameter(ember.empty(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(ember.empty(shape, device=device, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def reset_affine(module, affine):
    """With ``affine``, ``weight`` to ones and ``bias`` (if any) to zeros, in place."""
    if affine:
        with ember.no_grad():
            module.weight.fill_(1)
            if module.bias is not None:
                module.bias.zero_()
