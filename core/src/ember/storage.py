"""``UntypedStorage``: the flat block of memory that tensors and their views share.

PyTorch counterpart: c10/core/StorageImpl.h and torch/storage.py
(``UntypedStorage``) (v2.13).

ember keeps no storage object per tensor: the memory belongs to the root backend
array (an ndarray whose ``base`` is not another ndarray), and every view is an array
over it. ``untyped_storage()`` builds this small record on request, so two views of one
tensor report the same ``data_ptr()``, and ``storage_offset()`` is the distance from it.
"""


def _root_array(array):
    """The array that owns the memory under ``array`` (following ``.base``)."""
    root = array
    while True:
        base = getattr(root, "base", None)
        if base is not None and not hasattr(base, "dtype"):
            # as_strided views hang from a plain interface object whose base is
            # the array.
            base = getattr(base, "base", None)
        if base is None or not hasattr(base, "dtype"):
            return root
        root = base


class UntypedStorage:
    """A byte view of the memory under a tensor."""

    __slots__ = ("_array", "device")

    def __init__(self, array, device):
        self._array = array
        self.device = device

    @classmethod
    def _of(cls, tensor):
        return cls(_root_array(tensor._data), tensor._device)

    def data_ptr(self):
        from ember.tensor import _array_address

        return _array_address(self._array)

    def nbytes(self):
        return self._array.nbytes

    def size(self):
        return self.nbytes()

    __len__ = size

    def element_size(self):
        return 1

    def tolist(self):
        host = self.device.backend.to_host(self._array)
        return list(host.reshape(-1).view("uint8").tobytes()) if host.size else []

    def __eq__(self, other):
        return (isinstance(other, UntypedStorage) and self.data_ptr() == other.data_ptr()
                and self.nbytes() == other.nbytes())

    __hash__ = None

    def __repr__(self):
        return f" {self.tolist()[:16]}\n[ember.storage.UntypedStorage(device={self.device}) of size {self.nbytes()}]"
