"""Plugin discovery and the catalogues built from the hooks.

PyTorch counterpart: torch/__init__.py ``_import_device_backends`` (entry-point
autoload of device backends, switched off by ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``);
the rest follows pytest's and llm's use of pluggy (v2.13). ember leaves out
pytest's ``-p`` selection and pluggy's historic hooks and wrappers.

# NOTE [ Plugins stay off the hot path ]
# pluggy costs about 1.3 us per hook call, more than a small NumPy op. Hooks therefore
# run once, at discovery: each registration lands in a plain dict (a catalogue), and
# ops, devices and modules are looked up there. Registering a plugin later adds its
# entries; unregistering drops the catalogues, and with them the devices' and ops'
# cached lookups, so they are rebuilt on the next need.

# NOTE [ Failing plugins ]
# Entry points of the group ``ember`` are loaded one by one, the first time a catalogue
# is needed (never at ``import ember``). A plugin that fails to import or whose hook
# raises is recorded as broken with its error and a RuntimeWarning; nothing it
# registered is kept, and the other plugins still load. ``EMBER_STRICT_PLUGINS=1``
# raises ``PluginError`` instead (except in ``ember plugins``, whose job is to list them).
#
# NOTE [ Name clashes between plugins ]
# A name (an op, a module, a model...) has one owner: the plugin that loaded first.
# The load order is: the core's own plugins, then the first-party distributions of
# this repository (``FIRST_PARTY``), then every other distribution; within each group,
# by distribution name. So a third-party plugin can never take a name from a
# first-party one, whatever its distribution is called. A later plugin that registers
# an owned name loses that entry only: everything else it registers is kept, its
# status is "clash", its error names both plugins and the name, a RuntimeWarning says
# so, and ``ember plugins`` shows it and exits with status 1. The owner is untouched.
# ``EMBER_PLUGINS_AUTOLOAD=0`` loads no entry point; ``EMBER_DISABLE_PLUGINS=a,b`` skips
# the named entry points (or distributions). A plugin registered in-process with
# ``register`` fails loudly: its error is raised to the caller. A plugin that calls
# ``sys.exit`` while it is imported or in a hook is a failing plugin like any other
# (``SystemExit`` is caught there, and named), never the end of the program that
# imported ember. A plugin slower than ``SLOW_IMPORT_SECONDS`` to import is named on
# stderr while it loads (a long silence otherwise looks like a hang), and ``ember
# plugins`` shows its import time; ``EMBER_PLUGINS_DEBUG=1`` prints every plugin's.

# NOTE [ Kernels for another plugin's ops ]
# A plugin may serve an op it does not define (ember-numba's compiled loops for
# ember-norm's ops): its ``ember_register_kernels`` hook names the op,
# ``register(kernel, name="norm::layer_norm", device="cpu")``, and never imports the
# plugin that defines it, as ``torch.library.Library.impl`` names an op another
# library defines. The hooks of all plugins run first, in load order, whatever that
# order is; only then is each kernel installed on the op of that name
# (``Op.register_kernel``), so a kernel lands whether its plugin loaded before or after
# the op's. With ``with_fallback=True`` the kernel is called as ``kernel(fallback, xp,
# *arrays, **attrs)``, ``fallback`` being the kernel it replaced (the op's own for that
# device, else its generic one), for the inputs it does not take, as torch's
# ``with_keyset=True`` hands an impl what it needs to redispatch. A kernel for an op
# nobody defines (its plugin not installed, or the op renamed) is skipped with a
# RuntimeWarning and listed under the plugin by ``ember plugins``. Installed kernels
# belong to the catalogues: dropping them (``invalidate``, ``unregister``) gives every
# op back the kernels it had before.
"""

import contextlib
import functools
import os
import sys
import threading
import time
import warnings
from collections import namedtuple

import pluggy

from ember.plugins import hookspecs

GROUP = "ember"
SLOW_IMPORT_SECONDS = 2.0  # NOTE [ Failing plugins ]: a slower import is named while it runs

# The distribution to install for a device type nobody registered.
BACKEND_DISTRIBUTIONS = {"cpu": "ember-numpy", "cuda": "ember-cupy"}

# The device types torch.device accepts (c10/core/DeviceType.cpp, v2.13), in its
# message's order: a name outside them gets torch's error ("gpu" is not a device type).
TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
                      "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")

