"""The vmap mode at the dispatcher: which vmaps are running, how an op called with
batched tensors reaches its batch rule, and the loop that serves ops without one.

PyTorch counterpart: aten/src/ATen/functorch/VmapInterpreter.cpp and DynamicLayer.cpp
(the stack of transform levels), BatchedFallback.cpp (``batchedTensorForLoopFallback``,
the slow path that calls the op once per sample and stacks), and
BatchRulesRandomness.cpp (the ``randomness`` modes) (v2.13).
"""

import collections
import contextlib

from ember.dispatch_modes import NOT_BATCHED, modes
from ember.func.batched_tensor import BatchedTensor, unwrap, wrap
from ember.tensor import Tensor

__all__ = ["fallback_counts", "current_level", "batch_size", "randomness"]

# NOTE [ vmap at the dispatcher ]
# While a vmap runs, the vmap mode is on (a slot of ember/dispatch_modes.py, so the
# dispatcher's hot path pays nothing for it outside vmap): every op call first asks
# `run_batched` whether an input is a BatchedTensor. If none is, the op runs as usual.
# Otherwise the highest level among the inputs is handled: the batch rule registered
# for the op (ember/func/batch_rules/) receives the inputs, unwraps those of that
# level to their physical values (batch dim first), calls ordinary ember ops on them
# and wraps what comes out. An op with no rule goes to `fallback`: one call per sample
# on that sample's slices, results stacked; it is correct for any op and slow. torch's
# fallback warns only when asked (its C++ _set_vmap_fallback_warning_enabled); ember
# counts its calls per op in `fallback_counts`, which the tests read to show that an
# op with a rule never loops.
#
# NOTE [ Autograd inside vmap ]
# A batch rule calls ordinary ops on physical tensors, so autograd records the physical
# computation, where sample b of every output depends only on sample b of the inputs.
# A BatchedTensor's requires_grad and grad_fn are its value's. `grad` inside vmap
# (ember/func/eager_transforms.py) differentiates that physical graph: the sum over the
# batch of the outputs, differentiated with respect to the physical inputs, gives every
# sample its own gradient, because no sample reaches another. An input that is not
# batched (the parameters in per-sample gradients) is first expanded to the batch (a
# stride-0 view made a leaf), so that each sample's use of it is a separate slice and
# gets its own gradient. torch reaches the same numbers differently: its grad level sits
# inside the vmap level and runs the backward formulas through batch rules.

fallback_counts = collections.Counter()  # op qualname -> calls that took the per-sample loop
INPLACE_MESSAGE = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` in "
    "extra_args that has more elements than `self`. This happened due to `other` being vmapped over but "
    "`self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of inplace "
    "arithmetic. If said operator is being called inside the PyTorch framework, please file a bug report "
    "instead.")


class _Level:
    __slots__ = ("level", "size", "randomness")

    def __init__(self, level, size, randomness):
        self.level, self.size, self.randomness = level, size, randomness


class VmapInterpreter:
    """The stack of running vmaps; ``run(op, inputs, attrs)`` is the mode's entry."""

    def __init__(self):
        self.levels = []

    def run(self, op, inputs, attrs):
        level = _top_level(inputs, attrs)
        if level is None:
            return NOT_BATCHED
        from ember.func.batch_rules import BATCH_RULES

        info = self.levels[level - 1]
        rule = BATCH_RULES.get(op.qualname)
        if rule is not None:
            result = rule(op, inputs, attrs, info)
            if result is not NotImplemented:
                return result
        return fallback(op, inputs, attrs, info)

    def random_shape(self, shape):
        """A random factory's ``(shape, batch)`` inside vmap: "error" refuses, "same"
        draws one sample's shape (``batch`` None), "different" draws a sample for every
        member of each running "different" vmap and ``batch(tensor)`` wraps the draw."""
        from ember.func.batch_rules.random import refuse_random

        refuse_random(self.levels[-1])
        different = [info for info in self.levels if info.randomness == "different"]
        if not different:
            return shape, None

        def batch(tensor):
            for info in different:
                tensor = wrap(tensor, info.level)
            return tensor
        return tuple(info.size for info in different) + tuple(shape), batch

    def getitem(self, tensor, key):
        """``tensor[key]`` where the key holds a batched tensor (ember/func/batch_rules/
        indexing.py), or NOT_BATCHED when it holds none."""
        from ember.func.batch_rules.indexing import batched_index_getitem

        items = key if isinstance(key, tuple) else (key,)
        levels = [item.level for item in items if isinstance(item, BatchedTensor)]
        if not levels:
            return NOT_BATCHED
        level = max(levels + ([tensor.level] if isinstance(tensor, BatchedTensor) else []))
        return batched_index_getitem(tensor, items, self.levels[level - 1])

    def setitem(self, tensor, key, value):
        """``tensor[key] = value`` when any of them is batched (else NOT_BATCHED): a write
        into the physical tensor, with a full slice for the batch dim in front of a key
        without index tensors; the loop over the samples' views otherwise."""
        items = key if isinstance(key, tuple) else (key,)
        levels = [x.level for x in (tensor, value, *items) if isinstance(x, BatchedTensor)]
        if not levels:
            return NOT_BATCHED
        info = self.levels[max(levels) - 1]
        target, batched = unwrap(tensor, info.level)
        if not batched:
            raise RuntimeError(INPLACE_MESSAGE)
        if not any(isinstance(item, Tensor) for item in items):
            source, source_batched = unwrap(value, info.level)
            if source_batched:
                from ember.func.batch_rules._helpers import pad_to_rank

                source = pad_to_rank(source, tensor[key].dim())
            target[(slice(None),) + items] = source
            return tensor
        fallback_counts["aten::index_put"] += 1
        for i in range(info.size):
            sample_key = tuple(_slice(item, info.level, i) for item in items)
            target.select(0, i)[sample_key] = _slice(value, info.level, i)
        return tensor

    def physical(self, tensor):
        """The plain tensor under ``tensor``'s batch wrappers: every sample's values, for
        checks that read values (an embedding's index range)."""
        return peel(tensor)[0]

    def write(self, target, result, write, **kwargs):
        """An in-place write into or from a batched tensor, or None when neither is."""
        if not (isinstance(target, BatchedTensor) or isinstance(result, BatchedTensor)):
            return None
        return write_result(target, result, lambda t, r: write(t, r, **kwargs))


