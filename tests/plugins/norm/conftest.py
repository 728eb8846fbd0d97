"""Fixtures for the ember-norm tests.

PyTorch counterpart: none (test infrastructure).
"""

import pytest

import ember
from ember.dispatcher import forget_kernels


@pytest.fixture(params=["installed", "numpy"])
def cpu_kernels(request):
    """Run a test twice: with the cpu kernels as installed (ember-numba's compiled ones
    when that plugin is present) and with ember-norm's own NumPy kernels, which a
    compiled override would otherwise hide from every test."""
    if request.param == "installed":
        yield request.param
        return
    ops = [entry.obj for entry in ember.plugins.registry.catalogue("ops").values() if entry.plugin == "norm"]
    overrides = {op: op.kernels.pop("cpu") for op in ops if "cpu" in op.kernels}
    forget_kernels()
    try:
        yield request.param
    finally:
        for op, kernel in overrides.items():
            op.kernels["cpu"] = kernel
        forget_kernels()
