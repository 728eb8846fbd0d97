"""``ember.utils.cpp_extension``: torch's names for building C++ extensions, mapped onto
what ember can build.

PyTorch counterpart: torch/utils/cpp_extension.py (``load``, ``load_inline``,
``CppExtension``, ``CUDAExtension``, ``BuildExtension``, ``include_paths``,
``library_paths``) (v2.13).

# NOTE [ Why torch's C++ extensions do not compile against ember ]
# A torch extension includes <torch/extension.h>: libtorch's C++ API (at::Tensor, the
# dispatcher, TORCH_LIBRARY) and the pybind11 that torch bundles. torch compiles it
# against those headers and links it to libtorch. ember is Python over NumPy: it has
# no C++ tensor type, no headers and no library to link to, so such a source cannot be
# compiled "the way torch does" at all, and no translation of it would be honest. ember's
# route to compiled kernels is numba instead: a kernel is a Python loop over NumPy
# arrays, compiled by ``numba.njit`` when first called, or ahead of time by
# ``numba.pycc`` when its plugin is installed (ember-numba, ember-vision's
# deform_conv2d; chapters 17 and 18), and registered as an op with
# ``ember.library.custom_op``. Every function here that meets a torch header (or
# ``load_inline``, which adds one) raises one error that says so.
#
# What does compile: C++ that does not use torch, an ordinary CPython extension module
# (the Python C API, no pybind11), built by setuptools with the machine's compiler.
# ``load`` builds and imports such a module as torch's does; ``CppExtension`` and
# ``BuildExtension`` build it in a setup.py. A machine without a C++ compiler gets the
# compiler's error inside torch's "Error building extension" message.
"""

import importlib.util
import os
import re

import setuptools
from setuptools.command.build_ext import build_ext

__all__ = ["BuildExtension", "CUDAExtension", "CppExtension", "include_paths", "library_paths", "load", "load_inline"]

_TORCH_HEADER = re.compile(r'^\s*#\s*include\s*[<"](torch|ATen|c10|caffe2)/', re.MULTILINE)

ROUTE = ("ember has no C++ tensor API (no torch/extension.h, no libtorch to link to), so C++ written for torch's "
         "extension API cannot be compiled against it. ember's compiled kernels are numba's instead: write the "
         "kernel as a Python loop over NumPy arrays compiled with numba.njit (or ahead of time with numba.pycc, as "
         "ember-numba and ember-vision do) and register it as an op with ember.library.custom_op (docs chapters "
         "17 and 18). See NOTE [ Why torch's C++ extensions do not compile against ember ] in "
         "ember/utils/cpp_extension.py")


def include_paths(device_type="cpu", torch_include_dirs=True):
    """The include directories of the framework's C++ API: none, ember has no headers."""
    return []


def library_paths(device_type="cpu", torch_include_dirs=True, cross_target_platform=None):
    """The libraries to link against: none, ember has no C++ library."""
    return []


def _refuse(what, detail):
    raise RuntimeError(f"{what}: {detail}. {ROUTE}")


def _check_sources(what, sources):
    """Refuse a source that includes torch's headers (the NOTE above)."""
    for source in sources:
        with open(source) as f:
            if _TORCH_HEADER.search(f.read()):
                _refuse(what, f"{source} includes torch's C++ headers")


def CppExtension(name, sources, *args, **kwargs):
    """A ``setuptools.Extension`` for C++ sources (without torch's include dirs and libraries:
    ember has none); ``BuildExtension`` refuses sources that include torch's headers."""
    kwargs.setdefault("language", "c++")
    return setuptools.Extension(name, sources, *args, **kwargs)


def CUDAExtension(name, sources, *args, **kwargs):
    """Refused: ember's CUDA kernels are CuPy's (RawKernel), compiled by CuPy at run time."""
    _refuse("CUDAExtension", "ember builds no CUDA C++ extensions (its CUDA kernels are CuPy RawKernels, "
            "compiled by CuPy when first used)")


class BuildExtension(build_ext):
    """setuptools' ``build_ext``, refusing any extension whose sources include torch's headers."""

    @classmethod
    def with_options(cls, **options):
        """torch's way to pass ``use_ninja``/``no_python_abi_suffix``; ember's build takes none."""
        return cls

    def build_extension(self, ext):
        _check_sources(f"BuildExtension({ext.name})", ext.sources)
        super().build_extension(ext)


