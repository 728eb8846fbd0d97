"""Tests for ember/utils/cpp_extension.py: torch's names and signatures; a source written
for torch's C++ API is one clear error that names ember's route (numba), for load,
load_inline, BuildExtension and CUDAExtension; a C++ source without torch (a CPython
extension) builds and imports through load, load_inline and CppExtension/BuildExtension
where the machine has a C++ compiler (it is skipped where there is none)."""

import inspect
import shutil
import sys
import textwrap

import pytest
import setuptools
import torch.utils.cpp_extension as torch_cpp

from ember.utils import cpp_extension

TORCH_SOURCE = textwrap.dedent("""
    #include <torch/extension.h>
    torch::Tensor twice(torch::Tensor x) { return x * 2; }
    PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("twice", &twice); }
""")

PLAIN_SOURCE = textwrap.dedent("""
    #include <Python.h>
    static PyObject* twice(PyObject*, PyObject* arg) {
        double x = PyFloat_AsDouble(arg);
        if (PyErr_Occurred()) return nullptr;
        return PyFloat_FromDouble(2 * x);
    }
    static PyMethodDef methods[] = {{"twice", twice, METH_O, "2 x"}, {nullptr, nullptr, 0, nullptr}};
    static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "NAME", nullptr, -1, methods};
    PyMODINIT_FUNC PyInit_NAME(void) { return PyModule_Create(&module); }
""")
has_compiler = pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                                  reason="needs a C++ compiler")


@pytest.mark.parametrize("name", ["load", "load_inline", "include_paths", "library_paths", "CppExtension"])
def test_signatures_are_torchs(name):
    def plain(fn):  # names, kinds and defaults; torch's annotations aside
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    assert plain(getattr(cpp_extension, name)) == plain(getattr(torch_cpp, name))


def test_no_headers_and_no_libraries():
    assert torch_cpp.include_paths() and cpp_extension.include_paths() == []
    assert cpp_extension.library_paths() == []


def test_a_torch_source_is_one_error_naming_ember_route(tmp_path):
    source = tmp_path / "twice.cpp"
    source.write_text(TORCH_SOURCE)
    with pytest.raises(RuntimeError, match=r"twice.cpp includes torch's C\+\+ headers\. ember has no C\+\+ "
                                           r"tensor API") as error:
        cpp_extension.load("twice", [str(source)], build_directory=str(tmp_path))
    assert "numba" in str(error.value) and "ember.library.custom_op" in str(error.value)
    with pytest.raises(RuntimeError, match=r"torch/extension.h"):
        cpp_extension.load_inline("twice", "int f() { return 1; }", build_directory=str(tmp_path))
    with pytest.raises(RuntimeError, match="pybind11"):
        cpp_extension.load_inline("twice", "int f() { return 1; }", functions=["f"], no_implicit_headers=True,
                                  build_directory=str(tmp_path))
    with pytest.raises(RuntimeError, match="CuPy RawKernels"):
        cpp_extension.CUDAExtension("twice", ["twice.cu"])
    with pytest.raises(RuntimeError, match="CuPy RawKernels"):
        cpp_extension.load("twice", [str(tmp_path / "twice.cu")])


def test_build_extension_refuses_a_torch_source(tmp_path):
    source = tmp_path / "twice.cpp"
    source.write_text(TORCH_SOURCE)
    extension = cpp_extension.CppExtension("twice", [str(source)])
    assert isinstance(extension, setuptools.Extension) and extension.language == "c++"
    command = cpp_extension.BuildExtension(setuptools.Distribution({"name": "twice", "ext_modules": [extension]}))
    with pytest.raises(RuntimeError, match=r"BuildExtension\(twice\): .*includes torch's C\+\+ headers"):
        command.build_extension(extension)
    assert cpp_extension.BuildExtension.with_options(use_ninja=False) is cpp_extension.BuildExtension


@has_compiler
def test_load_builds_and_imports_a_cpython_extension(tmp_path):
    source = tmp_path / "plain.cpp"
    source.write_text(PLAIN_SOURCE.replace("NAME", "plain_twice"))
    module = cpp_extension.load("plain_twice", [str(source)], build_directory=str(tmp_path / "build"))
    assert module.twice(1.5) == 3.0
    inline = cpp_extension.load_inline("inline_twice", PLAIN_SOURCE.replace("NAME", "inline_twice"),
                                       no_implicit_headers=True, build_directory=str(tmp_path / "inline"))
    assert inline.twice(-2.0) == -4.0
    sys.modules.pop("plain_twice", None)


@has_compiler
def test_a_compile_error_is_torchs_error_building_extension(tmp_path):
    source = tmp_path / "broken.cpp"
    source.write_text("this is not C++")
    with pytest.raises(RuntimeError, match="Error building extension 'broken'"):
        cpp_extension.load("broken", [str(source)], build_directory=str(tmp_path / "build"))
