"""The ahead-of-time build of one of ember-vision's extension modules, as its setup.py
runs it, into a folder of the test's own, and the module loaded from there (the tests of
deform_conv2d's and the RoI ops' compiled loops share it)."""

import contextlib
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


@contextlib.contextmanager
def installed_in(folder, ops, monkeypatch):
    """The modules built into ``folder`` importable as ``ember_vision._...`` (where an
    install puts them); the kernels of ``ops`` as they were, afterwards."""
    import ember_vision
    from ember.dispatcher import forget_kernels

    monkeypatch.setattr(ember_vision, "__path__", list(ember_vision.__path__) + [str(folder)])
    before = {op: dict(op.kernels) for op in ops}
    try:
        yield
    finally:
        for op, kernels in before.items():
            op.kernels.clear()
            op.kernels.update(kernels)
        forget_kernels()
