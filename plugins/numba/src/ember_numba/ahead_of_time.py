"""Loops compiled ahead of time: each compiled loop declares the argument types it is
called with, ember-numba's build compiles those into one extension module,
``ember_numba._compiled`` (ember_numba/build_loops.py), and a call runs the compiled export
for its arguments' types, or numba's JIT for types the build did not compile.

PyTorch counterpart: torch/utils/cpp_extension.py (v2.13): an extension built ahead of
time by ``setup.py`` (``BuildExtension``), or compiled at run time by ``load()``; here
the same loops take either road.

# NOTE [ Why ahead of time ]
# numba compiles at run time, and so brings its compiler into the process: importing
# numba costs about 56 MB and loading the first kernel from numba's disk cache about
# 65 MB more (LLVM and numba's typing tables), whatever the model. That took the small
# CNN train step's peak from 87 MB to 205 (torch: 277), against issue 16's "at most half
# of torch's". The loops an ember process calls do not change between runs, so the
# build compiles them once, with numba's ahead-of-time compiler (``numba.pycc``), into
# an ordinary extension module, which needs NumPy and nothing of numba's to run: the
# step's peak goes back to about 90 MB. A call whose arguments the build did not
# declare (an other dtype, a non-contiguous view a loop was not declared for) still
# runs: numba is imported then, and compiles it as before. ``EMBER_NUMBA_JIT=1`` sends
# every call there (the tests run the loops both ways).
#
# A call finds its export by the loop's name and its arguments' numba types, written
# short: ``f4x2C`` is a C-contiguous 2-d float32 array, ``i8`` an int64 (a Python int),
# ``b1`` a bool. Each ``Loop`` remembers the export for what decides those types (an
# array's dtype, ndim and flags, a scalar's type), read per call, then one dict look-up:
# 2.6 us for im2col's 16 arguments, against 0.9 through numba's dispatcher, which does
# the same work in C, and 0.45 for the export called directly.
"""

import hashlib
import importlib
import importlib.util
import os
import warnings

import numpy as np
from numpy import ndarray

# numba's type of each scalar a loop is called with; a Python float is a float64, an int an int64
_SCALARS = {bool: "b1", int: "i8", float: "f8", np.bool_: "b1", np.int32: "i4", np.int64: "i8",
            np.float32: "f4", np.float64: "f8"}
MODULE = "ember_numba._compiled"
SOURCE = "source__"  # the exports that give the digest of a module the build compiled from


def ahead_of_time(*signatures):
    """Declare the numba signatures a loop is compiled for ahead of time, as strings
    such as ``"void({t}[::1], i8)"``: ``{t}`` stands for float32 and for float64, so that
    one string gives both. The declaration is read by the build only."""
    expanded = [s.format(t=t) for s in signatures for t in ("float32", "float64")]

    def declare(loop):
        loop.ahead_of_time = list(dict.fromkeys(expanded))  # a string without {t} comes once
        return loop
    return declare


def code(value):
    """numba's type of one argument, written short (NOTE above); None for anything the
    build never compiles for (read-only, unaligned or byte-swapped arrays, objects)."""
    short = _SCALARS.get(type(value))
    if short is not None:
        return short
    if type(value) is not np.ndarray:
        return None
    flags = value.flags
    if not (flags.writeable and flags.aligned and value.dtype.isnative):
        return None
    layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
    return f"{value.dtype.str[1:]}x{value.ndim}{layout}"


def export_name(module, loop, codes):
    """The name of a loop's export for these argument types: module, loop, types."""
    return "__".join((module.rpartition(".")[2], loop, "_".join(codes)))


def source_digests(names):
    """``{module name: its source file's SHA-256, the first 60 bits as an int}``, found
    without importing them (an int, which a compiled export can return)."""
    digests = {}
    for name in names:
        spec = importlib.util.find_spec(name)
        with open(spec.origin, "rb") as source:
            digests[name] = int(hashlib.sha256(source.read()).hexdigest()[:15], 16)
    return digests


def recorded_sources(module):
    """The digests the build compiled into ``module``: ``{module name: digest}``."""
    return {name[len(SOURCE):].replace("__", "."): getattr(module, name)()
            for name in dir(module) if name.startswith(SOURCE)}


def changed_sources(recorded):
    """The modules whose source is no longer the one the build compiled (``recorded``:
    the build's ``source_digests``)."""
    try:
        now = source_digests(recorded)
    except (ImportError, AttributeError, TypeError, OSError):  # a module gone or moved
        return sorted(recorded)
    return sorted(name for name in recorded if now[name] != recorded[name])


_built = False  # not yet looked for; then the module, or None


def built():
    """ember_numba._compiled, or None where it was not built, was built from sources
    that have changed since (an editable install: NOTE [ A build older than its
    loops ]), or EMBER_NUMBA_JIT is set."""
    global _built
    if _built is False:
        _built = None
        if os.environ.get("EMBER_NUMBA_JIT", "") in ("", "0"):
            try:
                module = importlib.import_module(MODULE)
            except ImportError:
                return None
            _built = module if _current(module) else None
    return _built


# NOTE [ A build older than its loops ]
# In an editable install (``pip install -e``, as tox makes them) the loops' sources can
# change after the build: an export would then run the old machine code. So the build
# compiles into the module the digest of every ember_numba module it compiled from (the
# loops modules and those they import: jit.py's flags, vector_exp.py), one export each,
# and the first call checks them (about a millisecond): if any differs, the whole build
# is set aside, with a warning, and numba's JIT compiles the loops from their sources
# until the plugin is built again. (In the module, not in a file beside it: an editable
# install copies the extension module alone out of its build.)
def _current(module):
    recorded = recorded_sources(module)
    changed = changed_sources(recorded) if recorded else ["(no record of its sources)"]
    if changed:
        warnings.warn(f"ember_numba._compiled was built from other sources than today's "
                      f"({', '.join(changed)}): numba's JIT compiles the loops instead; reinstall "
                      f"ember-numba to build them again", RuntimeWarning, stacklevel=3)
    return not changed


class Loop:
    """A compiled loop, called by its module's and function's names: the ahead-of-time
    export for the arguments' types if the build made one, else the function itself,
    compiled by numba's JIT (its module is imported then, and numba with it)."""

    def __init__(self, module, name):
        self.module, self.name = module, name
        self._by_key = {}

    def __call__(self, *args):
        # what decides each argument's code, read in one pass (NOTE above): an array's
        # dtype, ndim and flags (contiguity, writeable, aligned), a scalar's type
        key = tuple([(a.dtype, a.ndim, a.flags.num) if type(a) is ndarray else type(a)
                     for a in args])
        loop = self._by_key.get(key)
        if loop is None:
            loop = self._by_key[key] = self.resolve(tuple(map(code, args)))
        return loop(*args)

    def resolve(self, codes):
        """The callable that serves arguments of these types."""
        module = built()
        if module is not None and None not in codes:
            export = getattr(module, export_name(self.module, self.name, codes), None)
            if export is not None:
                return export
        return self.jit()

    def jit(self):
        """The loop as numba's JIT compiles it (importing its module, and numba)."""
        return getattr(importlib.import_module(self.module), self.name)

    def __repr__(self):
        return f"Loop({self.module}.{self.name})"


class Loops:
    """A loops module's loops as attributes, each a ``Loop``: what the kernels call. The
    module itself is imported only where a call falls back to the JIT."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        loop = Loop(self._module, name)
        setattr(self, name, loop)
        return loop
