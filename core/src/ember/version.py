"""``ember.version``: the release, and the CUDA version the GPU backend runs on.

PyTorch counterpart: torch/version.py (v2.13), generated at build time with
``__version__``, ``cuda`` (None on a CPU-only build) and ``git_version``. ember's core is
pure Python and built for no CUDA: ``cuda`` is the CUDA runtime version of the
installed ``cuda`` backend (ember-cupy, "12.4"), asked for when read, and None without
one, as in torch's CPU builds.
"""

__version__ = "0.1.0"


def __getattr__(name):
    if name == "cuda":
        from ember.plugins import registry

        backend = registry.find_backend("cuda")
        if backend is None or not backend.is_available():
            return None
        return backend.module.cuda_version()
    raise AttributeError(f"module 'ember.version' has no attribute {name!r}")
