"""Copy a batch into pinned (page-locked) host memory, for faster uploads to a GPU.

PyTorch counterpart: torch/utils/data/_utils/pin_memory.py (v2.13). PyTorch pins in a
background thread; ember pins in the main process as each batch arrives, which is
simpler and costs nothing when there is nothing to pin.

# NOTE [ pin_memory on CPU ]
# Pinning needs a CUDA driver. The DataLoader asks ``ember.cuda.is_available()`` once;
# without CUDA, ``pin_memory=True`` warns (as PyTorch does) and batches stay in
# ordinary memory: a documented no-op, never an error.
"""

import collections.abc


def pin_memory(data):
    """``data`` with every tensor inside replaced by a pinned copy."""
    import ember

    if isinstance(data, ember.Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {key: pin_memory(value) for key, value in data.items()}
        try:
            return type(data)(pinned)
        except TypeError:
            return pinned
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(pin_memory(d) for d in data))
    if isinstance(data, tuple):
        return [pin_memory(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        try:
            return type(data)([pin_memory(d) for d in data])
        except TypeError:
            return [pin_memory(d) for d in data]
    if hasattr(data, "pin_memory"):  # custom batch types opt in with a method
        return data.pin_memory()
    return data
