"""ember's plugin system: the ``hookimpl`` marker and the process-wide registry.

PyTorch counterpart: torch/library.py and torch/utils/backend_registration.py play
this part for ops and devices; see ember/plugins/manager.py.

    from ember.plugins import hookimpl

    @hookimpl
    def ember_register_ops(register):
        from my_plugin.ops import my_op
        register(my_op)
"""

import pluggy

from ember.plugins.manager import PluginError, PluginInfo, PluginRegistry, Registration

hookimpl = pluggy.HookimplMarker("ember")

registry = PluginRegistry()


def _register_builtins():
    """Register the core's own plugin (the ``aten`` ops); called by ``import ember``.

    Only the pluggy registration happens here: no entry point is read and no hook runs
    until a catalogue is first needed (NOTE [ Plugins stay off the hot path ]).
    """
    from ember.native.support import builtin_plugin

    registry.add_builtin(builtin_plugin, name="ember", distribution="ember-core")


def register(plugin, name=None):
    """Register an in-process plugin (a module or object with ``@hookimpl`` functions).

    Returns the plugin's name. Raises ``PluginError`` if one of its hooks fails or it
    registers a name another plugin owns; nothing it registered is kept then.
    """
    return registry.register(plugin, name=name)


def unregister(plugin=None, name=None):
    """Take a plugin registered with ``register`` out again."""
    return registry.unregister(plugin=plugin, name=name)


def list_plugins():
    """A ``PluginInfo`` per plugin: name, distribution, version, status, what it registered."""
    return registry.plugin_infos()


__all__ = ["hookimpl", "register", "unregister", "list_plugins", "registry", "PluginError", "PluginInfo",
           "Registration"]
