"""The ahead-of-time build of one of ember-vision's extension modules, as its setup.py
runs it, into a folder of the test's own, and the module loaded from there (the tests of
deform_conv2d's and the RoI ops' compiled loops share it)."""

import importlib.util
import sysconfig

from ember_vision.ops import deform_conv2d_build


def built_extension(folder, name, loops):
    """``(folder, module)``: ``loops`` (a loops module) built as ``name`` into ``folder``."""
    path = folder / (name + sysconfig.get_config_var("EXT_SUFFIX"))
    deform_conv2d_build.build(str(path), loops)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return folder, module
