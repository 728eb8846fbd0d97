"""ember-vision's build: the metadata is in pyproject.toml; this adds the one extension
module, ember_vision._deform_conv2d_compiled, which numba's ahead-of-time compiler makes
from deform_conv2d's sampling loop (ember_vision/ops/deform_conv2d_build.py).

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


class BuildLoops(build_ext):
    """build_ext for ember_vision._deform_conv2d_compiled, which numba compiles and
    links."""

    def build_extension(self, ext):
        if ext.name != "ember_vision._deform_conv2d_compiled":
            return super().build_extension(ext)
        path = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            _load("deform_conv2d_build").build(path, _load("deform_conv2d_loops"))
        except Exception as error:  # no C compiler, or a numba without pycc
            message = f"numba could not build {ext.name}: {error}"
            raise CompileError(message) from error


# optional: a failed build installs the plugin all the same (setuptools warns), and the
# NumPy reference kernel serves deform_conv2d on the cpu
setup(ext_modules=[Extension("ember_vision._deform_conv2d_compiled", sources=[], optional=True)],
      cmdclass={"build_ext": BuildLoops})
