"""The build of ember_numba._compiled: every loop of ember-numba's ``*_loops.py`` modules,
compiled for the signatures it declares (``ahead_of_time``) by numba's ahead-of-time
compiler into one extension module. setup.py calls ``build`` at install.

PyTorch counterpart: torch/utils/cpp_extension.py (``BuildExtension``, v2.13).

This module and the loops modules are imported by the build, which runs before ember is
installed: they import numba and NumPy, never ember (NOTE [ Why ahead of time ] in
ember_numba/ahead_of_time.py).

# NOTE [ One export per signature ]
# ``numba.pycc.CC.export`` compiles a function with flags of its own: no fast-math, and
# Python's error model. So each export is a one-line function that calls the loop as
# the JIT compiles it (``dispatcher()``, with ember_numba/jit.py's or exact.py's
# flags): numba compiles a callee with the callee's own flags.
# The loops compiled without fast-math give the JIT's results bit for bit; those
# allowed to reassociate may add in another order, a unit in the last place now and
# then (tests/plugins/numba/test_ahead_of_time.py). The code is built for the building
# machine's CPU (``host``, as the JIT does); ``EMBER_NUMBA_TARGET_CPU`` (an LLVM CPU
# name such as ``x86-64-v3``) builds for another.
"""

import importlib
import os
import pkgutil
import sys
import warnings

from ember_numba.ahead_of_time import SOURCE, export_name, source_digests


def loops_modules():
    """The names of ember-numba's loops modules: every ``ember_numba.*_loops``."""
    package = importlib.import_module("ember_numba")
    return sorted("ember_numba." + m.name for m in pkgutil.iter_modules(package.__path__)
                  if m.name.endswith("_loops") and not m.name.startswith("_"))


def declared():
    """``(module name, loop name, loop, signature)`` for every declared signature."""
    for name in loops_modules():
        module = importlib.import_module(name)
        for attribute, loop in sorted(vars(module).items()):
            for signature in getattr(loop, "ahead_of_time", ()):
                yield name, attribute, loop, signature


def short_codes(signature):
    """The argument codes of a numba signature string (ember_numba.ahead_of_time.code)."""
    from numba.core import sigutils, types

    arguments, _ = sigutils.normalize_signature(signature)
    return tuple(_short(t, types) for t in arguments)


def _short(numba_type, types):
    from numba.np.numpy_support import as_dtype

    if isinstance(numba_type, types.Array):
        return f"{as_dtype(numba_type.dtype).str[1:]}x{numba_type.ndim}{numba_type.layout}"
    return as_dtype(numba_type).str[1:]


def _export(loop, arity):
    """A function of ``arity`` arguments that calls the loop's compiled dispatcher
    (NOTE above)."""
    target = loop.dispatcher() if hasattr(loop, "dispatcher") else loop
    names = ", ".join(f"a{i}" for i in range(arity))
    namespace = {"target": target}
    exec(f"def export({names}):\n    return target({names})\n", namespace)
    return namespace["export"]


def _constant(value):
    """A function of no arguments that returns the int ``value``."""
    namespace = {}
    exec(f"def constant():\n    return {value}\n", namespace)
    return namespace["constant"]


def build(path):
    """Compile every declared loop into the extension module file ``path``."""
    with warnings.catch_warnings():  # pycc is "pending deprecation", with no replacement yet
        warnings.simplefilter("ignore")
        from numba.pycc import CC

        extension = CC(os.path.basename(path).split(".")[0])
    extension.output_dir, extension.output_file = os.path.split(path)
    extension.target_cpu = os.environ.get("EMBER_NUMBA_TARGET_CPU", "host")
    for module, attribute, loop, signature in declared():
        codes = short_codes(signature)
        extension.export(export_name(module, attribute, codes), signature)(_export(loop, len(codes)))
    # NOTE [ A build older than its loops ] in ahead_of_time.py: every module of ours the
    # loops are compiled from is imported by now
    compiled_from = sorted(name for name in sys.modules if name.startswith("ember_numba."))
    for name, digest in source_digests(compiled_from).items():
        extension.export(SOURCE + name.replace(".", "__"), "i8()")(_constant(digest))
    extension.compile()
