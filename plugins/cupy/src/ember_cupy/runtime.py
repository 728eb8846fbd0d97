"""The CUDA runtime as ember sees it: is a device there (and if not, why), which one
is current, transfers, memory, seeding, pinned host memory.

PyTorch counterpart: torch/cuda/__init__.py (``is_available``, ``current_device``,
``set_device``, ``_lazy_init``), torch/cuda/memory.py and c10/cuda/CUDACachingAllocator.cpp
(the statistics), aten/src/ATen/cuda/PinnedMemoryAllocator.cpp (v2.13). ember leaves
out streams, events, graphs and per-thread current devices: CuPy's current device is
the one ember uses.

# NOTE [ Probing CUDA lazily ]
# ``import cupy`` costs about a second, and on a machine without a driver everything
# after the import raises ``CUDARuntimeError``. So nothing here imports CuPy until a
# caller asks whether CUDA is available; the answer (CuPy, or the reason there is
# none) is probed once and cached. The probe never raises: any import error, any
# error from counting devices, an empty ``CUDA_VISIBLE_DEVICES`` or zero devices make
# the backend unavailable, and the reason is what ember's errors and ``ember plugins``
# show. Only after a successful probe do the services below touch CuPy.
"""

import os

from ember.dtypes import BFLOAT16_NP

_probe = None  # (cupy module or None, reason or None), once probed
_peak = {}  # device index -> the most bytes the memory pool has had in use
_peak_hook = None  # installed once, on the first successful probe


def _probe_cuda():
    """``(cupy, None)`` when a CUDA device can be used, else ``(None, reason)``."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) == "":
        return None, "CUDA_VISIBLE_DEVICES is set to the empty string, which hides every GPU"
    try:
        import cupy
    except ImportError as exc:
        from ember.plugins.manager import install_hint

        return None, (f"CuPy is not installed ({exc}); install it with: {install_hint('ember-cupy', extra='cuda12')} "
                      "(or the cupy-cuda11x / cupy-cuda12x wheel matching your driver)")
    except Exception as exc:  # a broken CuPy install (missing shared library, ...)
        return None, f"CuPy failed to import: {type(exc).__name__}: {exc}"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDARuntimeError: no driver, driver too old, no device
        return None, f"CUDA is not usable: {type(exc).__name__}: {exc}{_driver_hint(cupy)}"
    if count == 0:
        return None, "CuPy found no CUDA device"
    return cupy, None


def _driver_hint(cupy):
    try:
        if cupy.cuda.runtime.driverGetVersion() == 0:
            return " (no NVIDIA driver is installed on this machine)"
    except Exception:
        pass
    return ""


def _state():
    global _probe, _peak_hook
    if _probe is None:
        _probe = _probe_cuda()
        if _probe[0] is not None and _peak_hook is None:
            _peak_hook = _track_peak(_probe[0])
    return _probe


def forget():
    """Probe again on the next question (tests, or after changing ``CUDA_VISIBLE_DEVICES``)."""
    global _probe
    _probe = None
    _peak.clear()


def is_available():
    """True when CuPy imports and sees at least one CUDA device; never raises."""
    return _state()[0] is not None


def unavailable_reason():
    """Why the ``cuda`` backend cannot be used, or None when it can."""
    return _state()[1]


def cupy():
    """The CuPy module; raises ember's error, naming the reason, when CUDA is unusable."""
    module, reason = _state()
    if module is None:
        # The manager's wording (ember/plugins/manager.py `backend`), whichever way a
        # caller reached the backend: a device resolved earlier skips the manager.
        raise RuntimeError(f"the ember backend for device type 'cuda' (plugin 'cupy') is installed, "
                           f"but no cuda device is available: {reason}")
    return module


# --- devices -----------------------------------------------------------------------

def device_count():
    return cupy().cuda.runtime.getDeviceCount() if is_available() else 0


def current_device():
    return cupy().cuda.runtime.getDevice()


def set_device(index):
    _check_index(index)
    cupy().cuda.runtime.setDevice(index)


def synchronize(index=None):
    cp = cupy()
    with cp.cuda.Device(_index(index)):
        cp.cuda.runtime.deviceSynchronize()


def get_device_name(index=None):
    properties = cupy().cuda.runtime.getDeviceProperties(_index(index))
    name = properties["name"]
    return name.decode() if isinstance(name, bytes) else name


def get_device_properties(index=None):
    """The device's properties as CUDA reports them (cudaDeviceProp: ``name``, ``major``,
    ``minor``, ``totalGlobalMem``, ``multiProcessorCount``, ...)."""
    return cupy().cuda.runtime.getDeviceProperties(_index(index))


