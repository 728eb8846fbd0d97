"""ember-numba's build: the metadata is in pyproject.toml; this adds the one extension
module, ember_numba._compiled, which numba's ahead-of-time compiler makes from the loops
modules (ember_numba/build_loops.py; NOTE [ Why ahead of time ] in
ember_numba/ahead_of_time.py).

PyTorch counterpart: torch/utils/cpp_extension.py (``BuildExtension``, the build_ext an
extension's setup.py uses) (v2.13).
"""

import os
import sys
import types

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CompileError

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src", "ember_numba")


class BuildLoops(build_ext):
    """build_ext for ember_numba._compiled, which numba compiles and links."""

    def build_extension(self, ext):
        if ext.name != "ember_numba._compiled":
            return super().build_extension(ext)
        # ember is not installed in the build's environment: import the loops modules
        # without the package's __init__, which imports ember for its hooks
        package = types.ModuleType("ember_numba")
        package.__path__ = [PACKAGE]
        sys.modules["ember_numba"] = package
        from ember_numba.build_loops import build

        path = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            build(path)
        except Exception as error:  # no C compiler, or a numba without pycc
            message = f"numba could not build ember_numba._compiled: {error}"
            raise CompileError(message) from error


# optional: a failed build installs the plugin all the same (setuptools warns), and every
# loop then runs through numba's JIT, as EMBER_NUMBA_JIT=1 makes it
setup(ext_modules=[Extension("ember_numba._compiled", sources=[], optional=True)],
      cmdclass={"build_ext": BuildLoops})
