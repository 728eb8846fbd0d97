"""Auto-wrap policies: which submodules of a model become FSDP units of their own.

PyTorch counterpart: torch/distributed/fsdp/wrap.py (``size_based_auto_wrap_policy``,
``ModuleWrapPolicy``, ``transformer_auto_wrap_policy``, ``lambda_auto_wrap_policy``,
``always_wrap_policy``, ``_recursive_wrap``) (v2.13).

A policy is called as ``policy(module=, recurse=, nonwrapped_numel=)``. With
``recurse=True`` it answers "look inside this module for units?"; with
``recurse=False`` it answers "make this module a unit?", where
``nonwrapped_numel`` counts the parameters its children's units did not take.
``_recursive_wrap`` walks the tree depth first, so the innermost units are made first
and a parent only counts what they left. ember leaves out ``enable_wrap``/``wrap``,
``CustomPolicy`` and the per-unit keyword overrides.
"""

def always_wrap_policy(*args, **kwargs):
    """Every module with parameters becomes a unit."""
    return True


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    """A unit wherever ``lambda_fn(module)`` is true."""
    return True if recurse else bool(lambda_fn(module))


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    """A unit per instance of the given layer classes (a transformer's blocks)."""
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


class ModuleWrapPolicy:
    """A unit per instance of ``module_classes``."""

    def __init__(self, module_classes):
        self._module_classes = tuple(set(module_classes))

    def __call__(self, module, recurse, *args, **kwargs):
        return True if recurse else isinstance(module, self._module_classes)

    def __repr__(self):
        return f"{type(self).__name__}({set(self._module_classes)})"


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None):
    """A unit wherever at least ``min_num_params`` parameters are not yet in a unit.

    ``force_leaf_modules`` are not looked inside (MultiheadAttention by default);
    ``exclude_wrap_modules`` never become units themselves (ModuleList, ModuleDict).
    """
    if force_leaf_modules is None:
        force_leaf_modules = size_based_auto_wrap_policy.FORCE_LEAF_MODULES
    if exclude_wrap_modules is None:
        exclude_wrap_modules = size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES
    large = nonwrapped_numel >= min_num_params
    if recurse:
        return large and not isinstance(module, tuple(force_leaf_modules))
    return large and not isinstance(module, tuple(exclude_wrap_modules))


def _default_sets():
    from ember import nn

    size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {nn.ModuleList, nn.ModuleDict}
    size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {nn.MultiheadAttention}


_default_sets()


def _recursive_wrap(module, policy, wrap, only_wrap_children=False):
    """Wrap ``module``'s subtree bottom up; (the module or its unit, parameters now in units)."""
    from ember.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel

    if isinstance(module, FullyShardedDataParallel):
        return module, 0
    nonwrapped = sum(p.numel() for p in module.parameters())
    if not policy(module=module, recurse=True, nonwrapped_numel=nonwrapped):
        return module, 0
    wrapped = 0
    for name, child in list(module.named_children()):
        child, count = _recursive_wrap(child, policy, wrap)
        setattr(module, name, child)
        wrapped += count
    if not only_wrap_children and policy(module=module, recurse=False, nonwrapped_numel=nonwrapped - wrapped):
        return wrap(module), nonwrapped
    return module, wrapped

