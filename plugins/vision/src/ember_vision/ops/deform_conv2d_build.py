"""The ahead-of-time build of deform_conv2d's compiled sampling loop: numba's ``pycc``
compiles ``deform_conv2d_loops.deformable_im2col`` for float32 and float64 into one
extension module, with the digest of the loops' source, which the loader compares
before using it (ember_vision/ops/deform_conv2d_compiled.py). setup.py calls ``build``.

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


def build(path, loops):
    """Compile ``loops.deformable_im2col`` (the loops module, imported by the caller) for
    float32 and float64, and the digest of its source, into the extension file ``path``."""
    import warnings

    with warnings.catch_warnings():  # pycc is "pending deprecation", with no replacement yet
        warnings.simplefilter("ignore")
        from numba.pycc import CC

        extension = CC(os.path.basename(path).split(".")[0])
    extension.output_dir, extension.output_file = os.path.split(path)
    extension.target_cpu = os.environ.get("EMBER_NUMBA_TARGET_CPU", "host")
    for dtype in ("float32", "float64"):
        extension.export(f"deformable_im2col_{dtype}", loops.SIGNATURE.format(t=dtype))(loops.deformable_im2col)
    namespace = {}
    exec(f"def digest():\n    return {source_digest()}\n", namespace)
    extension.export("source_digest", "i8()")(namespace["digest"])
    extension.compile()
