"""``ember.backends.mps``: Apple's Metal backend, which ember does not have.

PyTorch counterpart: torch/backends/mps/__init__.py (v2.13): ``is_available()`` and
``is_built()`` answer False, as PyTorch does on a machine without MPS.
"""


def is_available():
    return False


def is_built():
    return False
