"""Fixtures for the native kernels' tests.

PyTorch counterpart: none (test infrastructure).
"""

import pytest

from ember.native.convolution import winograd

TRANSFORM_OPS = (winograd.input_tiles_op, winograd.output_tiles_op, winograd.gradient_tiles_op)


@pytest.fixture(params=["installed", "numpy"])
def winograd_transforms(request):
    """Run a test twice: with the Winograd transforms' cpu kernels as installed
    (ember-numba's compiled ones when that plugin is present) and with the NumPy
    kernels of ember/native/convolution/winograd.py, which a compiled override would otherwise
    hide from every test (NOTE [ The Winograd transforms as ops ])."""
    if request.param == "installed":
        yield request.param
        return
    overrides = {op: op.kernels.pop("cpu") for op in TRANSFORM_OPS if "cpu" in op.kernels}
    for op in TRANSFORM_OPS:
        op._resolved.clear()
    try:
        yield request.param
    finally:
        for op, kernel in overrides.items():
            op.register_kernel("cpu", kernel)