# The distributions of this repository (tests/core/plugins checks this against its
# pyproject files): they load before any other, see NOTE [ Name clashes between plugins ].
FIRST_PARTY = frozenset({
    "ember-core", "ember-numpy", "ember-cupy", "ember-activation", "ember-data", "ember-loss", "ember-mpi",
    "ember-metrics", "ember-norm", "ember-numba", "ember-optim", "ember-quantization", "ember-vision",
    "ember-zoo-resnet", "ember-zoo-transformer", "ember-zoo-yolo",
})

# One catalogue entry: the registered object, the plugin that registered it, and any
# extra keyword arguments the plugin passed to ``register`` (model info, aliases).
Registration = namedtuple("Registration", ["obj", "plugin", "extra"])


class PluginError(RuntimeError):
    """A plugin could not be loaded, or two plugins registered the same name."""


class PluginInfo:
    """What ``ember plugins`` shows for one plugin."""

    __slots__ = ("name", "distribution", "version", "status", "error", "registered", "module", "skipped",
                 "import_seconds")

    def __init__(self, name, distribution=None, version=None, status="ok", error=None, module=None):
        self.name = name
        self.distribution = distribution
        self.version = version
        self.status = status  # "ok", "clash" (some entries dropped), "broken" or "disabled"
        self.error = error
        self.registered = {}  # catalogue name -> [keys]
        self.module = module
        self.skipped = []  # its kernels for ops nobody defines (NOTE [ Kernels for another plugin's ops ])
        self.import_seconds = None  # how long its entry point took to import

    def as_dict(self):
        return {"name": self.name, "distribution": self.distribution, "version": self.version,
                "module": self.module, "status": self.status, "error": self.error,
                "registered": {k: sorted(v) for k, v in self.registered.items()}, "skipped": sorted(self.skipped),
                "import_seconds": self.import_seconds}

    def __repr__(self):
        return f"<PluginInfo {self.name!r} {self.status}>"


