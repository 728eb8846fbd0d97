"""Helpers the optimizers share to create per-parameter state and to read a group's
hyper-parameters.

PyTorch counterpart: ``_get_scalar_dtype`` and the ``state["step"] = torch.tensor(0.0)``
lines of each optimizer's ``_init_group``, and the ``lr=group["lr"], ...`` arguments of
each ``step``, in torch/optim/*.py (v2.13).
"""

import ember


def new_step():
    """The step counter: a float32 scalar tensor, as PyTorch keeps it (so state dicts match)."""
    return ember.tensor(0.0, dtype=ember.float32)


def value(step):
    """A step counter (tensor or number) as a Python float."""
    return step.item() if isinstance(step, ember.Tensor) else float(step)


def options(group, *names):
    """The keyword arguments ``names`` of a functional update, read from ``group``; the
    group's ``"betas"`` is handed on as ``beta1`` and ``beta2``."""
    kwargs = {}
    for name in names:
        if name == "betas":
            kwargs["beta1"], kwargs["beta2"] = group["betas"]
        else:
            kwargs[name] = group[name]
    return kwargs


def advance(steps):
    """Add one to each step counter in place and return their new values as floats: the
    loops' ``steps[i] += 1`` without an op dispatch per counter (the foreach paths)."""
    values = []
    for i, step in enumerate(steps):
        if isinstance(step, ember.Tensor):
            # the loop's add_, rounded as it rounds: the float64 sum of a float32 counter and
            # 1 is exact below 2**53 (and rounds back to the counter above, as float32's
            # does); a NumPy ufunc on a 0-d array costs about 4 us, item() and a store 0.6
            data = step._data
            data[()] = data.item() + 1
            step._version_counter[0] += 1
            values.append(data.item())
        else:
            steps[i] = step + 1
            values.append(float(steps[i]))
    return values
