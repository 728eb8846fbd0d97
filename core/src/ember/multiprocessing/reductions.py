"""Tensors in shared memory: ``Tensor.share_memory_()`` moves a CPU tensor's bytes into
a POSIX shared-memory block, and pickling such a tensor (a ``spawn`` child's arguments,
a ``Queue``) sends the block's name instead of the bytes, so every process reads and
writes the same numbers (Hogwild training).

PyTorch counterpart: torch/multiprocessing/reductions.py and ``share_memory_`` in
torch/_tensor.py (v2.13). ember uses ``multiprocessing.shared_memory``. With the
``fork`` start method a child inherits the mapping itself; with ``spawn`` it attaches
by name. Left out: CUDA IPC, file-descriptor passing, sharing views that do not cover
their whole block (those pickle by value, as unshared tensors do).
"""

import weakref
from multiprocessing import resource_tracker, shared_memory

import numpy as np

# root array -> its SharedMemory block, for the arrays this process created or attached.
# Keyed by id; the entry keeps the array alive while the block is mapped.
_BLOCKS = {}


def _root(array):
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def block_of(tensor):
    """The SharedMemory block holding ``tensor``'s bytes, or None."""
    entry = _BLOCKS.get(id(_root(tensor._data)))
    return None if entry is None else entry[1]


def share_(tensor):
    """Move ``tensor``'s data into a new shared block (in place; a no-op if already shared)."""
    if tensor.device.type != "cpu":
        raise RuntimeError(f"share_memory_: ember shares CPU tensors only, got a tensor on {tensor.device}")
    if block_of(tensor) is not None:
        return tensor
    source = tensor._data
    block = shared_memory.SharedMemory(create=True, size=max(source.nbytes, 1))
    array = np.ndarray(source.shape, dtype=source.dtype, buffer=block.buf)
    array[...] = source
    _remember(array, block, owner=True)
    tensor._data = array
    return tensor


def _remember(array, block, owner):
    _BLOCKS[id(array)] = (array, block)
    # The creating process unlinks the block when the array goes; attached ones only close.
    weakref.finalize(array, _release, block, owner)


def _release(block, owner):
    try:
        block.close()
    except BufferError:  # a view still exports the buffer: the OS frees it at exit
        return
    if owner:
        try:
            block.unlink()
        except FileNotFoundError:
            pass


def rebuild_shared(name, shape, dtype, requires_grad):
    """A tensor over the shared block ``name`` (the receiving side of pickling)."""
    from ember.native.factory import from_numpy

    for array, block in list(_BLOCKS.values()):  # this process already maps it (it made it)
        if block.name == name:
            tensor = from_numpy(array)
            return tensor.requires_grad_(requires_grad) if requires_grad else tensor
    block = shared_memory.SharedMemory(name=name)
    # Python's resource tracker would unlink an attached block when this process exits;
    # the creator owns it (CPython issue 82300).
    resource_tracker.unregister(block._name, "shared_memory")
    array = np.ndarray(shape, dtype=np.dtype(dtype), buffer=block.buf)
    _remember(array, block, owner=False)
    tensor = from_numpy(array)
    return tensor.requires_grad_(requires_grad) if requires_grad else tensor


def reduce_shared(tensor):
    """``__reduce_ex__`` of a tensor whose data is a whole shared block, else None."""
    block = block_of(tensor)
    data = tensor._data
    if block is None or _root(data) is not data:
        return None
    return rebuild_shared, (block.name, data.shape, data.dtype.str, tensor.requires_grad)