class PluginRegistry:
    """Owns the pluggy manager, the plugin records (in load order) and the catalogues."""

    def __init__(self):
        self.pm = pluggy.PluginManager(GROUP)
        self.pm.add_hookspecs(hookspecs)
        self.infos = {}  # plugin name -> PluginInfo; insertion order is load order
        self._catalogues = None  # {catalogue name: {key: Registration}} once built
        self._autoloaded = False
        self._building = False  # True while _built runs the hooks
        self._listing = False  # True in ``ember plugins``: failures are listed, never raised
        self._installed = []  # (op, device type, its kernel before) per kernel installed, in order

    # --- discovery ----------------------------------------------------------------
    def add_builtin(self, plugin, name, distribution):
        """Register one of the core's own plugins (always first, never disabled)."""
        self.pm.register(plugin, name=name)
        self.infos[name] = PluginInfo(name, distribution, module=getattr(plugin, "__name__", None))

    def load_entry_points(self):
        """Load every entry point of the group once (a no-op afterwards)."""
        if self._autoloaded:
            return
        self._autoloaded = True
        if _env_flag("EMBER_PLUGINS_AUTOLOAD", default=True) is False:
            return
        from importlib.metadata import entry_points

        disabled = {n.strip() for n in
                    os.environ.get("EMBER_DISABLE_PLUGINS", "").split(",") if n.strip()}
        seen = set()
        # First-party first, then by distribution, so which of two clashing plugins
        # loads first (and keeps the name) never depends on the order of sys.path
        # (NOTE [ Name clashes between plugins ]).
        for ep in sorted(entry_points(group=GROUP), key=_entry_point_order):
            dist = ep.dist.name if ep.dist is not None else None
            if (dist, ep.name) in seen:
                # one distribution seen twice on sys.path (lib64 -> lib symlinks)
                continue
            seen.add((dist, ep.name))
            version = ep.dist.version if ep.dist is not None else None
            info = PluginInfo(ep.name, dist, version, module=ep.value)
            if ep.name in disabled or dist in disabled:
                info.status = "disabled"
                self.infos.setdefault(ep.name, info)
                continue
            if ep.name in self.infos:
                other = self.infos[ep.name]
                self._broken(info, PluginError(
                    f"plugin name {ep.name!r} is used by both distribution "
                    f"{other.distribution!r} and distribution {dist!r}"),
                    "import", key=f"{dist}:{ep.name}")
                continue
            try:
                plugin = _timed_load(ep, info)
                self.pm.register(plugin, name=ep.name)
            # a broken plugin must not break ember, nor end the program (sys.exit)
            except (Exception, SystemExit) as exc:
                self._broken(info, exc, "import")
                continue
            self.infos[ep.name] = info

    def _broken(self, info, exc, stage, key=None):
        info.status = "broken"
        info.error = describe_failure(exc)
        info.registered = {}
        self.infos[key or info.name] = info
        if self._strict():
            raise PluginError(f"ember plugin {info.name!r} failed during {stage}: {info.error}") from exc
        warnings.warn(f"ember plugin {info.name!r} failed during {stage} and was skipped: {info.error}",
                      RuntimeWarning, stacklevel=4)

    def _strict(self):
        return not self._listing and _env_flag("EMBER_STRICT_PLUGINS", default=False)

    @contextlib.contextmanager
    def listing(self):
        """Discovery inside the block records failures and never raises, even in strict
        mode (``ember plugins`` must list the broken plugins it would raise for)."""
        self._listing, was = True, self._listing
        try:
            yield
        finally:
            self._listing = was

    # --- in-process plugins -------------------------------------------------------
    def register(self, plugin, name=None):
        """Register a module or object with ``@hookimpl`` functions (tests, notebooks).

        Installed plugins are loaded first, so the order (and who wins a name) does not
        depend on when this is called. A failing hook or a name clash raises here.
        """
        catalogues = self._built()
        name = self.pm.register(plugin, name=name)
        info = PluginInfo(name, module=getattr(plugin, "__name__", type(plugin).__name__))
        try:
            self._add_plugin(catalogues, info)
        except Exception:
            self.pm.unregister(plugin)
            raise
        self.infos[name] = info
        self._uninstall_kernels()  # its ops may be what an earlier plugin's kernels wait for
        try:
            self._install_kernels(catalogues)
        except PluginError:  # strict mode: a kernel for an op nobody defines
            self.unregister(name=name)
            raise
        _forget_cached_lookups()
        return name

    def unregister(self, plugin=None, name=None):
        """Take a plugin out; the catalogues are rebuilt on next need."""
        if name is None:
            name = self.pm.get_name(plugin)
        plugin = self.pm.unregister(plugin=plugin, name=name)
        self.infos.pop(name, None)
        self.invalidate()
        return plugin

    @contextlib.contextmanager
    def without(self, name):
        """Take the plugin ``name`` out for the ``with`` block, then put it back as it
        was (tests: e.g. the missing-backend error on a machine with ember-cupy installed)."""
        info = self.infos.get(name)
        plugin = self.pm.get_plugin(name) if info is not None else None
        if plugin is not None:
            self.unregister(name=name)
        try:
            yield
        finally:
            if plugin is not None:
                self.pm.register(plugin, name=name)
                self.infos[name] = info
                self.invalidate()

    def invalidate(self):
        """Forget every catalogue, the kernels installed from them and the lookups cached from them."""
        self._uninstall_kernels()
        self._catalogues = None
        _forget_cached_lookups()

    # --- catalogues ---------------------------------------------------------------
    def catalogue(self, name):
        """``{key: Registration(obj, plugin, extra)}`` for one catalogue, built on first use."""
        catalogues = self._catalogues
        if catalogues is None:
            catalogues = self._built()
        return catalogues[name]

    def _built(self):
        if self._catalogues is None:
            if self._building:
                # A hook looked a name up (ember.nn.<Name>, ember.data.<Name>, ...)
                # while the catalogues are being built: building again from inside
                # would recurse without end and break every plugin. Only the
                # offending plugin fails.
                raise PluginError(
                    "a plugin hook looked up a catalogue entry while the catalogues were "
                    "being built; do such lookups when the registered object is first "
                    "used, not in the hook")
            self._building = True
            self._uninstall_kernels()  # a build that raised may have installed some
            try:
                self.load_entry_points()
                catalogues = {name: {} for name in hookspecs.CATALOGUES.values()}
                for info in list(self.infos.values()):
                    if info.status == "clash":  # a rebuild: its clashes are found again
                        info.status, info.error = "ok", None
                    if info.status != "ok":
                        continue
                    try:
                        self._add_plugin(catalogues, info,
                                         keep_others=not self._strict())
                    # a failing hook or a name clash: see NOTE [ Failing plugins ]
                    except Exception as exc:
                        self._broken(info, exc, "registration")
                self._install_kernels(catalogues)
                self._catalogues = catalogues
            finally:
                self._building = False
        return self._catalogues

    def _add_plugin(self, catalogues, info, keep_others=False):
        """Run one plugin's hooks and merge what it registered. A name another plugin
        owns raises PluginError, or with ``keep_others`` (discovery) drops that entry
        alone and marks the plugin "clash" (NOTE [ Name clashes between plugins ])."""
        staged = self._call_hooks(info.name)
        clashes = _clashes(catalogues, staged)
        if clashes and not keep_others:
            raise PluginError(self._clash_message(catalogues, clashes[0], info.name))
        staged = {name: [entry for entry in entries if (name, entry[0]) not in clashes]
                  for name, entries in staged.items()}
        problem = _kernel_clash(catalogues, staged, info.name)
        if problem is not None:
            raise PluginError(problem)
        if clashes:
            info.status = "clash"
            info.error = "; ".join(self._clash_message(catalogues, clash, info.name) for clash in clashes)
            warnings.warn(f"ember plugin {info.name!r} clashes with another plugin: {info.error}",
                          RuntimeWarning, stacklevel=4)
        info.registered = {}
        for catalogue_name, entries in staged.items():
            for key, obj, extra in entries:
                catalogues[catalogue_name][key] = Registration(obj, info.name, extra)
                _tag_owner(obj, info.name)
                info.registered.setdefault(catalogue_name, []).append(key)

    def _call_hooks(self, plugin_name):
        """``{catalogue: [(key, obj, extra)]}`` from one plugin's hooks.

        Each hook is called through pluggy for this plugin alone, so every entry knows
        its owner and results never depend on pluggy's last-registered-first order.
        """
        plugin = self.pm.get_plugin(plugin_name)
        others = [p for p in self.pm.get_plugins() if p is not plugin]
        staged = {}
        for hook_name, catalogue_name in hookspecs.CATALOGUES.items():
            hook = getattr(self.pm.hook, hook_name)
            if not any(impl.plugin is plugin for impl in hook.get_hookimpls()):
                continue
            entries = staged.setdefault(catalogue_name, [])
            caller = self.pm.subset_hook_caller(hook_name, remove_plugins=others)
            try:
                caller(register=_registrar(entries, catalogue_name, plugin_name))
            except (Exception, SystemExit) as exc:  # sys.exit too: NOTE [ Failing plugins ]
                failure = describe_failure(exc)
                raise PluginError(f"plugin {plugin_name!r} failed in {hook_name}: "
                                  f"{failure}") from exc
        return staged

    def _install_kernels(self, catalogues):
        """Put every registered kernel on the op it names, in load order; a kernel for an
        op nobody defines is skipped and recorded (NOTE [ Kernels for another plugin's ops ])."""
        ops = catalogues["ops"]
        for info in self.infos.values():
            info.skipped = []
        for key, entry in catalogues["kernels"].items():
            found = ops.get(entry.extra["op"])
            if found is None:
                self._skipped(entry, key)
                continue
            op, device_type = found.obj, entry.extra["device"]
            previous = op.kernels.get(device_type)
            kernel = entry.obj
            if entry.extra["with_fallback"]:
                # the kernel's name, module, attributes and source stay readable (ember explain)
                kernel = functools.update_wrapper(functools.partial(kernel, previous or op.generic), kernel)
            op.register_kernel(device_type, kernel)
            self._installed.append((op, device_type, previous))

    def _skipped(self, entry, key):
        info = self.infos.get(entry.plugin)
        if info is not None:
            info.skipped.append(key)
        message = (f"ember plugin {entry.plugin!r} registers a kernel for the op {entry.extra['op']!r}, which no "
                   f"plugin defines (not installed, or renamed): kernel {key!r} skipped")
        if self._strict():
            raise PluginError(message)
        warnings.warn(message, RuntimeWarning, stacklevel=5)

    def _uninstall_kernels(self):
        """Give every op the kernels it had before ``_install_kernels``."""
        while self._installed:
            op, device_type, previous = self._installed.pop()
            if previous is None:
                op.kernels.pop(device_type, None)
            else:
                op.kernels[device_type] = previous
            op._resolved.clear()

    # --- lookups ------------------------------------------------------------------
    def find_backend(self, device_type):
        """The ``Backend`` for ``device_type``, or None."""
        found = self.catalogue("backends").get(device_type)
        return None if found is None else found.obj

    def backend(self, device_type):
        """The ``Backend`` for ``device_type``; the error names the distribution to install."""
        backend = self.find_backend(device_type)
        if backend is None:
            raise RuntimeError(self._missing_backend_message(device_type))
        if not backend.is_available():
            reason = backend.unavailable_reason()
            raise RuntimeError(f"the ember backend for device type '{device_type}' (plugin "
                               f"{backend.plugin!r}) is installed, but no {device_type} device is available"
                               + (f": {reason}" if reason else ""))
        return backend

    def _clash_message(self, catalogues, clash, plugin_name):
        catalogue_name, key = clash
        owner = catalogues[catalogue_name][key].plugin
        return (f"{_singular(catalogue_name)} {key!r} is registered by both plugin {self._named(owner)} and "
                f"plugin {self._named(plugin_name)}; {owner!r} keeps it (loaded first)")

    def _named(self, plugin_name):
        info = self.infos.get(plugin_name)
        dist = info.distribution if info is not None else None
        return f"{plugin_name!r} ({dist})" if dist else repr(plugin_name)

    def _missing_backend_message(self, device_type):
        if device_type not in TORCH_DEVICE_TYPES:  # a name torch does not know either ("gpu"): torch's words
            return (f"Expected one of {', '.join(TORCH_DEVICE_TYPES)} device type at start of device string: "
                    f"{device_type} (and no ember plugin registers a backend for it: see `ember plugins`)")
        dist = BACKEND_DISTRIBUTIONS.get(device_type)
        message = f"no ember backend is installed for device type '{device_type}'."
        broken = [i for i in self.infos.values() if i.status != "ok" and dist and i.distribution == dist]
        if broken:
            info = broken[0]
            return message + f" The plugin {info.name!r} ({dist}) that provides it is {info.status}" + (
                f": {info.error}" if info.error else "")
        if dist is not None:
            return message + f" Install it with: {install_hint(dist)}"
        return message + " Install a plugin that registers it (see `ember plugins`)."

    def plugin_infos(self):
        """Every plugin's record, after discovery, in load order."""
        self._built()
        for info in self.infos.values():
            if info.version is None and info.distribution is not None:
                info.version = _distribution_version(info.distribution)
        return list(self.infos.values())


