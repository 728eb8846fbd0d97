"""How ember-numba compiles a kernel: ``numba.njit`` with reassociation allowed but
NaN and infinity kept, and a disk cache: the flags the ahead-of-time build compiles each
loop with too (ember_numba/build_loops.py), and the JIT that serves any other call,
with numba imported at its first call only.

PyTorch counterpart: none in Python; the role of the compiler flags and the
``Vectorized`` reductions of aten/src/ATen/cpu/vec (v2.13).

# NOTE [ Which fast-math flags ]
# A reduction ``s += x[j]`` is a chain of dependent additions: without permission to
# reorder them LLVM keeps one running sum and the loop runs at one element per add
# latency (LayerNorm on (2048, 256) float32, one process: the statistics 2.08 ms
# without and 0.10 ms with these flags, the backward 1.29 and 0.40 ms). ``reassoc``
# lets it keep eight (AVX2) or sixteen partial sums, as torch's vectorized sums do;
# ``arcp`` allows a multiply by a reciprocal, ``nsz`` ignores the sign of zero.
# Left out: ``nnan`` and ``ninf``, with which LLVM may assume no value is NaN or
# infinite and fold them away, while torch propagates them; and ``contract`` (fused
# multiply-adds), which measured no faster (within 10%, either way, per kernel) and
# breaks exact cancellations: with one value per channel, batch norm's grad_input
# ``g * scale - g * scale`` came out as the rounding error of one product (1e-5 at
# invstd 316) where torch gives 0.
#
# numba's disk cache is keyed by the source file of each compiled function, not by
# these flags: after changing them, delete the ``*.nbi`` / ``*.nbc`` files under
# ``ember_numba/__pycache__`` (or touch the kernel files).
"""

import functools

FASTMATH = frozenset({"reassoc", "nsz", "arcp"})  # NOTE above


def lazily(**options):
    """A decorator: ``fn`` compiled by ``numba.njit(**options)`` at its first call.

    Importing numba costs about half a second (and 56 MB), so it happens at the first
    call of a loop the ahead-of-time build did not compile (ember_numba/ahead_of_time.py),
    not when ember loads the plugin. ``call.dispatcher()`` is the numba dispatcher itself,
    which the build compiles its exports through (ember_numba/build_loops.py).
    """
    def decorate(fn):
        compiled = None

        def dispatcher():
            nonlocal compiled
            if compiled is None:
                import numba

                compiled = numba.njit(**options)(fn)
            return compiled

        @functools.wraps(fn)
        def call(*args):
            return dispatcher()(*args)

        call.py_func, call.dispatcher = fn, dispatcher
        return call
    return decorate


# Each (function, argument types) pair is compiled once and cached under the package's
# ``__pycache__``; later processes load it from there.
jit = lazily(fastmath=set(FASTMATH), cache=True)
