"""ember-vision's build: the metadata is in pyproject.toml; this adds two extension
modules, which numba's ahead-of-time compiler makes (ember_vision/ops/deform_conv2d_build.py):
ember_vision._deform_conv2d_compiled from deform_conv2d's sampling and backward loops
(deform_conv2d_loops.py), and ember_vision._roi_compiled from roi_align's and roi_pool's
backward loops (roi_loops.py).

PyTorch counterpart: torchvision's setup.py (``get_extensions``, ``BuildExtension``)
(torchvision 0.28).
"""

import importlib.util
import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CompileError

OPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src", "ember_vision", "ops")


def _load(name):
    """A module of ember_vision/ops by its file: ember is not installed in the build's
    environment, so the package's __init__ (which imports ember) must not run."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(OPS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# each extension module and the loops module it is built from
LOOPS = {"ember_vision._deform_conv2d_compiled": "deform_conv2d_loops", "ember_vision._roi_compiled": "roi_loops"}


class BuildLoops(build_ext):
    """build_ext for the modules of LOOPS, which numba compiles and links."""

    def build_extension(self, ext):
        if ext.name not in LOOPS:
            return super().build_extension(ext)
        path = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            _load("deform_conv2d_build").build(path, _load(LOOPS[ext.name]))
        except Exception as error:  # no C compiler, or a numba without pycc
            message = f"numba could not build {ext.name}: {error}"
            raise CompileError(message) from error


# optional: a failed build installs the plugin all the same (setuptools warns), and the
# NumPy reference kernels serve on the cpu
setup(ext_modules=[Extension(name, sources=[], optional=True) for name in LOOPS], cmdclass={"build_ext": BuildLoops})