def cuda_version():
    """The CUDA runtime version CuPy was built for, as torch.version.cuda spells it ("12.4")."""
    version = cupy().cuda.runtime.runtimeGetVersion()
    return f"{version // 1000}.{version % 1000 // 10}"


def _index(index):
    if index is None:
        return current_device()
    _check_index(index)
    return index


def _check_index(index):
    count = device_count()
    if not 0 <= index < count:
        # PyTorch reports the CUDA error for an ordinal past the last device.
        raise RuntimeError(f"CUDA error: invalid device ordinal (device {index} requested, "
                           f"{count} device{'s' if count != 1 else ''} available)")


# --- transfers -----------------------------------------------------------------------

def to_host(array):
    """A NumPy copy of a CuPy array (waits for the kernels that write it)."""
    return array.get()


def from_host(array, index=None):
    """A CuPy copy of a host array on device ``index`` (default: the current device).

    bfloat16 is refused: CuPy has no bfloat16 dtype, so ember's CUDA backend cannot hold
    one (torch can); ember keeps bfloat16 on the CPU (NOTE [ bfloat16 ] in ember/dtypes.py).
    """
    if getattr(array, "dtype", None) == BFLOAT16_NP:
        raise TypeError("ember's cuda backend has no bfloat16: CuPy has no bfloat16 dtype (torch has one on CUDA). "
                        "Keep bfloat16 tensors on the cpu, or use float16 on cuda")
    cp = cupy()
    with cp.cuda.Device(_index(index)):
        return cp.asarray(array)


# --- memory ------------------------------------------------------------------------

def memory_stats(index=None):
    """The memory pool's bytes in use and reserved on one device, and the peak in use
    (see NOTE [ Peak memory ])."""
    cp = cupy()
    index = _index(index)
    with cp.cuda.Device(index):
        pool = cp.get_default_memory_pool()
        allocated, reserved = pool.used_bytes(), pool.total_bytes()
    peak = _peak[index] = max(_peak.get(index, 0), allocated)
    return {"allocated_bytes.all.current": allocated, "allocated_bytes.all.peak": peak,
            "reserved_bytes.all.current": reserved}


# NOTE [ Peak memory ]
# CuPy's memory pool knows the bytes in use now but keeps no peak, which PyTorch's
# caching allocator does. A CuPy MemoryHook, called after every allocation from the
# pool, records it. CuPy's hooks are per thread: the hook is entered on the thread that
# first finds CUDA available (usually the main thread), so allocations made only on
# other threads are missed by the peak (never by the current figure).

def _track_peak(cp):
    class PeakHook(cp.cuda.MemoryHook):
        name = "ember_peak_memory"

        def malloc_postprocess(self, **kwargs):
            device_id = kwargs["device_id"]
            used = cp.get_default_memory_pool().used_bytes()  # malloc runs on device_id
            if used > _peak.get(device_id, 0):
                _peak[device_id] = used

    hook = PeakHook()
    hook.__enter__()
    return hook


def reset_peak_memory_stats(index=None):
    _peak.pop(_index(index), None)


def empty_cache():
    """Give the pool's unused blocks (device and pinned host) back to the driver."""
    if not is_available():
        return  # like PyTorch: nothing was ever cached
    cp = cupy()
    cp.get_default_memory_pool().free_all_blocks()
    cp.get_default_pinned_memory_pool().free_all_blocks()


# --- random numbers ----------------------------------------------------------------------

def manual_seed(seed):
    """Seed CuPy's generator on the current device (a no-op without CUDA, like PyTorch).

    ember's random factories draw on the host (ember/random.py), so ``ember.manual_seed``
    already makes them reproducible on cuda; this seeds kernels that draw on the device.
    """
    if is_available():
        cupy().random.seed(int(seed) & 0xFFFF_FFFF)


def manual_seed_all(seed):
    if is_available():
        cp = cupy()
        for index in range(device_count()):
            with cp.cuda.Device(index):
                cp.random.seed(int(seed) & 0xFFFF_FFFF)


# --- pinned host memory ----------------------------------------------------------------

def pin_memory(array):
    """A copy of the NumPy ``array`` in page-locked host memory (faster, async
    uploads)."""
    import cupyx  # present whenever CuPy is

    cupy()  # raises, with the reason, without CUDA
    pinned = cupyx.empty_pinned(array.shape, dtype=array.dtype)
    pinned[...] = array
    return pinned


def is_pinned(array):
    """True when the NumPy ``array`` lives in page-locked memory CUDA knows about."""
    if not is_available() or array.size == 0:
        return False
    cp = cupy()
    try:
        attributes = cp.cuda.runtime.pointerGetAttributes(array.ctypes.data)
    except Exception:  # ordinary pageable memory on older runtimes
        return False
    return attributes.type == cp.cuda.runtime.memoryTypeHost
