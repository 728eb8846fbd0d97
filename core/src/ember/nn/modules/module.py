"""``ember.nn.Module``: the base class of every layer and model.

PyTorch counterpart: torch/nn/modules/module.py (v2.13), at the size of its 2017
version. ember leaves out global module hooks, state-dict pre/post hooks,
``register_load_state_dict_post_hook``, ``_apply``'s ``swap_tensors`` path,
``share_memory``, ``compile`` and the ``ipu``/``xpu``/``mtia`` movers.

# NOTE [ Where a module keeps its state ]
# A module keeps three ordered dicts: ``_parameters`` (name -> Parameter or None),
# ``_buffers`` (name -> Tensor or None) and ``_modules`` (name -> Module or None).
# ``__setattr__`` routes an assigned Parameter, Module or registered buffer into its
# dict (and out of the others), and ``__getattr__`` (called only when normal lookup
# fails) reads them back. Because every tensor is reached through a name, the
# ``named_*`` walks, ``state_dict`` and ``load_state_dict`` all agree on the keys
# (``"features.0.weight"``), which is what makes checkpoints portable to PyTorch.

# NOTE [ The order of a module call ]
# ``module(*args, **kwargs)`` runs, in this order: the forward pre-hooks (each may
# replace the arguments); the input half of the full backward hooks (see
# ember/nn/modules/backward_hook.py); ``forward``; the forward hooks (each may replace
# the output); the output half of the backward hooks. If anything raises, the forward
# hooks registered with ``always_call=True`` that have not run yet still run. Without
# any hook, ``__call__`` is a single ``forward`` call.
"""

from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ember.autograd.grad_mode import no_grad
from ember.autograd.graph import RemovableHandle
from ember.nn.modules import global_hooks
from ember.nn.modules.backward_hook import BackwardHook
from ember.nn.modules.global_hooks import (  # noqa: F401
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)
from ember.nn.parameter import Parameter
from ember.tensor import Tensor

_EXTRA_STATE_KEY = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns; prints ``<All keys matched successfully>`` when empty."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _ModuleHookHandle(RemovableHandle):
    """A hook handle that also forgets the hook's flags (with_kwargs, always_call)."""

    def __init__(self, hooks, *flag_sets):
        super().__init__(hooks)
        self.flag_sets = flag_sets

    def remove(self):
        super().remove()
        for flags in self.flag_sets:
            flags.discard(self.id)


