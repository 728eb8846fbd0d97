"""Pruning: zero out part of a parameter through a mask that a forward pre-hook applies.

PyTorch counterpart: torch/nn/utils/prune.py (v2.13).

# NOTE [ How a pruned parameter lives in a module ]
Pruning ``module.weight`` re-parameterises it, exactly as torch does:

- the trainable tensor moves to the parameter ``weight_orig``;
- a buffer ``weight_mask`` (ones and zeros, same shape) records what is pruned;
- ``weight`` becomes a plain attribute, ``weight_mask * weight_orig``, recomputed by the
  pruning method itself, registered as a forward pre-hook, before every forward.

So the optimiser keeps updating ``weight_orig`` (the masked entries get zero gradient
through the product), the state dict carries ``weight_orig`` and ``weight_mask`` (torch's
keys, so pruned checkpoints load both ways), and ``remove`` folds the mask in for good.
Pruning the same tensor again wraps the methods in a ``PruningContainer``, which hands
the new method only the entries (unstructured) or channels (structured) the old mask
kept, and multiplies the masks.

Selection among equal values follows torch's CPU ``topk`` (see topk_ties.py), so the
deterministic methods give torch's masks on the same weights. The random methods draw
from ember's generator, so their masks differ from torch's while pruning the same count.
"""

import numbers
from abc import ABC, abstractmethod

from ember.nn.utils.convert_parameters import parameters_to_vector
from ember.nn.utils.topk_ties import topk_indices

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured",
           "custom_from_mask", "remove", "is_pruned"]



def _scores(t):
    """The values to rank as a NumPy array; bfloat16 (which NumPy lacks) widens exactly
    to float32, so the order and the ties are the same."""
    import ember

    return (t.float() if t.dtype == ember.bfloat16 else t).numpy()

