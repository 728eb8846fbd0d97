"""``default_collate`` (samples -> one batch) and ``default_convert`` (NumPy -> tensors).

PyTorch counterpart: torch/utils/data/_utils/collate.py (v2.13). ember leaves out the
``collate_fn_map`` extension table: write your own ``collate_fn`` and call
``default_collate`` for the parts it knows.

The rules, applied recursively to the first sample's structure:

=======================  ====================================================
sample element           batch element
=======================  ====================================================
Tensor                   tensors stacked on a new first dimension
NumPy array              stacked, as a tensor (string/object arrays refused)
NumPy scalar             1-d tensor of its dtype
float / int / bool       1-d float64 / int64 / bool tensor
str / bytes              the column as it is (a tuple)
Mapping                  same type, each key collated
namedtuple               same type, each field collated
tuple / list / Sequence  list of collated "columns" (all samples equal length)
=======================  ====================================================
"""

import collections.abc
import copy

import numpy as np

_NOT_NUMBERS = "SaUO"  # NumPy kinds with no tensor dtype: bytes, strings, unicode, objects
_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def default_collate(batch):
    """Merge a list of samples into a batch (rules in the module docstring).

    >>> from ember.data import default_collate
    >>> default_collate([(0, 'a'), (1, 'b')])
    [tensor([0, 1]), ('a', 'b')]
    """
    import ember

    elem = batch[0]
    if isinstance(elem, ember.Tensor):
        return _stack_tensors(batch)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in _NOT_NUMBERS:
            raise TypeError(_ERROR.format(elem.dtype))
        return ember.from_numpy(np.ascontiguousarray(np.stack(batch)))
    if isinstance(elem, np.generic) and elem.dtype.kind not in _NOT_NUMBERS:
        return ember.from_numpy(np.array(batch, dtype=elem.dtype))
    if isinstance(elem, float):
        return ember.tensor(batch, dtype=ember.float64)
    if isinstance(elem, int):  # bool too: a bool batch stays bool, as in PyTorch
        return ember.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _same_mapping_type(elem, {key: default_collate([d[key] for d in batch])
                                         for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(column) for column in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(column) for column in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # PyTorch returns tuples as lists
        return _same_sequence_type(elem, columns)
    raise TypeError(_ERROR.format(type(elem)))


def default_convert(data):
    """Turn NumPy arrays and scalars inside ``data`` into tensors, leaving the rest
    (the DataLoader's ``collate_fn`` when automatic batching is off)."""
    import ember

    if isinstance(data, ember.Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if data.dtype.kind in _NOT_NUMBERS else ember.as_tensor(data)
    if isinstance(data, np.generic):
        return data if data.dtype.kind in _NOT_NUMBERS else ember.as_tensor(np.asarray(data))
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _same_mapping_type(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        return _same_sequence_type(data, [default_convert(d) for d in data])
    return data


def _stack_tensors(batch):
    import ember

    # Host tensors that need no graph are stacked by NumPy directly: one copy, no
    # dispatcher round trip (this runs once per batch, often in a worker).
    if all(t.device.type == "cpu" and not t.requires_grad for t in batch):
        try:
            return ember.from_numpy(np.stack([t._host() for t in batch]))  # _host: bfloat16 has no .numpy()
        except ValueError:
            pass  # unequal shapes: let ember.stack raise its (PyTorch's) error
    return ember.stack(batch, 0)


def _same_mapping_type(elem, items):
    if isinstance(elem, collections.abc.MutableMapping):
        clone = copy.copy(elem)  # keeps the mapping's class and extra state (OrderedDict, defaultdict)
        clone.update(items)
        return clone
    try:
        return type(elem)(items)
    except TypeError:
        return items


def _same_sequence_type(elem, items):
    if isinstance(elem, collections.abc.MutableSequence) and not isinstance(elem, list):
        clone = copy.copy(elem)
        for i, item in enumerate(items):
            clone[i] = item
        return clone
    if isinstance(elem, list):
        return items
    try:
        return type(elem)(items)
    except TypeError:
        return items


__all__ = ["default_collate", "default_convert"]
