"""Name lookups in the "optimizers" catalogue for ``ember.optim`` and its submodules.

PyTorch counterpart: none; torch.optim imports every optimizer eagerly. Plugins
register optimizers, schedulers and weight-averaging helpers through
``ember_register_optimizers`` with a ``kind`` (``register(cls, kind="lr_scheduler")``;
``"optimizer"`` when omitted), and each namespace resolves only its own kind:
``ember.optim.<Name>`` optimizers, ``ember.optim.lr_scheduler.<Name>`` schedulers,
``ember.optim.swa_utils.<name>`` the SWA helpers.
"""

from ember.optim._provided_by import PROVIDED_BY
from ember.plugins import lookup as _catalogue
from ember.plugins import registry


def kind_of(entry):
    return entry.extra.get("kind", "optimizer")


def lookup(kind, name, namespace):
    """The object of ``kind`` registered as ``name``; AttributeError (naming the
    distribution to install, for a first-party name) otherwise."""
    return _catalogue.lookup("optimizers", name, namespace, PROVIDED_BY[kind],
                             accept=lambda entry: kind_of(entry) == kind)


def names(kind):
    """Every name of ``kind`` registered."""
    return sorted(name for name, entry in registry.catalogue("optimizers").items() if kind_of(entry) == kind)


def create(kind, name, *args, **kwargs):
    """Build the ``kind`` registered as ``name``; KeyError if there is none."""
    try:
        cls = lookup(kind, name, "ember.optim")
    except AttributeError as exc:
        raise KeyError(str(exc)) from None
    return cls(*args, **kwargs)
