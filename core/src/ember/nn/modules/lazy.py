"""``LazyModuleMixin``: a module whose parameter shapes are found from its first input.

PyTorch counterpart: torch/nn/modules/lazy.py (v2.13). ember keeps its protocol: the
parameters start as :class:`~ember.nn.parameter.UninitializedParameter`, a forward
pre-hook calls ``initialize_parameters(*input)`` on the first call, which materializes
them and calls ``reset_parameters``; then the hook is removed and the module becomes
``cls_to_become`` (``LazyLinear`` becomes ``Linear``). Loading a state dict into an
uninitialized module materializes its parameters to the saved shapes first.
"""

from ember.nn.parameter import is_lazy


class LazyModuleMixin:
    """Mixed in before the module class it makes lazy (``class LazyLinear(LazyModuleMixin, Linear)``)."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lazy_hooks()

    def _lazy_hooks(self):
        """Register the first forward's pre-hook and the state-dict pre-hook."""
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)
        self.register_load_state_dict_pre_hook(_materialize_from_state_dict)

    def has_uninitialized_params(self):
        """Whether a parameter of this module still waits for its shape."""
        return any(is_lazy(p) for p in self._parameters.values())

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the parameters from the first input's shape (each lazy module's own)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")


def _infer_parameters(module, args):
    """The first forward's pre-hook: shapes from the input, then the module becomes its
    ``cls_to_become`` and the hook goes."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


def _materialize_from_state_dict(module, state_dict, prefix, *args):
    if not isinstance(module, LazyModuleMixin):
        return
    for name, param in module._parameters.items():
        key = prefix + name
        if is_lazy(param) and key in state_dict:
            param.materialize(state_dict[key].shape)
