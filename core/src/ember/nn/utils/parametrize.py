"""``ember.nn.utils.parametrize``: a module's tensor computed from other tensors on every
access (``module.weight`` = ``f(module.parametrizations.weight.original)``), the
machinery of weight normalisation, spectral normalisation and orthogonal weights.

PyTorch counterpart: torch/nn/utils/parametrize.py (``register_parametrization``,
``remove_parametrizations``, ``is_parametrized``, ``cached``, ``ParametrizationList``,
``type_before_parametrizations``) (v2.13).

# NOTE [ How a parametrization replaces a parameter ]
# ``register_parametrization(module, "weight", P)`` removes the parameter ``weight``
# and stores what it computes from in ``module.parametrizations.weight`` (a
# ParametrizationList: ``original``, or ``original0``, ``original1``, ... when P's
# ``right_inverse`` splits the tensor in several, as weight_norm's g and v). Attribute
# access cannot be intercepted per instance in Python, so the module's class is swapped
# for a subclass made for it (``ParametrizedLinear``) that has a property ``weight``:
# reading it runs the parametrizations, assigning to it runs their ``right_inverse``
# into the originals. The state dict follows the new tree
# (``parametrizations.weight.original``), exactly torch's keys, so checkpoints move
# between the two. Inside ``cached()`` each parametrized tensor is computed once.
"""

import contextlib

from ember.autograd.grad_mode import no_grad
from ember.nn.modules.container import ModuleDict, ModuleList
from ember.nn.parameter import Parameter
from ember.tensor import Tensor

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

_cache_depth = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Compute each parametrized tensor once inside the block (e.g. a weight an RNN reads
    at every time step)."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_data(dest, src):
    """``dest`` takes ``src``'s values, staying the same object (an optimizer holds it)."""
    dest._data = src.detach()._data.copy()
    dest._version_counter[0] += 1


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and the tensors they start from
    (NOTE [ How a parametrization replaces a parameter ])."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # torch's rule: a right_inverse that cannot be computed is the identity here
        if isinstance(new, Tensor):
            if not unsafe and new.dtype != original.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _set_data(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                                     f"tuple...). Got element {i} of the sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not unsafe:
            _check_same(self(), original, "Registering a parametrization")

    @property
    def is_tensor(self):
        return "original" in self._parameters or "original" in self._buffers

    def right_inverse(self, value):
        """Set the originals so that the parametrized tensor becomes ``value``."""
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement "
                                       f"right_inverse.")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                _set_data(self.original, value)
            else:
                for i, part in enumerate(value):
                    _set_data(getattr(self, f"original{i}"), part)

    def forward(self):
        modules = list(self)
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            count = sum(1 for name in {**self._parameters, **self._buffers} if name.startswith("original"))
            x = modules[0](*(getattr(self, f"original{i}") for i in range(count)))
        for module in modules[1:]:
            x = module(x)
        return x


def _check_same(value, original, what):
    if not isinstance(value, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
    if value.dtype != original.dtype:
        raise ValueError(f"{what} may not change the dtype of the tensor, unless `unsafe` flag is enabled.\n"
                         f"unparametrized dtype: {original.dtype}\nparametrized dtype: {value.dtype}")
    if value.shape != original.shape:
        raise ValueError(f"{what} may not change the shape of the tensor, unless `unsafe` flag is enabled.\n"
                         f"unparametrized shape: {original.shape}\nparametrized shape: {value.shape}")


def _inject_new_class(module):
    cls = module.__class__

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). "
                           "See: https://pytorch.org/tutorials/beginner/saving_loading_models.html")

    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"__getstate__": getstate})


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_depth:
            return parametrization()
        key = (id(self), tensor_name)
        if key not in _cache:
            _cache[key] = parametrization()
        return _cache[key]

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make ``module.<tensor_name>`` be ``parametrization(original)``; a second call on
    the same name chains the parametrizations. Returns ``module``."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            _check_same(parametrization(current), current, "Registering a parametrization")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has any parametrization (on ``tensor_name``, if given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo ``register_parametrization``: ``tensor_name`` becomes a plain parameter (or
    buffer) again, holding the parametrized value (``leave_parametrized``) or the
    original. Returns ``module``."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:  # into the original object, so an optimizer holding it goes on
            with no_grad():
                _set_data(original, getattr(module, tensor_name))
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        with no_grad():
            value = getattr(module, tensor_name).detach()
        first = parametrizations.original0
        original = Parameter(value, first.requires_grad) if isinstance(first, Parameter) else value
    before = type_before_parametrizations(module)
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = before
    return module


def type_before_parametrizations(module):
    """The module's class before ``register_parametrization`` swapped it."""
    return module.__class__.__bases__[0] if is_parametrized(module) else module.__class__
