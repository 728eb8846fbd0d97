"""Name lookups in a catalogue for the namespaces that forward to plugins
(``ember.nn``, ``ember.optim``, ``ember.data``), and the error for a missing name.

PyTorch counterpart: none; torch's namespaces import everything eagerly. A name that
no plugin registered raises the AttributeError Python gives for a missing module
attribute; when the name belongs to a first-party distribution, the message goes on
to say whether that distribution is broken (and why) or not installed.
"""

from ember.plugins import registry
from ember.plugins.manager import install_hint


def lookup(catalogue, name, namespace, provided_by, accept=None):
    """The object registered as ``name`` in ``catalogue`` (and, with ``accept``, for
    which ``accept(entry)`` holds); AttributeError otherwise. ``provided_by`` maps
    first-party names to the distribution that registers them."""
    if name.startswith("_"):  # dunder probes (copy, pickle, inspect) never load plugins
        raise AttributeError(f"module '{namespace}' has no attribute '{name}'")
    entry = registry.catalogue(catalogue).get(name)
    if entry is not None and (accept is None or accept(entry)):
        return entry.obj
    raise AttributeError(missing_message(name, namespace, provided_by.get(name)))


def missing_message(name, namespace, distribution):
    """Python's "has no attribute" message, plus why ``distribution`` (None for a name
    nobody first-party provides) did not register ``name``."""
    message = f"module '{namespace}' has no attribute '{name}'"
    if distribution is None:
        return message
    for info in registry.infos.values():
        if info.distribution == distribution and info.status != "ok":
            detail = f": {info.error}" if info.error else ""
            return (f"{message}: '{name}' is provided by the plugin {info.name!r} (distribution {distribution}), "
                    f"which is {info.status}{detail}")
    return (f"{message}: '{name}' is provided by the distribution {distribution}, which is not installed. "
            f"Install it with: {install_hint(distribution)}")
