"""``ember.finfo`` and ``ember.iinfo``: the numerical limits of a dtype.

PyTorch counterpart: torch/csrc/TypeInfo.cpp (v2.13).

The values come from NumPy's finfo/iinfo, and from ml_dtypes' finfo for bfloat16 and
float8, which np.finfo does not know (NOTE [ bfloat16 ] in ember/dtypes.py).
``resolution`` is ``10 ** -digits``, with ``digits`` the whole decimal digits the type
holds (C++'s ``digits10``, from the mantissa bits): 1e-06 for float32, 0.01 for
bfloat16, 1 for every float8.
"""

import math

import numpy as np

from ember import dtypes


class _TypeInfo:
    """What finfo and iinfo share: equal when they describe the same dtype, and a repr of
    ``name(field=value, ..., dtype=...)`` with numbers printed as C's ``%g``."""

    _FIELDS = ()

    def __eq__(self, other):
        return type(other) is type(self) and self.dtype == other.dtype

    def __hash__(self):
        return hash((type(self).__name__, self.dtype))

    def __repr__(self):
        fields = ", ".join(f"{name}={float(getattr(self, name)):g}" for name in self._FIELDS)
        return f"{type(self).__name__}({fields}, dtype={self.dtype})"


class finfo(_TypeInfo):
    """The limits of a floating dtype (the default dtype when none is given).

    >>> import ember
    >>> ember.finfo(ember.bfloat16).eps
    0.0078125
    """

    _FIELDS = ("resolution", "min", "max", "eps", "smallest_normal", "tiny")

    def __init__(self, type=None):
        d = dtypes.get_default_dtype() if type is None else dtypes.to_dtype(type)
        if not d.is_floating_point:
            raise TypeError("ember.finfo() requires a floating point input type. Use ember.iinfo to handle "
                            "'ember.finfo'")
        info = dtypes.finfo_of(d.np)
        self.bits = d.itemsize * 8
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -math.floor(int(info.nmant) * math.log10(2))
        self.dtype = d.name
        if d is dtypes.float8_e5m2fnuz:
            self.eps = 0.125  # c10's numeric_limits<Float8_e5m2fnuz>::epsilon(), not 2**-2


class iinfo(_TypeInfo):
    """The limits of an integer dtype.

    >>> import ember
    >>> ember.iinfo(ember.uint8).max
    255
    """

    _FIELDS = ("min", "max")

    def __init__(self, type):
        d = dtypes.to_dtype(type)
        if d is dtypes.bool_:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if d.is_floating_point or d.is_complex:
            raise TypeError("ember.iinfo() requires an integer input type. Use ember.finfo to handle 'ember.iinfo'")
        info = np.iinfo(d.np)
        self.bits = d.itemsize * 8
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = d.name
