"""Name lookups in a catalogue for the namespaces that forward to plugins
(``ember.nn``, ``ember.optim``, ``ember.data``), and the error for a missing name.

PyTorch counterpart: none; torch's namespaces import everything eagerly. A name that
no plugin registered raises the AttributeError Python gives for a missing module
attribute; when the name belongs to a first-party distribution, the message goes on
to say whether that distribution is broken (and why) or not installed.

# NOTE [ Remembered lookups ]
# A module's ``__getattr__`` runs only after Python's own attribute lookup has failed,
# and that failure raises and swallows an AttributeError inside the interpreter: with
# the catalogue's lookup, ``ember.nn.functional.cross_entropy`` cost ~5 us per access
# (18 us under load) against 0.2 us for ``conv2d``, which the module imports. A
# training loop pays it every step, so ``ember.nn.functional`` writes a name it found
# into its own namespace (``remember``); when the plugins change (register,
# unregister, invalidate), every remembered name is taken out again and the next
# access asks the catalogue anew. Only that namespace remembers: the others are read
# when a model is built, and some forward to submodules of the same names.
"""

import sys

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
    distribution = provided_by.get(name)
    error = NotProvidedError if distribution is not None else AttributeError
    raise error(missing_message(name, namespace, distribution))


class NotProvidedError(AttributeError):
    """A name a first-party distribution provides, which is not installed (or broken)."""


_remembered = []  # (module, name, object) written by remember


def remember(namespace, name, obj):
    """Write ``obj`` into the module ``namespace`` as ``name`` until the plugins change;
    returns ``obj``."""
    module = sys.modules[namespace]
    vars(module)[name] = obj
    _remembered.append((module, name, obj))
    return obj


def forget_remembered():
    """Take every remembered name out of its module (NOTE [ Remembered lookups ])."""
    for module, name, obj in _remembered:
        if vars(module).get(name) is obj:
            del vars(module)[name]
    _remembered.clear()


def plugin_module(distribution):
    """The module a loaded plugin of ``distribution`` registered (its entry point): how the
    core reaches a plugin's own API (ember-quantization's ``prepare``...) without importing
    the plugin. ImportError, naming the distribution to install, when none is loaded."""
    for info in registry.plugin_infos():
        if info.distribution == distribution and info.status == "ok":
            return registry.pm.get_plugin(info.name)
    for info in registry.infos.values():  # installed, but broken or disabled
        if info.distribution == distribution:
            detail = f": {info.error}" if info.error else ""
            raise ImportError(f"this needs the plugin distribution {distribution}, which is {info.status}{detail}")
    raise ImportError(f"this needs the plugin distribution {distribution}, which is not installed; "
                      f"{install_hint(distribution)}")


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
