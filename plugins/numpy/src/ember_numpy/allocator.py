"""The ``cpu`` backend's allocator: freed array memory is kept for the next step instead of
being given back to the kernel, and can be seen and emptied.

PyTorch counterpart: c10/core/CPUAllocator.cpp and the caching idea of
c10/mobile/CPUCachingAllocator.cpp and c10/cuda/CUDACachingAllocator.cpp (v2.13); the
interface is torch.cuda.memory_stats() / empty_cache().

# NOTE [ Caching freed memory on the CPU ]
# NumPy takes array memory from C's malloc. glibc serves a large request (over
# M_MMAP_THRESHOLD: 128 KiB at first, raised by glibc as large blocks are freed, to at
# most 32 MiB) with a fresh mmap and unmaps it on free; and it returns the top of its
# heap to the kernel once more than M_TRIM_THRESHOLD is free there. A training step
# allocates and frees the same activations and gradients every step, so every step
# faults in freshly zeroed pages again (5.7% of a ResNet-18 step in issue 16's
# profile, more in the kernel's page clearing).
#
# A caching allocator keeps freed blocks and hands them out again; c10's CUDA one bins
# them by size. On the CPU, glibc's heap already is such a cache, once told to keep
# what is freed: `enable()` serves every request up to CACHE_LIMIT (32 MiB, the most
# glibc accepts; larger blocks are still mapped per allocation) from the heap
# (M_MMAP_THRESHOLD) and stops trimming it (M_TRIM_THRESHOLD), so a block freed in step
# k is reused in step k+1 with its pages already mapped. `memory_stats()` reads glibc's
# counters (mallinfo2), `empty_cache()` gives the free pages back (malloc_trim), as
# `torch.cuda.empty_cache()` returns cached blocks to the driver. On a C library without
# these controls (not glibc), caching is simply off and the stats say so.
#
# ember turns caching on with the ``cpu`` backend, unless EMBER_CPU_CACHING=0: unlike
# torch's CPU allocator, whose freed memory goes straight back to malloc (and so to
# the kernel), which is the difference to remember when reading process RSS.
"""

import ctypes
import ctypes.util
import os

CACHE_LIMIT = 32 << 20  # requests up to 32 MiB come from the heap: glibc refuses a larger threshold
_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3
_GLIBC_DEFAULT_MMAP_THRESHOLD = 128 * 1024
_GLIBC_DEFAULT_TRIM_THRESHOLD = 128 * 1024


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def _libc():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt, libc.malloc_trim, libc.mallinfo2  # noqa: B018  (glibc >= 2.33 has all three)
    except (OSError, AttributeError, TypeError):
        return None
    libc.mallinfo2.restype = _MallInfo2
    return libc


_LIBC = _libc()
_state = {"caching": False}


def is_supported():
    """True where the C library lets ember keep freed memory (glibc)."""
    return _LIBC is not None


def is_caching():
    return _state["caching"]


def enable():
    """Keep freed memory in the process for reuse (NOTE [ Caching freed memory on the
    CPU ])."""
    if _LIBC is None:
        return False
    # mallopt answers 1 when it took the value
    if not (_LIBC.mallopt(_M_MMAP_THRESHOLD, CACHE_LIMIT)
            and _LIBC.mallopt(_M_TRIM_THRESHOLD, 2 ** 31 - 1)):
        disable()
        return False
    _state["caching"] = True
    return True


def disable():
    """glibc's defaults again: large blocks mapped and unmapped per allocation."""
    if _LIBC is None:
        return
    _LIBC.mallopt(_M_MMAP_THRESHOLD, _GLIBC_DEFAULT_MMAP_THRESHOLD)
    _LIBC.mallopt(_M_TRIM_THRESHOLD, _GLIBC_DEFAULT_TRIM_THRESHOLD)
    _state["caching"] = False


def enable_by_default():
    """What the ``cpu`` backend does when it is created: cache unless EMBER_CPU_CACHING=0."""
    if os.environ.get("EMBER_CPU_CACHING", "1") != "0":
        enable()


def memory_stats(index=None):
    """glibc's view of the process heap, in bytes, with torch.cuda.memory_stats-like keys:
    ``allocated_bytes.all.current`` (in use), ``reserved_bytes.all.current`` (held by
    the allocator, in use or cached) and ``cached_free_bytes`` (reserved, not in use)."""
    if _LIBC is None:
        return {"caching": False, "supported": False}
    info = _LIBC.mallinfo2()
    in_use = info.uordblks + info.hblkhd
    reserved = info.arena + info.hblkhd
    return {"caching": is_caching(), "supported": True, "allocated_bytes.all.current": in_use,
            "reserved_bytes.all.current": reserved, "cached_free_bytes": info.fordblks,
            "mmapped_bytes": info.hblkhd}


def empty_cache():
    """Give the cached free pages back to the kernel (glibc's malloc_trim)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
