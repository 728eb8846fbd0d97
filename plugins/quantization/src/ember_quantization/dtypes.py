"""Quantized dtypes (``quint8``, ``qint8``, ``qint32``) and quantization schemes.

PyTorch counterpart: c10/core/ScalarType.h (the QUInt8/QInt8/QInt32 entries) and
c10/core/QScheme.h (v2.13).

A quantized dtype names an integer storage type and its range; the real value of a
stored integer ``q`` is ``(q - zero_point) * scale``. ember keeps these dtypes in the
plugin rather than in ``ember.dtypes``: the core's dtypes are the ones its dispatcher
promotes between, and quantized values never take part in promotion.
"""

import ember


class qdtype:
    """A quantized dtype: its name, integer storage dtype and representable range."""

    def __init__(self, name, storage, qmin, qmax):
        self.name, self.storage, self.qmin, self.qmax = name, storage, qmin, qmax
        self.is_floating_point = False
        self.is_signed = qmin < 0

    def __repr__(self):
        return f"ember.{self.name}"

    def __reduce__(self):
        return self.name  # pickled by reference to the module attribute


quint8 = qdtype("quint8", ember.uint8, 0, 255)
qint8 = qdtype("qint8", ember.int8, -128, 127)
qint32 = qdtype("qint32", ember.int32, -(2 ** 31), 2 ** 31 - 1)


class qscheme:
    """How scale and zero point apply: one pair for the tensor, or one per channel."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"ember.{self.name}"

    def __reduce__(self):
        return self.name


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")

QDTYPES = {d.name: d for d in (quint8, qint8, qint32)}


def as_qdtype(dtype):
    """The plugin's qdtype for ``dtype`` (a qdtype, its name, or torch's ``torch.quint8``)."""
    if isinstance(dtype, qdtype):
        return dtype
    name = str(dtype).rsplit(".", 1)[-1]
    if name not in QDTYPES:
        raise RuntimeError(f"expected a quantized dtype (quint8, qint8 or qint32), got {dtype}")
    return QDTYPES[name]
