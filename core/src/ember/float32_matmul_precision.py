"""``ember.set_float32_matmul_precision`` / ``get_float32_matmul_precision``.

PyTorch counterpart: torch/__init__.py (``set_float32_matmul_precision``) and
aten/src/ATen/Context.cpp (``setFloat32MatmulPrecision``) (v2.13).

torch lets float32 matrix products trade precision for speed: "highest" (the default)
computes in float32; "high" allows TensorFloat-32 on NVIDIA GPUs (and bf16x3 on some
CPUs); "medium" allows bfloat16 arithmetic. ember records the setting, so programs that
set and read it run, but its float32 products are always computed in float32 (NumPy's
and cuBLAS's default GEMMs): with "high" or "medium" ember's results can be more exact
than torch's on hardware where torch uses the faster formats.
"""

import warnings

_PRECISIONS = ("highest", "high", "medium")
_current = "highest"


def set_float32_matmul_precision(precision):
    """Record ``precision`` ("highest", "high" or "medium"); anything else warns and
    changes nothing, as in torch."""
    global _current
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"set_float32_matmul_precision call has no effect.", stacklevel=2)
        return
    _current = precision


def get_float32_matmul_precision():
    """The last precision set ("highest" by default)."""
    return _current