def describe_failure(exc):
    """``"ValueError: message"``, or what a plugin's ``sys.exit(code)`` was."""
    if isinstance(exc, SystemExit):
        return f"SystemExit: the plugin called sys.exit({exc.code!r})"
    return f"{type(exc).__name__}: {exc}"


def _timed_load(ep, info):
    """``ep.load()``, timed into ``info.import_seconds``; a slow import is named on
    stderr while it runs, and every import with ``EMBER_PLUGINS_DEBUG=1``."""
    debug = _env_flag("EMBER_PLUGINS_DEBUG", default=False)
    where = f"plugin {ep.name!r} (distribution {info.distribution or '?'}, {ep.value})"
    if debug:
        print(f"ember: importing {where}", file=sys.stderr, flush=True)
    notice = threading.Timer(SLOW_IMPORT_SECONDS, lambda: print(
        f"ember: still importing {where} after {SLOW_IMPORT_SECONDS:.0f} s ...", file=sys.stderr, flush=True))
    notice.daemon = True
    notice.start()
    started = time.perf_counter()
    try:
        return ep.load()
    finally:
        notice.cancel()
        info.import_seconds = round(time.perf_counter() - started, 3)
        if debug:
            print(f"ember: imported {where} in {info.import_seconds:.3f} s", file=sys.stderr, flush=True)


