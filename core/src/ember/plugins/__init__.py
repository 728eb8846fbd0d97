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

from ember.plugins.manager import PluginError, PluginInfo, PluginRegistry

hookimpl = pluggy.HookimplMarker("ember")

registry = PluginRegistry()


def _register_builtins():
    from ember.native import builtin_plugin

    registry.pm.register(builtin_plugin, name="ember")
    registry.infos["ember"] = PluginInfo("ember", "ember-core", _core_version())


def _core_version():
    try:
        from importlib.metadata import version

        return version("ember-core")
    except Exception:
        return None


def register(plugin, name=None):
    """Register an in-process plugin (a module or object with ``@hookimpl`` functions)."""
    return registry.register(plugin, name=name)


def unregister(plugin=None, name=None):
    """Take a plugin registered with ``register`` out again."""
    return registry.unregister(plugin=plugin, name=name)


def list_plugins():
    """A ``PluginInfo`` per plugin: name, distribution, version, status, what it registered."""
    return registry.plugin_infos()


__all__ = ["hookimpl", "register", "unregister", "list_plugins", "registry", "PluginError"]
