"""Name lookups in the "modules" and "functionals" catalogues for ``ember.nn``.

PyTorch counterpart: none; torch.nn imports every layer eagerly. Here
``ember.nn.<Name>`` and ``ember.nn.functional.<name>`` fall back to what plugins
registered (``ember_register_modules``, ``ember_register_functionals``), and a
first-party name whose plugin is missing names the distribution to install.
"""

from ember.nn._provided_by import PROVIDED_BY
from ember.plugins import registry


def lookup(catalogue, name, namespace):
    """The object registered as ``name`` in ``catalogue``; AttributeError otherwise."""
    if name.startswith("_"):  # dunder probes (copy, pickle, inspect) never load plugins
        raise AttributeError(f"module '{namespace}' has no attribute '{name}'")
    entry = registry.catalogue(catalogue).get(name)
    if entry is not None:
        return entry.obj
    raise AttributeError(_missing_message(catalogue, name, namespace))


def _missing_message(catalogue, name, namespace):
    message = f"module '{namespace}' has no attribute '{name}'"
    distribution = PROVIDED_BY[catalogue].get(name)
    if distribution is None:
        return message
    problems = [info for info in registry.infos.values()
                if info.distribution == distribution and info.status != "ok"]
    if problems:
        info = problems[0]
        detail = f": {info.error}" if info.error else ""
        return (f"{message}: '{name}' is provided by the plugin {info.name!r} (distribution {distribution}), "
                f"which is {info.status}{detail}")
    return (f"{message}: '{name}' is provided by the distribution {distribution}, which is not installed. "
            f"Install it with: pip install {distribution}")


def names(catalogue):
    """Every name registered in ``catalogue``."""
    return sorted(registry.catalogue(catalogue))