def _entry_point_order(ep):
    dist = ep.dist.name if ep.dist is not None else ""
    return (dist not in FIRST_PARTY, dist, ep.name, ep.value)


def install_hint(distribution, extra=None):
    """How to install a distribution. ember's own are on no package index: from the clone
    this ember runs from (an editable install), the exact command, with this Python's pip
    and the folder's path; otherwise the command to run in a clone. ``extra`` names an
    optional-dependency group (``"onnx"``: ``core[onnx]``)."""
    if distribution not in FIRST_PARTY:
        return f"pip install {distribution}"
    name = distribution.removeprefix("ember-")
    folder = "core" if name == "core" else f"zoo/{name.removeprefix('zoo-')}" if name.startswith("zoo-") \
        else f"plugins/{name}"
    suffix = f"[{extra}]" if extra else ""
    clone = clone_root()
    if clone is not None:
        return f"{sys.executable} -m pip install -e '{clone / folder}{suffix}' ({distribution})"
    return (f"pip install -e '{folder}{suffix}' in a clone of the ember repository ({distribution} is on no "
            f"package index)")


def clone_root():
    """The repository ember runs from (an editable install or a checkout on sys.path), or None."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[4]  # core/src/ember/plugins/manager.py
    return root if (root / "core" / "pyproject.toml").is_file() and (root / "plugins").is_dir() else None


def _registrar(entries, catalogue_name, plugin_name):
    """The ``register`` callback a hook receives, bound to one plugin and catalogue."""
    if catalogue_name == "kernels":
        return _kernel_registrar(entries, plugin_name)

    def register(obj, name=None, **extra):
        key = name if name is not None else _default_key(obj)
        if any(key == k for k, _, _ in entries):
            raise PluginError(f"plugin {plugin_name!r} registers "
                              f"{_singular(catalogue_name)} {key!r} twice")
        entries.append((key, obj, extra))
        return obj
    return register


def _kernel_registrar(entries, plugin_name):
    """``register(kernel, name, device, with_fallback=False)`` for ``ember_register_kernels``:
    keyed ``"name[device]"``, as ``ember explain`` writes a device's kernel."""
    def register(kernel, name, device, with_fallback=False):
        key = f"{name}[{device}]"
        if any(key == k for k, _, _ in entries):
            raise PluginError(f"plugin {plugin_name!r} registers kernel {key!r} twice")
        entries.append((key, kernel, {"op": name, "device": device, "with_fallback": with_fallback}))
        return kernel
    return register


