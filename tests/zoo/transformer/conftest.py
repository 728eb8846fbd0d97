"""Shared set-up for the Transformer zoo tests: one BLAS thread.

The models here multiply small matrices (tens of rows); on a shared 2-core machine a
multi-threaded OpenBLAS spends most of such a product waiting for its second thread
(measured: 12 ms instead of 0.1 ms per product under load), so the tests pin NumPy's
OpenBLAS to one thread while they run, through its exported setter.
"""

import ctypes
import glob
import os

import numpy as np
import pytest


def _openblas():
    folder = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(folder, "libscipy_openblas*.so")):
        library = ctypes.CDLL(path)
        for suffix in ("64_", "_64_", ""):
            setter = getattr(library, f"scipy_openblas_set_num_threads{suffix}", None)
            getter = getattr(library, f"scipy_openblas_get_num_threads{suffix}", None)
            if setter is not None and getter is not None:
                return setter, getter
    return None


@pytest.fixture(autouse=True, scope="session")
def one_blas_thread():
    found = _openblas()
    if found is None:  # another BLAS build: leave it as it is
        yield
        return
    setter, getter = found
    before = getter()
    setter(1)
    yield
    setter(before)
