"""The ahead-of-time build of ember-vision's compiled loops: numba's ``pycc`` compiles
each loop a loops module lists in ``EXPORTS`` (deform_conv2d_loops.py: the sampling loop
and the backward's two; roi_loops.py: roi_align's and roi_pool's backward) for float32
and float64 into one extension module, with the digest of the loops' source, which the
loader compares before using it (ember_vision/ops/deform_conv2d_compiled.py,
roi_compiled.py). setup.py calls ``build`` once per module.

PyTorch counterpart: torch/utils/cpp_extension.py (``BuildExtension``, v2.13), as
torchvision's setup.py uses it (``get_extensions``: the C++ and CUDA sources compiled into
torchvision's ``_C`` extension, torchvision 0.28).

This module runs in pip's build environment, before ember is installed: it imports
numba (inside ``build``), NumPy and the loops module, never ember.
"""

import hashlib
import os

LOOPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deform_conv2d_loops.py")
MODULE = "ember_vision._deform_conv2d_compiled"


def source_digest(path=LOOPS):
    """The first 60 bits of the SHA-256 of the loops' source, as an int (what a compiled
    function can return)."""
    with open(path, "rb") as source:
        return int(hashlib.sha256(source.read()).hexdigest()[:15], 16)


def load_built(module_name, digest, loops_file):
    """The built extension module ``module_name``, or None where it is missing or was
    built from another ``loops_file`` than today's, whose ``source_digest`` is ``digest``
    (with a warning: the reference kernels serve)."""
    import importlib
    import warnings

    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    if module.source_digest() != digest:
        warnings.warn(f"{module_name} was built from another {loops_file} than today's: the reference kernels serve on "
                      "the cpu; reinstall ember-vision to build it again", RuntimeWarning, stacklevel=3)
        return None
    return module


def build(path, loops):
    """Compile every ``(name, loop, signature)`` of ``loops.EXPORTS`` (the loops module,
    imported by the caller) for float32 and float64 as ``<name>_<dtype>``, and the digest
    of the module's source, into the extension file ``path``."""
    import warnings

    with warnings.catch_warnings():  # pycc is "pending deprecation", with no replacement yet
        warnings.simplefilter("ignore")
        from numba.pycc import CC

        extension = CC(os.path.basename(path).split(".")[0])
    extension.output_dir, extension.output_file = os.path.split(path)
    extension.target_cpu = os.environ.get("EMBER_NUMBA_TARGET_CPU", "host")
    for name, loop, signature in loops.EXPORTS:
        for dtype in ("float32", "float64"):
            extension.export(f"{name}_{dtype}", signature.format(t=dtype))(loop)
    namespace = {}
    exec(f"def digest():\n    return {source_digest(loops.__file__)}\n", namespace)
    extension.export("source_digest", "i8()")(namespace["digest"])
    extension.compile()
