"""Name lookups in the "modules" and "functionals" catalogues for ``ember.nn``.

PyTorch counterpart: none; torch.nn imports every layer eagerly. Here
``ember.nn.<Name>`` and ``ember.nn.functional.<name>`` fall back to what plugins
registered (``ember_register_modules``, ``ember_register_functionals``), and a
first-party name whose plugin is missing names the distribution to install.
"""

from ember.nn._provided_by import PROVIDED_BY
from ember.plugins import lookup as _catalogue
from ember.plugins import registry


def lookup(catalogue, name, namespace):
    """The object registered as ``name`` in ``catalogue``; AttributeError otherwise."""
    return _catalogue.lookup(catalogue, name, namespace, PROVIDED_BY[catalogue])


def names(catalogue):
    """Every name registered in ``catalogue``."""
    return sorted(registry.catalogue(catalogue))