def _clashes(catalogues, staged):
    """``[(catalogue name, key)]`` of the entries in ``staged`` another plugin owns."""
    return [(catalogue_name, key) for catalogue_name, entries in staged.items()
            for key, _, _ in entries if key in catalogues[catalogue_name]]


def _kernel_clash(catalogues, staged, plugin_name):
    """A backend override and an op's own kernel for the same (op, device type)."""
    backends = dict(catalogues["backends"])
    ops = dict(catalogues["ops"])
    backends.update({k: Registration(o, plugin_name, e) for k, o, e in staged.get("backends", ())})
    ops.update({k: Registration(o, plugin_name, e) for k, o, e in staged.get("ops", ())})
    for device_type, backend in backends.items():
        for qualname in getattr(backend.obj, "kernels", ()):
            op = ops.get(qualname)
            if op is not None and device_type in getattr(op.obj, "kernels", ()):
                if plugin_name in (backend.plugin, op.plugin):
                    return (f"kernel for {qualname!r} on '{device_type}' is registered by both plugin "
                            f"{backend.plugin!r} (backend) and plugin {op.plugin!r} (op)")
    return None


def _tag_owner(obj, plugin_name):
    """Ops and backends remember their plugin (for ``ember explain`` and messages)."""
    if not isinstance(obj, type) and hasattr(obj, "plugin"):
        try:
            obj.plugin = plugin_name
        except AttributeError:
            pass


def _default_key(obj):
    for attr in ("qualname", "name", "__name__"):
        value = getattr(obj, attr, None)
        if isinstance(value, str):
            return value
    raise TypeError(f"cannot tell the name of {obj!r}; pass name=")


def _singular(catalogue_name):
    return {"data": "data entry"}.get(catalogue_name, catalogue_name.rstrip("s"))


def _forget_cached_lookups():
    # (``ember.device`` is the class once ember is imported, so import the functions.)
    from ember.device import _forget_backends
    from ember.dispatcher import forget_kernels
    from ember.plugins.lookup import forget_remembered

    _forget_backends()
    forget_kernels()
    forget_remembered()


def _distribution_version(distribution):
    try:
        from importlib.metadata import version

        return version(distribution)
    except Exception:  # not installed as a distribution (e.g. a source checkout on sys.path)
        return None


def _env_flag(name, default):
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")
