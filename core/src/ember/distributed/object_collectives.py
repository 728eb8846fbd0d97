"""Collectives of Python objects: ``broadcast_object_list``, ``all_gather_object``, ``gather_object``.

PyTorch counterpart: torch/distributed/distributed_c10d.py (``_object_to_tensor``,
``_tensor_to_object`` and the ``*_object*`` collectives) (v2.13).

# NOTE [ Objects travel as checkpoints, not pickles ]
# torch pickles each object and unpickles what arrives, so a rank can run code on
# every other rank. ember writes each object with ``ember.save`` into bytes and reads it
# back with ``ember.load`` (the weights-only unpickler), so only data travels: tensors,
# numbers, strings, bytes, None, and lists, tuples and dicts of them. Anything else is
# refused on the sending rank with ``ember.save``'s error. The bytes then move like
# torch's: the sizes first (an all_gather of int64), then one uint8 tensor per object.
"""

import io

import numpy as np

from ember.distributed import collectives
from ember.distributed.distributed_c10d import _resolve


def _to_tensor(obj):
    import ember

    buffer = io.BytesIO()
    ember.save(obj, buffer)
    data = np.frombuffer(buffer.getvalue(), dtype=np.uint8).copy()
    return ember.from_numpy(data), ember.tensor([data.size], dtype=ember.int64)


def _to_object(tensor, size):
    import ember

    return ember.load(io.BytesIO(tensor.numpy()[:size].tobytes()), weights_only=True)


def _gathered_sizes(size_tensor, pg):
    import ember

    sizes = [ember.zeros(1, dtype=ember.int64) for _ in range(pg.size())]
    collectives.all_gather(sizes, size_tensor, group=pg)
    return [int(s.item()) for s in sizes]


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list``'s items on every rank by rank ``src``'s (in place)."""
    import ember

    pg = _resolve(group)
    if pg._backend is None:
        return
    root = collectives._root(pg, src, group_src, "src")
    if pg.rank() == root:
        pieces = [_to_tensor(obj) for obj in object_list]
        sizes = ember.cat([size for _, size in pieces]) if pieces else ember.zeros(0, dtype=ember.int64)
    else:
        sizes = ember.zeros(len(object_list), dtype=ember.int64)
    collectives.broadcast(sizes, group_src=root, group=pg)
    total = int(sizes.sum().item())
    payload = ember.cat([t for t, _ in pieces]) if pg.rank() == root and pieces else \
        ember.zeros(total, dtype=ember.uint8)
    collectives.broadcast(payload, group_src=root, group=pg)
    if pg.rank() != root:
        start = 0
        for i, n in enumerate(sizes.tolist()):
            object_list[i] = _to_object(payload[start:start + n], n)
            start += n


def all_gather_object(object_list, obj, group=None):
    """``object_list[r]`` becomes rank r's ``obj`` on every rank."""
    import ember

    pg = _resolve(group)
    if pg._backend is None:
        return
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must have {pg.size()} items (one per rank), "
                         f"got {len(object_list)}")
    tensor, size = _to_tensor(obj)
    sizes = _gathered_sizes(size, pg)
    padded = ember.zeros(max(sizes), dtype=ember.uint8)
    padded[:sizes[pg.rank()]] = tensor
    outputs = [ember.zeros(max(sizes), dtype=ember.uint8) for _ in sizes]
    collectives.all_gather(outputs, padded, group=pg)
    for i, (out, n) in enumerate(zip(outputs, sizes)):
        object_list[i] = _to_object(out, n)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Every rank's ``obj`` into ``object_gather_list`` on rank ``dst``."""
    import ember

    pg = _resolve(group)
    if pg._backend is None:
        return
    root = collectives._root(pg, dst, group_dst, "dst")
    if pg.rank() == root and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError(f"gather_object: object_gather_list on the destination rank must have {pg.size()} items")
    tensor, size = _to_tensor(obj)
    sizes = _gathered_sizes(size, pg)
    padded = ember.zeros(max(sizes), dtype=ember.uint8)
    padded[:sizes[pg.rank()]] = tensor
    outputs = [ember.zeros(max(sizes), dtype=ember.uint8) for _ in sizes] if pg.rank() == root else None
    collectives.gather(padded, outputs, group_dst=root, group=pg)
    if pg.rank() == root:
        for i, (out, n) in enumerate(zip(outputs, sizes)):
            object_gather_list[i] = _to_object(out, n)
