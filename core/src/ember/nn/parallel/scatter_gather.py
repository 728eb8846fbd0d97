"""``scatter`` and ``gather``: split inputs across devices along a dimension, and join outputs back.

PyTorch counterpart: torch/nn/parallel/scatter_gather.py (with the autograd functions
``Scatter`` and ``Gather`` of torch/nn/parallel/_functions.py) (v2.13). Both are
differentiable here because ``chunk``, ``to`` and ``cat`` are.
"""


def scatter(inputs, target_devices, dim=0):
    """Split every tensor in ``inputs`` (nested tuples, lists and dicts) into
    ``len(target_devices)`` chunks along ``dim``; other objects are repeated."""
    from ember.tensor import Tensor

    def split(obj):
        if isinstance(obj, Tensor):
            pieces = obj.chunk(len(target_devices), dim)
            return [p.to(d) for p, d in zip(pieces, target_devices)]
        if isinstance(obj, tuple) and obj:
            return [tuple(parts) for parts in zip(*map(split, obj))]
        if isinstance(obj, list) and obj:
            return [list(parts) for parts in zip(*map(split, obj))]
        if isinstance(obj, dict) and obj:
            return [dict(zip(obj.keys(), parts)) for parts in zip(*map(split, obj.values()))]
        return [obj] * len(target_devices)
    return split(inputs)


def scatter_kwargs(inputs, kwargs, target_devices, dim=0):
    """``scatter`` of the positional and keyword inputs, padded to the same length."""
    inputs = scatter(inputs, target_devices, dim) if inputs else []
    kwargs = scatter(kwargs, target_devices, dim) if kwargs else []
    count = max(len(inputs), len(kwargs))
    inputs = list(inputs) + [()] * (count - len(inputs))
    kwargs = list(kwargs) + [{}] * (count - len(kwargs))
    return tuple(inputs), tuple(kwargs)


def gather(outputs, target_device, dim=0):
    """Concatenate the replicas' outputs along ``dim`` on ``target_device`` (nested like the outputs)."""
    import ember
    from ember.tensor import Tensor

    first = outputs[0]
    if isinstance(first, Tensor):
        if first.dim() == 0:  # torch unsqueezes scalars (with a warning) and stacks them
            return ember.stack([o.to(target_device) for o in outputs])
        return ember.cat([o.to(target_device) for o in outputs], dim)
    if first is None:
        return None
    if isinstance(first, dict):
        return type(first)((k, gather([o[k] for o in outputs], target_device, dim)) for k in first)
    if isinstance(first, (list, tuple)):
        return type(first)(gather(parts, target_device, dim) for parts in zip(*outputs))
    return first
