"""Scatter-add on the GPU for the ops that accumulate into repeated indices:
``index_put(accumulate=True)``, ``index_add``, ``scatter_add`` and ``scatter(reduce="add")``.

PyTorch counterpart: aten/src/ATen/native/cuda/ScatterGatherKernel.cu and
aten/src/ATen/native/cuda/Indexing.cu (``index_put_with_sort``, ``index_add``) (v2.13).

The core's kernels accumulate with ``xp.add.at`` (ember/native/indexing/indexing.py ``_add_at``),
which in CuPy (13 and later) is the same CUDA ``atomicAdd`` scatter as ``cupyx.scatter_add``.
CUDA has no atomic add for 8- and 16-bit integers or bool, so on those dtypes these
overrides widen the operands to int32, run the core's own kernel, and narrow the result:
integer sums wrap as they do in PyTorch, and a bool sum is True where any term is True
(NumPy's ``add.at`` on bool, PyTorch's accumulate on bool). Every other dtype runs the
core's kernel unchanged, so behaviour and error messages are the core's.
"""

from ember.native.indexing import indexing

# dtypes CUDA's atomicAdd (as CuPy wraps it) cannot accumulate in place.
_NARROW = frozenset(("bool", "int8", "uint8", "int16", "uint16"))


def _always(attrs):
    return True


def _widened(kernel, adds=_always):
    """``kernel(xp, a, *rest, **attrs)`` run in int32 when ``a`` has a dtype atomicAdd
    lacks and ``adds(attrs)`` says this call accumulates."""
    def run(xp, a, *rest, **attrs):
        if a.dtype.name not in _NARROW or not adds(attrs):
            return kernel(xp, a, *rest, **attrs)
        wide = tuple(x.astype(xp.int32) if _is_values(x, a) else x for x in rest)
        out = kernel(xp, a.astype(xp.int32), *wide, **attrs)
        return out.astype(bool) if a.dtype.kind == "b" else out.astype(a.dtype)
    run.__name__ = run.__qualname__ = kernel.__name__
    run.__doc__ = f"{kernel.__name__}, widened to int32 for dtypes without atomicAdd (see module docstring)."
    return run


def _is_values(x, a):
    # The operand holding values of a's dtype (never the integer index arrays).
    return hasattr(x, "dtype") and x.dtype == a.dtype


def _scatter_add_kernel(xp, a, index, src, dim):
    return indexing._scatter_kernel(xp, a, index, src, dim, "add")


# index_put only adds with accumulate=True, scatter only with reduce="add".
index_put = _widened(indexing._index_put_kernel, adds=lambda attrs: attrs.get("accumulate", False))
index_add = _widened(indexing._index_add_kernel)
scatter = _widened(indexing._scatter_kernel, adds=lambda attrs: attrs.get("reduce") == "add")
scatter_add = _widened(_scatter_add_kernel)
