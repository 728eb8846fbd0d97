"""``ember.finfo`` and ``ember.iinfo``: the numerical limits of a dtype.

PyTorch counterpart: torch/csrc/TypeInfo.cpp (v2.13).

The values come from NumPy's finfo/iinfo, and from ml_dtypes' finfo for bfloat16,
which np.finfo does not know (NOTE [ bfloat16 ] in ember/dtypes.py). ``resolution``
is ``10 ** -digits``, with ``digits`` the whole decimal digits the type holds (C++'s
``digits10``, NumPy's ``precision``): 1e-06 for float32, 0.01 for bfloat16.
"""

import numpy as np

from ember import dtypes


class finfo:
    """The limits of a floating dtype (the default dtype when none is given).

    >>> import ember
    >>> ember.finfo(ember.bfloat16).eps
    0.0078125
    """

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
        self.resolution = 10.0 ** -info.precision
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype.

    >>> import ember
    >>> ember.iinfo(ember.uint8).max
    255
    """

    def __init__(self, type):
        d = dtypes.to_dtype(type)
        if d is dtypes.bool_:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if d.is_floating_point:
            raise TypeError("ember.iinfo() requires an integer input type. Use ember.finfo to handle 'ember.iinfo'")
        info = np.iinfo(d.np)
        self.bits = d.itemsize * 8
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
