"""The optimizer base class: parameter groups, per-parameter state and their state dict.

PyTorch counterpart: torch/optim/optimizer.py (v2.13). ember leaves out the
capturable/differentiable machinery, global step hooks, state-dict hooks and the
profiler labels; SGD, Adam, AdamW and Adagrad take ``foreach=`` and ``fused=``, RMSprop
``foreach=`` (fused.py and fused_*.py).

An optimizer owns two things:

- ``param_groups``: a list of dicts, each with ``"params"`` (a list of tensors) and
  every hyper-parameter (``lr``, ``momentum``, ...), filled from ``defaults`` for the
  keys the group does not set itself;
- ``state``: a ``defaultdict(dict)`` keyed by parameter, holding the buffers the
  algorithm keeps between steps (``momentum_buffer``, ``exp_avg``, ``step``, ...).

Subclasses implement ``step`` (wrapped by :func:`optimizer_step`: the step hooks run
around it and the update runs under ``no_grad``) by gathering, per group, the
parameters that have a gradient and their state (:meth:`Optimizer._gather`, which
creates missing state through the subclass's ``_init_state``), and handing them with
the group's hyper-parameters (:func:`ember_optim._state.options`) to a plain function
in the same file (``ember_optim.sgd.sgd``) that does the arithmetic.

# NOTE [ Optimizer state dicts ]
# ``state_dict()`` replaces every parameter by an integer: parameters are numbered
# 0, 1, 2, ... in the order of the groups and, within a group, of ``group["params"]``.
# ``state`` is keyed by those numbers and each group's ``"params"`` lists them. This is
# PyTorch's format, so a dict written by a torch optimizer (its tensors turned into
# ember tensors) loads into the ember optimizer over the same parameters, and the other
# way round. Loading maps the saved numbers onto this optimizer's parameters by
# position, casts floating state to each parameter's dtype (but leaves ``step`` alone)
# and takes every hyper-parameter from the saved groups.
"""

import functools
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

from ember import Tensor, enable_grad, no_grad
from ember.autograd.graph import RemovableHandle

__all__ = ["Optimizer", "required", "optimizer_step"]


class _RequiredParameter:
    """Marks a default that every parameter group must give (SGD's ``lr`` in old PyTorch)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def optimizer_step(step):
    """Decorate a subclass's ``step``: run the step hooks around it and the update under
    ``no_grad`` (the closure, if any, is evaluated with gradients enabled by ``step``
    itself through :meth:`Optimizer._evaluate`)."""

    if getattr(step, "_optimizer_step", False):
        return step

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if self.__dict__.get("_in_step"):  # a subclass's step calling super().step(): hooks run once
            return step(self, *args, **kwargs)
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {result}.")
                args, kwargs = result
        self._opt_called = True  # lets an lr scheduler warn when it steps first
        self._in_step = True
        try:
            with no_grad():
                out = step(self, *args, **kwargs)
        finally:
            self._in_step = False
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    wrapper._optimizer_step = True
    return wrapper


class Optimizer:
    """Base class of all optimizers.

    Args:
        params: an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts that
            each define a parameter group (``{"params": [...], "lr": 0.1}``).
        defaults: the hyper-parameters a group gets when it does not set them.
    """

    def __init_subclass__(cls, **kwargs):
        # A subclass that forgot @optimizer_step still gets its hooks and no_grad.
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = optimizer_step(cls.__dict__["step"])

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            if i:
                lines.append("")
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        lines.append(")")
        return "\n".join(lines)

    # --- parameter groups --------------------------------------------------------------
    def add_param_group(self, param_group):
        """Add a group of parameters (a dict with ``"params"`` and any hyper-parameters)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered "
                            "collections, but the ordering of tensors in sets will change "
                            "between runs. Please use a list instead.")
        tensors, names = _split_names(list(params))
        param_group["params"] = tensors
        if names:
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the "
                                "params is " + _typename(param))
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            import warnings

            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # --- gradients and steps -------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Forget every parameter's gradient (``None``), or fill it with zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    def step(self, closure=None):
        """Update the parameters once; subclasses implement it."""
        raise NotImplementedError

    def _gather(self, group, *keys):
        """``(params, grads, *lists)``: the parameters of ``group`` that have a gradient,
        their gradients and, for each name in ``keys``, the list of that state entry (an
        empty list for a ``None`` name: a buffer whose option is off). A parameter with
        empty state gets it from :meth:`_init_state` first. Without ``keys`` the state is
        left alone (SGD without momentum keeps none)."""
        params, grads = [], []
        lists = [[] for _ in keys]
        for p in group["params"]:
            if p.grad is None:
                continue
            if keys:
                state = self.state[p]
                if len(state) == 0:
                    self._init_state(group, p, state)
                for key, entries in zip(keys, lists):
                    if key is not None:
                        entries.append(state[key])
            params.append(p)
            grads.append(p.grad)
        return (params, grads, *lists)

    def _init_state(self, group, param, state):
        """Fill ``state``, the empty state of ``param``, before its first update
        (optimizers that keep buffers override it)."""

    @staticmethod
    def _evaluate(closure):
        """The closure's loss, computed with gradients enabled (None without a closure)."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs before each ``step``; it may return new
        ``(args, kwargs)``."""
        return _add(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs after each ``step``."""
        return _add(self._optimizer_step_post_hooks, hook)

    # --- state dicts (NOTE [ Optimizer state dicts ]) --------------------------------------
    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``."""
        index_of = {}
        param_groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            param_groups.append(packed)
        state = {(index_of[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        """Load the state and hyper-parameters saved by ``state_dict`` (ember's or PyTorch's)."""
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        param_of = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                            chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in param_of:
                param = param_of[key]
                state[param] = _cast_state(param, value)
            else:
                state[key] = value
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})
        for group in self.param_groups:
            for name, default in self.defaults.items():
                group.setdefault(name, default)  # a dict from an older version lacks newer options


def _split_names(params):
    """``(tensors, names)`` from a list of tensors or of ``(name, tensor)`` pairs."""
    tensors, names = [], []
    for param in params:
        if isinstance(param, tuple):
            names.append(param[0])
            tensors.append(param[1])
        else:
            tensors.append(param)
    if names and len(names) != len(tensors):
        raise ValueError("all optimizer params should be with/without names. Some param names are missing")
    return tensors, names


def _cast_state(param, value, key=None):
    """A saved state entry moved to ``param``'s device, and to its dtype when floating
    (except ``step``, which keeps its own dtype)."""
    if isinstance(value, Tensor):
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        state = {k: _cast_state(param, v, key=k) for k, v in value.items()}
        if "step" in state and not isinstance(state["step"], Tensor):
            from ember import float32, tensor

            state["step"] = tensor(float(state["step"]), dtype=float32)  # older dicts kept a Python number
        return state
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value


def _add(hooks, hook):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def _typename(obj):
    """``ember.FloatTensor`` for a tensor, ``module.Class`` (or a builtin's name) otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    return type(obj).__qualname__ if module == "builtins" else f"{module}.{type(obj).__qualname__}"