_interpreter = VmapInterpreter()


def _top_level(inputs, attrs):
    level = None
    for x in inputs:
        if isinstance(x, BatchedTensor):
            if level is None or x.level > level:
                level = x.level
        elif x.__class__ in (list, tuple):
            for y in x:
                if isinstance(y, BatchedTensor) and (level is None or y.level > level):
                    level = y.level
    for value in attrs.values():
        if isinstance(value, BatchedTensor) and (level is None or value.level > level):
            level = value.level
    return level


@contextlib.contextmanager
def vmap_level(size, randomness):
    """Run the body as a new vmap level of batch ``size``; yields the level's info."""
    info = _Level(len(_interpreter.levels) + 1, size, randomness)
    _interpreter.levels.append(info)
    if len(_interpreter.levels) == 1:
        modes.set_vmap(_interpreter)
    try:
        yield info
    finally:
        _interpreter.levels.pop()
        if not _interpreter.levels:
            modes.set_vmap(None)


def current_level():
    """The innermost running vmap's info (level, size, randomness), or None."""
    return _interpreter.levels[-1] if _interpreter.levels else None


def batch_size(level):
    return _interpreter.levels[level - 1].size


def randomness(level):
    return _interpreter.levels[level - 1].randomness


# --- the loop for ops with no rule -----------------------------------------------------
def fallback(op, inputs, attrs, info):
    """``op`` once per sample, on each input's slice of the sample (unbatched inputs as
    they are), outputs stacked along a new batch dim: torch's slow fallback."""
    from ember.native.shape.shape import stack

    fallback_counts[op.qualname] += 1
    if info.size == 0:
        raise RuntimeError("The fallback path does not support vmap over dims of size 0.")
    level = info.level
    if info.randomness == "same":
        from ember.random import get_rng_state, set_rng_state

        start = get_rng_state()
    results = []
    for i in range(info.size):
        if info.randomness == "same":
            set_rng_state(start)
        sample = [_slice(x, level, i) for x in inputs]
        sample_attrs = {k: _slice(v, level, i) for k, v in attrs.items()}
        results.append(op(*sample, **sample_attrs))
    if op.num_outputs == 1:
        return wrap(stack(results), level)
    return tuple(wrap(stack(column), level) for column in zip(*results))


def _slice(x, level, i):
    if x.__class__ in (list, tuple):
        return x.__class__(_slice(y, level, i) for y in x)
    value, batched = unwrap(x, level)
    return value.select(0, i) if batched else x


# --- in-place writes --------------------------------------------------------------------
def write_result(target, result, write):
    """``write(target, result)`` (ember/native/support/_inplace.py) on physical values."""
    level = max(t.level for t in (target, result) if isinstance(t, BatchedTensor))
    target_value, target_batched = unwrap(target, level)
    result_value, result_batched = unwrap(result, level)
    if not target_batched:
        raise RuntimeError(INPLACE_MESSAGE)
    if not result_batched:
        result_value = result_value.expand(target_value.shape)
    write(target_value, result_value)
    return target


# --- autograd inside vmap (NOTE [ Autograd inside vmap ]) ----------------------------------
def running():
    """Whether a vmap is running."""
    return bool(_interpreter.levels)


def peel(tensor):
    """``(physical, levels)``: the plain tensor under every BatchedTensor wrapper, and the
    levels it is batched at, lowest first (the order of its leading dims)."""
    levels = []
    while isinstance(tensor, BatchedTensor):
        levels.append(tensor.level)
        tensor = tensor.value
    return tensor, levels[::-1]


def rewrap(physical, levels):
    """``physical`` wrapped at ``levels`` (lowest first): the inverse of ``peel``."""
    for level in levels:
        physical = wrap(physical, level)
    return physical


def batched_leaf(tensor):
    """``(leaf, physical)``: ``tensor`` batched at every running level (an unbatched
    level expanded: a stride-0 view), its physical tensor a new node for autograd (a
    leaf, or a view of ``tensor``'s history when it requires grad)."""
    physical, levels = peel(tensor)
    if not physical.requires_grad:
        physical = physical.detach()
    for position, info in enumerate(_interpreter.levels):
        if info.level not in levels:
            physical = physical.unsqueeze(position)
            physical = physical.expand(physical.shape[:position] + (info.size,) + physical.shape[position + 1:])
    if physical.requires_grad:
        physical = physical.view_as(physical)
    else:
        physical = physical.detach().requires_grad_(True)
    return rewrap(physical, [info.level for info in _interpreter.levels]), physical


def physical_like(tensor, levels, sizes):
    """``tensor``'s physical tensor batched at exactly ``levels`` (lowest first), an
    unbatched level expanded to its size; ``sizes`` maps each level to its batch size."""
    physical, own = peel(tensor)
    if not set(own) <= set(levels):
        return None
    for position, level in enumerate(levels):
        if level not in own:
            physical = physical.unsqueeze(position)
            physical = physical.expand(physical.shape[:position] + (sizes[level],) + physical.shape[position + 1:])
    return physical


def level_sizes():
    return {info.level: info.size for info in _interpreter.levels}
