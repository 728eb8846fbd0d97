"""``functional_call``: run a module with parameters and buffers given for the call.

PyTorch counterpart: torch/_functorch/functional_call.py and torch/nn/utils/stateless.py
(``_reparametrize_module``) (v2.13).

The module's own tensors are swapped out of its ``_parameters`` and ``_buffers`` dicts
for the call and put back afterwards, even when the call raises: the module is the
program, the dicts are its state, and transforms (``ember.func.grad``, ``vmap``)
differentiate or batch that state like any other input.
"""

import contextlib

__all__ = ["functional_call", "stack_module_state"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named tensors of ``parameter_and_buffer_dicts``
    (a dict, or a tuple of dicts) in place of the module's own.

    >>> import ember
    >>> layer = ember.nn.Linear(2, 1, bias=False)
    >>> ember.func.functional_call(layer, {"weight": ember.ones(1, 2)}, (ember.tensor([1.0, 2.0]),))
    tensor([3.])
    """
    values = _merged(parameter_and_buffer_dicts)
    args = args if isinstance(args, tuple) else (() if args is None else (args,))
    with _reparametrized(module, values, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def _merged(dicts):
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, (tuple, list)):
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(dicts)}")
    merged = {}
    for d in dicts:
        for key, value in d.items():
            if key in merged:
                raise ValueError(f"{key} appeared in multiple dictionaries; behavior of functional call is "
                                 "ambiguous")
            merged[key] = value
    return merged


def _tied_names(module):
    """For each parameter or buffer name, every name the same tensor goes by."""
    by_tensor = {}
    for name, tensor in [*module.named_parameters(remove_duplicate=False),
                         *module.named_buffers(remove_duplicate=False)]:
        by_tensor.setdefault(id(tensor), []).append(name)
    return {name: names for names in by_tensor.values() for name in names}


def _check_keys(module, values):
    known = {name for name, _ in module.named_parameters(remove_duplicate=False)}
    known |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
    unexpected = sorted(set(values) - known)
    missing = sorted(known - set(values))
    if unexpected or missing:
        lines = [f"Error(s) in reparametrizing for {module._get_name()}:"]
        if unexpected:
            lines.append("\tUnexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
        if missing:
            lines.append("\tMissing key(s): " + ", ".join(repr(k) for k in missing) + ".")
        raise RuntimeError("\n".join(lines))


@contextlib.contextmanager
def _reparametrized(module, values, tie_weights, strict):
    if strict:
        _check_keys(module, values)
    if tie_weights:  # a tensor given for one name of a tied group serves every name of it
        tied = _tied_names(module)
        for name in list(values):
            for other in tied.get(name, ()):
                values.setdefault(other, values[name])
    swapped = []  # (owner dict, key, original)
    try:
        for name, value in values.items():
            owner, leaf = _owner(module, name)
            table = owner._parameters if leaf in owner._parameters else owner._buffers
            if leaf not in table:
                raise AttributeError(f"{owner._get_name()} has no parameter or buffer '{leaf}' (from '{name}')")
            swapped.append((table, leaf, table[leaf]))
            table[leaf] = value
        yield
    finally:
        for table, leaf, original in reversed(swapped):
            table[leaf] = original


def _owner(module, name):
    path, _, leaf = name.rpartition(".")
    return (module.get_submodule(path) if path else module), leaf


def stack_module_state(models):
    """``(params, buffers)``: each name's tensors from ``models`` (modules of one
    architecture) stacked along a new first dimension, parameters as fresh leaves that
    require grad, for ``vmap(functional_call)`` over an ensemble (torch.func's
    ``stack_module_state``).

    >>> import ember
    >>> params, buffers = ember.func.stack_module_state([ember.nn.Linear(2, 3) for _ in range(4)])
    >>> params["weight"].shape
    ember.Size([4, 3, 2])
    """
    from ember.native.shape.shape import stack

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    kinds = {type(m) for m in models}
    if len(kinds) != 1:
        raise RuntimeError(f"stack_module_state: Expected all models to be of the same class, got: {kinds}")

    def stacked(named):
        names = [name for name, _ in named(models[0])]
        tables = [dict(named(m)) for m in models]
        return {name: stack([t[name].detach() for t in tables]) for name in names}

    params = {name: t.requires_grad_(True) for name, t in stacked(lambda m: m.named_parameters()).items()}
    return params, stacked(lambda m: m.named_buffers())