def _build_directory(name, build_directory):
    if build_directory is not None:
        return build_directory
    root = os.environ.get("EMBER_EXTENSIONS_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                  "ember_extensions")
    return os.path.join(root, name)


def load(name, sources, extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None, extra_ldflags=None,
         extra_include_paths=None, build_directory=None, verbose=False, with_cuda=None, with_sycl=None,
         is_python_module=True, is_standalone=False, keep_intermediates=True):
    """Compile ``sources`` into the Python extension module ``name`` and import it.

    Sources that include torch's headers, CUDA sources and ``is_python_module=False``
    (a library that registers torch ops) raise ember's one error (NOTE above).
    """
    sources = [sources] if isinstance(sources, str) else list(sources)
    if with_cuda or any(s.endswith((".cu", ".cuh")) for s in sources):
        _refuse(f"load({name!r})", "ember builds no CUDA sources (its CUDA kernels are CuPy RawKernels)")
    if not is_python_module or is_standalone:
        _refuse(f"load({name!r})", "a library that is not a Python module exists to register torch operators "
                "(TORCH_LIBRARY)")
    _check_sources(f"load({name!r})", sources)
    extension = CppExtension(name, [os.path.abspath(s) for s in sources], extra_compile_args=extra_cflags or [],
                             extra_link_args=extra_ldflags or [], include_dirs=extra_include_paths or [])
    return _build_and_import(extension, _build_directory(name, build_directory), verbose)


def _build_and_import(extension, directory, verbose):
    """Build one extension with setuptools into ``directory``, then import it from there."""
    import contextlib
    import io

    os.makedirs(directory, exist_ok=True)
    command = build_ext(setuptools.Distribution({"name": extension.name, "ext_modules": [extension]}))
    command.build_lib = directory
    command.build_temp = os.path.join(directory, "build")
    quiet = contextlib.nullcontext() if verbose else contextlib.redirect_stdout(io.StringIO())
    try:
        with quiet:
            command.ensure_finalized()
            command.run()
    except Exception as error:  # no compiler, a compile or link error: setuptools' error says which
        raise RuntimeError(f"Error building extension '{extension.name}': {error}") from error
    spec = importlib.util.spec_from_file_location(extension.name, command.get_ext_fullpath(extension.name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_inline(name, cpp_sources, cuda_sources=None, sycl_sources=None, functions=None, extra_cflags=None,
                extra_cuda_cflags=None, extra_sycl_cflags=None, extra_ldflags=None, extra_include_paths=None,
                build_directory=None, verbose=False, with_cuda=None, with_sycl=None, is_python_module=True,
                with_pytorch_error_handling=True, keep_intermediates=True, use_pch=False, no_implicit_headers=False):
    """``load`` from source strings. torch puts ``#include <torch/extension.h>`` in front of
    them (unless ``no_implicit_headers``) and writes pybind11 bindings for ``functions``;
    ember can do neither, so only ``no_implicit_headers=True`` without ``functions``
    compiles (a CPython extension written out in full)."""
    if cuda_sources:
        _refuse(f"load_inline({name!r})", "ember builds no CUDA sources (its CUDA kernels are CuPy RawKernels)")
    if not no_implicit_headers:
        _refuse(f"load_inline({name!r})", "torch compiles these sources after #include <torch/extension.h>")
    if functions:
        _refuse(f"load_inline({name!r})", "torch writes pybind11 bindings for `functions` with the pybind11 it "
                "bundles; ember has none")
    directory = _build_directory(name, build_directory)
    os.makedirs(directory, exist_ok=True)
    source = os.path.join(directory, "main.cpp")
    with open(source, "w") as f:
        f.write("\n".join([cpp_sources] if isinstance(cpp_sources, str) else cpp_sources))
    return load(name, [source], extra_cflags=extra_cflags, extra_ldflags=extra_ldflags,
                extra_include_paths=extra_include_paths, build_directory=directory, verbose=verbose,
                is_python_module=is_python_module)
