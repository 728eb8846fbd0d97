"""Plugin discovery and the catalogues built from the hooks.

PyTorch counterpart: torch/__init__.py ``_import_device_backends`` (entry-point
autoload of device backends, switched off by ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``);
the rest follows pytest's and llm's use of pluggy (v2.13).

# NOTE [ Plugins stay off the hot path ]
# pluggy costs about 1.3 us per hook call, more than a small NumPy op. Hooks therefore
# run once, at discovery: each registration lands in a plain dict (a catalogue), and
# ops, devices and modules are looked up there. Registering or unregistering a plugin
# later drops the catalogues, and the devices' and ops' cached lookups with them.

Entry points of the group ``ember`` are loaded one by one, lazily, the first time a
catalogue is needed. A plugin that fails to import, or whose hook raises, is recorded
as broken with its error and a warning; the others still load. ``EMBER_STRICT_PLUGINS=1``
re-raises instead; ``EMBER_PLUGINS_AUTOLOAD=0`` loads no entry point;
``EMBER_DISABLE_PLUGINS=a,b`` skips the named ones.
"""

import os
import warnings

import pluggy

from ember.plugins import hookspecs

GROUP = "ember"


class PluginError(RuntimeError):
    """A plugin could not be loaded, or two plugins registered the same name."""


class PluginInfo:
    """What ``ember plugins`` shows for one plugin."""

    __slots__ = ("name", "distribution", "version", "status", "error", "registered")

    def __init__(self, name, distribution=None, version=None, status="ok", error=None):
        self.name = name
        self.distribution = distribution
        self.version = version
        self.status = status
        self.error = error
        self.registered = {}

    def as_dict(self):
        return {"name": self.name, "distribution": self.distribution, "version": self.version,
                "status": self.status, "error": self.error,
                "registered": {k: sorted(v) for k, v in self.registered.items()}}


class PluginRegistry:
    """Owns the pluggy manager, the plugin records and the catalogues."""

    def __init__(self):
        self.pm = pluggy.PluginManager("ember")
        self.pm.add_hookspecs(hookspecs)
        self.infos = {}
        self._catalogues = {}
        self._autoloaded = False

    # --- discovery ----------------------------------------------------------------
    def load_entry_points(self):
        """Load every entry point of the group once (a no-op afterwards)."""
        if self._autoloaded:
            return
        self._autoloaded = True
        if os.environ.get("EMBER_PLUGINS_AUTOLOAD", "1").strip().lower() in ("0", "false", "no", "off"):
            return
        from importlib.metadata import entry_points

        disabled = {n.strip() for n in os.environ.get("EMBER_DISABLE_PLUGINS", "").split(",") if n.strip()}
        seen = set()
        for ep in entry_points(group=GROUP):
            dist = ep.dist.name if ep.dist is not None else None
            if (dist, ep.name) in seen or ep.name in self.infos:
                continue  # the same distribution seen twice on sys.path (lib64 -> lib)
            seen.add((dist, ep.name))
            version = ep.dist.version if ep.dist is not None else None
            if ep.name in disabled:
                self.infos[ep.name] = PluginInfo(ep.name, dist, version, status="disabled")
                continue
            try:
                plugin = ep.load()
                self.pm.register(plugin, name=ep.name)
            except Exception as exc:  # a broken plugin must not break ember
                self._broken(PluginInfo(ep.name, dist, version), exc, "import")
                continue
            self.infos[ep.name] = PluginInfo(ep.name, dist, version)
        self._catalogues.clear()

    def _broken(self, info, exc, stage):
        info.status = "broken"
        info.error = f"{type(exc).__name__}: {exc}"
        self.infos[info.name] = info
        if _strict():
            raise PluginError(f"ember plugin {info.name!r} failed during {stage}: {info.error}") from exc
        warnings.warn(f"ember plugin {info.name!r} failed during {stage} and was skipped: {info.error}",
                      RuntimeWarning, stacklevel=3)

    # --- in-process plugins -------------------------------------------------------
    def register(self, plugin, name=None):
        """Register a module or object with hook implementations (tests, notebooks)."""
        name = self.pm.register(plugin, name=name)
        self.infos[name] = PluginInfo(name, distribution=None, version=None)
        self.invalidate()
        return name

    def unregister(self, plugin=None, name=None):
        plugin = self.pm.unregister(plugin=plugin, name=name)
        self.infos.pop(name or self.pm.get_name(plugin) or "", None)
        for key, info in list(self.infos.items()):
            if self.pm.get_plugin(key) is None and info.status == "ok":
                del self.infos[key]
        self.invalidate()
        return plugin

    def invalidate(self):
        """Forget every catalogue and the lookups cached from them."""
        self._catalogues.clear()
        from ember import device, dispatcher

        device._forget_backends()
        dispatcher.forget_kernels()

    # --- catalogues ---------------------------------------------------------------
    def catalogue(self, name):
        """``{key: (object, plugin_name)}`` for one catalogue, built on first use."""
        found = self._catalogues.get(name)
        if found is None:
            self.load_entry_points()
            self._build_all()
            found = self._catalogues[name]
        return found

    def _build_all(self):
        for info in self.infos.values():
            info.registered = {}
        catalogues = {name: {} for name in hookspecs.CATALOGUES.values()}
        for hook_name, catalogue_name in hookspecs.CATALOGUES.items():
            hook = getattr(self.pm.hook, hook_name)
            # Each implementation is called on its own, in registration order, so
            # results never depend on pluggy's LIFO order and each entry knows its owner.
            for impl in reversed(hook.get_hookimpls()):
                plugin_name = impl.plugin_name
                info = self.infos.get(plugin_name)
                if info is not None and info.status != "ok":
                    continue
                register = _registrar(catalogues[catalogue_name], catalogue_name, plugin_name, info)
                try:
                    impl.function(register=register)
                except PluginError:
                    raise
                except Exception as exc:
                    self._broken(info or PluginInfo(plugin_name), exc, hook_name)
        self._catalogues = catalogues

    def backend(self, device_type):
        backends = self.catalogue("backends")
        found = backends.get(device_type)
        if found is None:
            hint = {"cpu": "ember-numpy", "cuda": "ember-cupy"}.get(device_type)
            extra = f" Install it with: pip install {hint}" if hint else ""
            raise RuntimeError(f"no ember backend is installed for device type '{device_type}'.{extra}")
        return found[0]

    def plugin_infos(self):
        self.catalogue("backends")
        return [self.infos[k] for k in sorted(self.infos)]


def _registrar(catalogue, catalogue_name, plugin_name, info):
    def register(obj, name=None, **extra):
        key = name if name is not None else _default_key(obj)
        if key in catalogue:
            owner = catalogue[key][1]
            raise PluginError(f"{catalogue_name[:-1]} {key!r} is registered by both plugin "
                              f"{owner!r} and plugin {plugin_name!r}")
        if hasattr(obj, "plugin") and not isinstance(obj, type):
            try:
                obj.plugin = plugin_name
            except AttributeError:
                pass
        catalogue[key] = (obj, plugin_name, extra) if extra else (obj, plugin_name)
        if info is not None:
            info.registered.setdefault(catalogue_name, []).append(key)
        return obj
    return register


def _default_key(obj):
    for attr in ("qualname", "name", "__name__"):
        value = getattr(obj, attr, None)
        if isinstance(value, str):
            return value
    raise TypeError(f"cannot tell the name of {obj!r}; pass name=")


def _strict():
    return os.environ.get("EMBER_STRICT_PLUGINS", "0").strip().lower() in ("1", "true", "yes", "on")