class BasePruningMethod(ABC):
    """A way of choosing a mask; an instance is also the forward pre-hook that applies it.

    Subclasses set ``PRUNING_TYPE`` ("unstructured", "structured" or "global") and
    implement ``compute_mask(t, default_mask)``.
    """

    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for importance scores ``t``, respecting the zeros of ``default_mask``."""

    def apply_mask(self, module):
        """``name_mask * name_orig``: the pruned tensor, differentiable in ``name_orig``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)``; returns the hook
        installed."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError(f"importance_scores should have the same shape as "
                                 f"parameter {name} of {module}, got "
                                 f"{importance_scores.shape} vs {orig.shape}")
        first_time = not isinstance(method, PruningContainer)
        if first_time:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = orig.detach().new_ones(orig.shape)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first_time:  # put the parameter back as it was
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times the mask this method computes (nothing is attached to a module)."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(f"importance_scores should have the same shape as tensor t, "
                                 f"got {importance_scores.shape} vs {t.shape}")
        if default_mask is None:
            default_mask = t.new_ones(t.shape)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``name`` becomes a parameter holding the masked values."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls, module, name, *args, **kwargs):
    """The new method, or the container it joins when ``name`` is already pruned."""
    old_keys = [key for key, hook in module._forward_pre_hooks.items()
                if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(old_keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                             f"{module}. Use a PruningContainer.")
    old_method = module._forward_pre_hooks.pop(old_keys[0]) if old_keys else None
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        return old_method
    if old_method is not None:
        container = PruningContainer(old_method)
        container.add_pruning_method(method)
        return container
    return method


class PruningContainer(BasePruningMethod):
    """The successive pruning methods of one tensor; the newest acts on what the others kept."""

    def __init__(self, *methods):
        self._pruning_methods = ()
        if len(methods) == 1:
            self._tensor_name = methods[0]._tensor_name
        for method in methods:
            self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' "
                             f"to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """Let the newest method choose among the surviving entries or channels; merge
        its mask."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        region = _surviving_region(method, t, default_mask)
        partial_mask = method.compute_mask(t[region], default_mask=default_mask[region])
        new_mask[region] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


def _surviving_region(method, t, mask):
    """The index into ``t`` that the next method may prune, by the method's PRUNING_TYPE."""
    if method.PRUNING_TYPE == "unstructured":
        return mask == 1
    if method.PRUNING_TYPE == "global":
        return tuple([slice(None)] * t.ndim)
    if method.PRUNING_TYPE != "structured":
        raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
    if not hasattr(method, "dim"):
        raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` '
                             "defined.")
    dim = method.dim + t.ndim if method.dim < 0 else method.dim
    if dim < 0:
        raise IndexError(f"Index is out of bounds for tensor with dimensions {t.ndim}")
    keep_channel = mask.sum(dim=[d for d in range(t.ndim) if d != dim]) != 0
    region = [slice(None)] * t.ndim
    region[dim] = keep_channel
    return tuple(region)


# --- the methods ------------------------------------------------------------------
class Identity(BasePruningMethod):
    """Prune nothing: installs the re-parameterisation with a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prune ``amount`` entries (a count, or a fraction of the tensor) chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        from ember import rand_like

        count = _checked_count(self.amount, t.numel())
        mask = default_mask.clone()
        if count:  # torch: the entries with the k largest uniform draws
            _zero_flat(mask, topk_indices(_scores(rand_like(t.detach())), count, largest=True))
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prune the ``amount`` entries of smallest absolute value (ties: as torch's topk)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        count = _checked_count(self.amount, t.numel())
        mask = default_mask.clone()
        if count:
            _zero_flat(mask, topk_indices(_scores(t.detach().abs()), count, largest=False))
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` whole channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        from ember import kthvalue, rand

        channels = _checked_channels(t, self.dim)
        count = _checked_count(self.amount, channels)
        if count == 0:
            return default_mask
        scores = rand(channels)
        kept = scores > kthvalue(scores, count).values
        return _channel_mask(t, self.dim, kept) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune the ``amount`` channels along ``dim`` of smallest L``n`` norm (``n`` as ``ember.norm``'s ``p``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        from ember import tensor

        channels = _checked_channels(t, self.dim)
        count = _checked_count(self.amount, channels)
        if count == 0:
            return default_mask
        kept = topk_indices(_scores(_channel_norms(t.detach(), self.n, self.dim)), channels - count,
                            largest=True)
        kept = tensor(kept, dtype=_index_dtype(), device=t.device)
        return _channel_mask(t, self.dim, kept) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune with a mask the caller supplies."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


# --- the functional interface ----------------------------------------------------------
def identity(module, name):
    """Re-parameterise ``module.<name>`` with an all-ones mask.

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> m = prune.identity(ember.nn.Linear(2, 3), "bias")
    >>> m.bias_mask
    tensor([1., 1., 1.])
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` random entries of ``module.<name>`` (count, or fraction in [0, 1])."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` entries of ``module.<name>`` with the smallest ``|importance_scores|``.

    >>> import ember
    >>> m = ember.nn.Linear(4, 2)
    >>> m = ember.nn.utils.prune.l1_unstructured(m, "weight", amount=0.5)
    >>> int((m.weight == 0).sum()), sorted(k for k in m.state_dict())
    (4, ['bias', 'weight_mask', 'weight_orig'])
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` channels along ``dim`` with the smallest L``n`` norm of the scores."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune across several tensors at once, as if they were one vector.

    ``parameters`` is an iterable of ``(module, name)``; ``pruning_method`` an
    unstructured method class (e.g. ``L1Unstructured``); ``kwargs`` its arguments
    (``amount`` counts over all the tensors together). Each tensor then carries its
    slice of the global mask through ``custom_from_mask``.
    """
    from collections.abc import Iterable

    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for module, name in parameters])
    default_mask = parameters_to_vector([_current_mask(module, name) for module, name in parameters])
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container = PruningContainer()
    container._tensor_name = method._tensor_name = "temp"
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final_mask[start:start + param.numel()].view_as(param))
        start += param.numel()


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` with the given ``mask`` (zeros are pruned)."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent and drop its hook, ``_orig`` and ``_mask``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether ``module`` or any submodule carries a pruning forward pre-hook."""
    return any(isinstance(hook, BasePruningMethod)
               for submodule in module.modules() for hook in submodule._forward_pre_hooks.values())


# --- helpers ------------------------------------------------------------------------
def _validate_pruning_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _checked_count(amount, size):
    """How many units ``amount`` means for ``size`` units (Python's round, as torch), checked."""
    count = amount if isinstance(amount, numbers.Integral) else round(amount * size)
    if isinstance(count, numbers.Integral) and count > size:
        raise ValueError(f"amount={count} should be smaller than the number of parameters to prune={size}")
    return int(count)


def _checked_channels(t, dim):
    if t.ndim <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {t.shape} with {t.ndim} dims")
    if dim >= t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
    return t.shape[dim]


def _channel_norms(t, n, dim):
    """The L``n`` norm of each channel along ``dim``, over all the other dimensions."""
    from ember import norm

    dim = dim % t.ndim
    return norm(t, p=n, dim=[d for d in range(t.ndim) if d != dim])


def _channel_mask(t, dim, kept):
    """Ones on the channels ``kept`` (indices or a bool vector) along ``dim``, zeros elsewhere."""
    mask = t.detach().new_zeros(t.shape)
    region = [slice(None)] * t.ndim
    region[dim] = kept
    mask[tuple(region)] = 1
    return mask


def _zero_flat(mask, indices):
    from ember import tensor

    mask.view(-1)[tensor(indices, dtype=_index_dtype(), device=mask.device)] = 0


def _index_dtype():
    from ember import int64

    return int64


def _current_mask(module, name):
    """The tensor's mask so far: its ``_mask`` buffer, or ones when it is not pruned yet."""
    if hasattr(module, name + "_mask"):
        return getattr(module, name + "_mask")
    param = getattr(module, name)
    return param.detach().new_ones(param.shape)
