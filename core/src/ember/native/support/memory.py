"""Pinned (page-locked) host memory: ``Tensor.pin_memory()`` and ``Tensor.is_pinned()``.

PyTorch counterpart: aten/src/ATen/native/Memory.cpp (``pin_memory``, ``is_pinned``)
and aten/src/ATen/cuda/PinnedMemoryAllocator.cpp (v2.13).

A pinned CPU tensor is still a ``cpu`` tensor (a NumPy array), but its memory is
page-locked by the CUDA driver, so uploads to the GPU are faster and can overlap with
compute; the DataLoader's ``pin_memory=True`` uses it. The pinned buffer comes from
the ``cuda`` backend (its module's ``pin_memory``); with no usable CUDA, pinning raises
as in a CPU-only PyTorch, and nothing is pinned.
"""

from ember.device import CPU


def _cuda_module():
    """The ``cuda`` backend's device module when CUDA is usable, else None."""
    from ember.plugins import registry

    backend = registry.find_backend("cuda")
    if backend is None or not backend.is_available():
        return None
    return backend.module


def pin_memory(tensor, device=None):
    """A copy of the CPU ``tensor`` in pinned host memory (``tensor`` itself if already
    pinned); gradients flow back unchanged."""
    if tensor._device.type != "cpu":
        raise RuntimeError(f"cannot pin '{tensor.type()}' only dense CPU tensors can "
                           "be pinned")
    module = _cuda_module()
    if module is None:
        raise RuntimeError("Cannot access accelerator device when none is available."
                           + _why_not())
    if module.is_pinned(tensor._data):
        return tensor
    from ember.autograd.grad_mode import grad_state
    from ember.tensor import _make_tensor

    pinned = _make_tensor(module.pin_memory(tensor._data), CPU)
    if grad_state.enabled and tensor._requires_grad:
        from ember.autograd.function import attach_node

        attach_node(pinned, "PinMemoryBackward0", (tensor,), lambda grad: (grad,))
    return pinned


def is_pinned(tensor, device=None):
    """True when ``tensor`` is a CPU tensor in pinned host memory (always False without CUDA)."""
    if tensor._device.type != "cpu":
        return False
    module = _cuda_module()
    return module is not None and bool(module.is_pinned(tensor._data))


def _why_not():
    from ember.plugins import registry

    backend = registry.find_backend("cuda")
    reason = backend.unavailable_reason() if backend is not None else "no ember backend for cuda (ember-cupy)"
    return f" (ember: {reason})" if reason else ""
