"""Argument checks shared by the optimizers' constructors, with PyTorch's messages.

PyTorch counterpart: the ``if not 0.0 <= lr: raise ValueError(...)`` lines at the top
of each optimizer's ``__init__`` in torch/optim/*.py (v2.13).
"""


def check_lr(lr):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_eps(eps):
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")


def check_non_negative(name, value):
    """``Invalid <name> value: <value>`` for a negative ``weight_decay``, ``momentum``, ..."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name} value: {value}")


def check_betas(betas):
    for index, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {beta}")
