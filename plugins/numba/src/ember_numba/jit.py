"""How ember-numba compiles a kernel: ``numba.njit`` with reassociation allowed but
NaN and infinity kept, a disk cache, and numba imported on the first call only.

PyTorch counterpart: none in Python; the role of the compiler flags and the
``Vectorized`` reductions of aten/src/ATen/cpu/vec (v2.13).

# NOTE [ Which fast-math flags ]
# A reduction ``s += x[j]`` is a chain of dependent additions: without permission to
# reorder them LLVM keeps one running sum and the loop runs at one element per add
# latency (a LayerNorm row of 256 float32 values: about 4x slower, measured). ``reassoc``
# lets it keep eight (AVX2) or sixteen partial sums, as torch's vectorized sums do;
# ``contract`` allows fused multiply-adds, ``arcp`` a multiply by a reciprocal, ``nsz``
# ignores the sign of zero. ``nnan`` and ``ninf`` are left out: with them LLVM may assume
# no value is NaN or infinite and fold such values away, while torch propagates them.
"""

import functools

FASTMATH = frozenset({"reassoc", "contract", "nsz", "arcp"})


def jit(fn):
    """``fn`` compiled with numba (nopython, FASTMATH, ``cache=True``) on its first call.

    Importing numba costs about half a second, so it happens at the first call of a
    compiled kernel, not when ember loads the plugin. Each (function, argument types)
    pair is compiled once and cached under the package's ``__pycache__``; later
    processes load it from there.
    """
    compiled = None

    @functools.wraps(fn)
    def call(*args):
        nonlocal compiled
        if compiled is None:
            import numba

            compiled = numba.njit(fastmath=set(FASTMATH), cache=True)(fn)
        return compiled(*args)

    call.py_func = fn
    return call