class Module:
    """Base class for all neural network modules; subclass it and define ``forward``.

    >>> import ember
    >>> class Net(ember.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = ember.nn.Linear(4, 2)
    ...     def forward(self, x):
    ...         return self.fc(x).relu()
    """

    _version = 1
    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        set_ = object.__setattr__
        set_(self, "training", True)
        set_(self, "_parameters", OrderedDict())
        set_(self, "_buffers", OrderedDict())
        set_(self, "_non_persistent_buffers_set", set())
        set_(self, "_modules", OrderedDict())
        set_(self, "_forward_pre_hooks", OrderedDict())
        set_(self, "_forward_pre_hooks_with_kwargs", set())
        set_(self, "_forward_hooks", OrderedDict())
        set_(self, "_forward_hooks_with_kwargs", set())
        set_(self, "_forward_hooks_always_called", set())
        set_(self, "_backward_pre_hooks", OrderedDict())
        set_(self, "_backward_hooks", OrderedDict())
        set_(self, "_load_state_dict_pre_hooks", OrderedDict())

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # --- registration ---------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is state but not a parameter (e.g. BatchNorm's running mean)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(name, "buffer name")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(ember Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add a parameter (or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(name, "parameter name")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(ember.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, "
                             "compute the value in the forward() method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Add a child module (or None) under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        _check_name(name, "module name")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    # --- attribute protocol (NOTE [ Where a module keeps its state ]) ---------------
    def __getattr__(self, name):
        state = self.__dict__
        for dict_name in ("_parameters", "_buffers", "_modules"):
            entries = state.get(dict_name)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() "
                                     "call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(ember.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            modules = self.__dict__.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            modules[name] = value
        elif name in self.__dict__.get("_modules", ()):
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                f"'{name}' (ember.nn.Module or None expected)")
            self._modules[name] = value
        elif name in self.__dict__.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(ember.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name, keep):
        """Remove ``name`` from the instance dict and the state dicts other than ``keep``."""
        self.__dict__.pop(name, None)
        for dict_name in ("_parameters", "_buffers", "_modules"):
            if dict_name != keep:
                self.__dict__[dict_name].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __delattr__(self, name):
        for dict_name in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__[dict_name]
            if name in entries:
                del entries[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    # --- walking the tree -----------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        if recurse:
            modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            modules = [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (module_prefix + "." + name if module_prefix else name), value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Every module of the tree, depth first, ``self`` first (as ``prefix``)."""
        if memo is None:
            memo = set()
        # An explicit stack instead of recursion: deep nets never hit the recursion limit.
        stack = [(prefix, self)]
        while stack:
            module_prefix, module = stack.pop()
            if remove_duplicate:
                if id(module) in memo:
                    continue
                memo.add(id(module))
            yield module_prefix, module
            children = [(module_prefix + ("." if module_prefix else "") + name, child)
                        for name, child in module._modules.items() if child is not None]
            stack.extend(reversed(children))

    def modules(self):
        for _, module in self.named_modules():
            yield module

    # --- modes ----------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    # --- calling (NOTE [ The order of a module call ]) -----------------------------
    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or global_hooks.STATE.any):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        called_hooks = set()
        try:
            args, kwargs = self._run_forward_pre_hooks(args, kwargs)
            backward_hook = None
            hooks = [*global_hooks.backward_hooks.values(), *self._backward_hooks.values()]
            pre_hooks = [*global_hooks.backward_pre_hooks.values(),
                         *self._backward_pre_hooks.values()]
            if hooks or pre_hooks:
                backward_hook = BackwardHook(self, hooks, pre_hooks)
                args = backward_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in self._all_forward_hooks():
                called_hooks.add(hook_id)
                result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
            if backward_hook is not None:
                result = backward_hook.setup_output_hook(result)
            return result
        except Exception:
            # always_call hooks run even when forward (or another hook) raised.
            always = set(global_hooks.forward_hooks_always_called)
            always |= self._forward_hooks_always_called
            for hook_id, hook in self._all_forward_hooks():
                if hook_id in always and hook_id not in called_hooks:
                    try:
                        self._run_forward_hook(hook_id, hook, args, kwargs, None)
                    except Exception as hook_error:
                        import warnings

                        warnings.warn("forward hook with always_call=True raised an "
                                      "exception that was silenced as another error was "
                                      f"raised in forward: {hook_error}", stacklevel=3)
            raise

    def _all_forward_hooks(self):
        # the global hooks first, as torch runs them
        return [*global_hooks.forward_hooks.items(), *self._forward_hooks.items()]

    def _run_forward_pre_hooks(self, args, kwargs):
        for hook_id, hook in [*global_hooks.forward_pre_hooks.items(), *self._forward_pre_hooks.items()]:
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        return args, kwargs

    def _run_forward_hook(self, hook_id, hook, args, kwargs, result):
        if hook_id in self._forward_hooks_with_kwargs or hook_id in global_hooks.forward_hooks_with_kwargs:
            hook_result = hook(self, args, kwargs, result)
        else:
            hook_result = hook(self, args, result)
        return result if hook_result is None else hook_result

    # --- hooks ----------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` (or ``hook(module, args, kwargs)``) runs before ``forward``
        and may return new args (or ``(args, kwargs)``)."""
        handle = _ModuleHookHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        _insert(self._forward_pre_hooks, handle.id, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs
        after ``forward`` and may return a new output."""
        handle = _ModuleHookHandle(self._forward_hooks, self._forward_hooks_with_kwargs,
                                   self._forward_hooks_always_called)
        _insert(self._forward_hooks, handle.id, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` runs when the output gradients are known and may
        return new ones."""
        handle = _ModuleHookHandle(self._backward_pre_hooks)
        _insert(self._backward_pre_hooks, handle.id, hook, prepend)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs when the gradients with respect to
        the module's positional inputs are known and may return new ``grad_input``."""
        handle = _ModuleHookHandle(self._backward_hooks)
        _insert(self._backward_hooks, handle.id, hook, prepend)
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module loads its entries."""
        handle = _ModuleHookHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = hook
        return handle

    # --- transforming parameters and buffers ----------------------------------------
    def apply(self, fn):
        """Call ``fn(module)`` on every submodule (children first), then on ``self``."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn):
        """Replace every parameter's and buffer's data by ``fn(tensor)``, in place for
        parameters (the Parameter objects, and so optimizers' references, stay)."""
        for module in self.children():
            module._apply(fn)
        with no_grad():
            for param in self._parameters.values():
                if param is None:
                    continue
                param.data = fn(param)
                if param.grad is not None:
                    param.grad.data = fn(param.grad)
            for name, buf in self._buffers.items():
                if buf is not None:
                    self._buffers[name] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(tensor)``: moves
        every parameter and buffer; a dtype applies to floating-point ones only;
        ``memory_format=`` (e.g. ``ember.channels_last``) lays out the 4-d and 5-d ones."""
        from ember.native.copy import _parse_to

        kwargs.pop("non_blocking", None)
        memory_format = kwargs.get("memory_format")
        device, dtype, _ = _parse_to(self, args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                            f"but got desired dtype={dtype}")

        def convert(t):
            # memory_format applies to 4-d and 5-d tensors only (conv weights), as in
            # PyTorch.
            layout = memory_format if t.ndim in (4, 5) else None
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None,
                        memory_format=layout)

        return self._apply(convert)

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def share_memory(self):
        """Move every parameter and buffer into shared memory (``Tensor.share_memory_``), so
        processes started afterwards train the same weights (Hogwild)."""
        for tensor in [*self.parameters(), *self.buffers()]:
            tensor.share_memory_()
        return self

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def requires_grad_(self, requires_grad=True):
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset every parameter's ``.grad``: to None (the default), or to zeros in place."""
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                grad = param.grad.detach_() if param.grad.grad_fn is not None else param.grad.requires_grad_(False)
                grad.zero_()

    # --- state dict (NOTE [ Where a module keeps its state ]) -----------------------
    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer, keyed by dotted name."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = {"version": self._version}
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Put this module's own entries (not its children's) into ``destination``."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY] = self.get_extra_state()

    def get_extra_state(self):
        """Extra (picklable) state for ``state_dict``; override with ``set_extra_state``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy ``state_dict``'s tensors into this module's parameters and buffers.

        Returns ``_IncompatibleKeys(missing_keys, unexpected_keys)``; with ``strict``, any
        of those is a RuntimeError. ``assign=True`` keeps the checkpoint's tensors
        instead of copying into the existing ones.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        # Each module sees only the entries under its own prefix; a stack instead of
        # recursion.
        stack = [(self, state_dict, "")]
        while stack:
            module, local_state, prefix = stack.pop()
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(local_state, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            children = []
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state.items()
                                   if k.startswith(child_prefix)}
                    children.append((child, child_state, child_prefix))
            stack.extend(reversed(children))
        # -- report the keys that did not match --
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Load this module's own entries from ``state_dict`` (keys carry ``prefix``).

        Subclasses override it to convert old checkpoints (``local_metadata["version"]``
        tells which version of the module wrote them), as BatchNorm does for
        ``num_batches_tracked``.
        """
        for hook in self._load_state_dict_pre_hooks.values():
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update({k: v for k, v in self._buffers.items()
                            if v is not None and k not in self._non_persistent_buffers_set})
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            self._load_one(name, key, param, state_dict[key], assign, error_msgs)
        extra_key = prefix + _EXTRA_STATE_KEY
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                first, *rest = key[len(prefix):].split(".", 1)
                if (rest and first not in self._modules) or (not rest and first not in local_state):
                    unexpected_keys.append(key)

    def _load_one(self, name, key, param, input_param, assign, error_msgs):
        if not isinstance(input_param, Tensor):
            error_msgs.append(f'While copying the parameter named "{key}", expected ember.Tensor or Tensor-like '
                              f"object from checkpoint but received {type(input_param)}")
            return
        if param.ndim == 0 and input_param.ndim == 1:  # 0-d entries saved as 1-d by old versions
            input_param = input_param[0]
        if input_param.shape != param.shape:
            error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                              f"checkpoint, the shape in current model is {param.shape}.")
            return
        try:
            with no_grad():
                if not assign:
                    param.copy_(input_param)
                elif isinstance(param, Parameter):
                    if not isinstance(input_param, Parameter):
                        input_param = Parameter(input_param, requires_grad=param.requires_grad)
                    else:
                        input_param.requires_grad_(param.requires_grad)
                    setattr(self, name, input_param)
                else:
                    setattr(self, name, input_param)
        except Exception as ex:
            error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                              f"{param.size()} and whose dimensions in the checkpoint are {input_param.size()}, "
                              f"an exception occurred : {ex.args}.")

    # --- lookups by dotted name -----------------------------------------------------
    def get_submodule(self, target):
        """The submodule at ``target`` (``"features.0"``); ``""`` is ``self``."""
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(module._get_name() + " has no attribute `" + item + "`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        if name not in module._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(module, name)

    # --- Python protocol ------------------------------------------------------------
    def __dir__(self):
        keys = dir(type(self)) + list(self.__dict__) + list(self._parameters) + list(self._modules) \
            + list(self._buffers)
        return sorted(key for key in set(keys) if not key[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        # A pickle from an older ember may lack the newer hook dicts.
        fresh = Module()
        for name, value in fresh.__dict__.items():
            self.__dict__.setdefault(name, value)

    # --- repr -----------------------------------------------------------------------
    def extra_repr(self):
        """The text inside this module's parentheses; layers override it."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, module in self._modules.items():
            child = _add_indent(repr(module), 2)
            lines.append(f"({name}): {child}")
        text = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                text += lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _insert(hooks, key, hook, prepend):
    hooks[key] = hook
    if prepend:
        hooks.move_to_end(key, last=False)


def _check_name(name, what):
    if not isinstance(name, str):
        raise TypeError(f"{what} should be a string. Got {_typename(name)}")
    if "." in name:
        suffix = f", got: {name}" if what == "module name" else ""
        raise KeyError(f'{what} can\'t contain "."{suffix}')
    if name == "":
        raise KeyError(f'{what} can\'t be empty string ""')


def _typename(obj):
    """A value's type as error messages name it (``ember.FloatTensor``, ``int``)."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _add_indent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])
