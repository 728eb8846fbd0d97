"""The plugin commands of the ``ember`` CLI: ``ember plugins`` and ``ember explain OP``.

PyTorch counterpart: none (``python -m torch.utils.collect_env`` is the closest); the
shape follows datasette's and llm's ``plugins`` commands. ember/cli.py adds them with
``add_commands``.

    $ ember plugins            # name, distribution, version, status, what each registered
    $ ember plugins --json
    $ ember explain mul        # schema, and the file:line of its kernels and backward
"""

import difflib
import inspect
import json
import shutil
import sys
import textwrap


def cmd_plugins(args):
    """List the plugins; exit status 1 when one is broken or lost a name in a clash."""
    from ember.plugins import list_plugins, registry
    from ember.plugins.manager import SLOW_IMPORT_SECONDS

    with registry.listing():  # strict mode raises for a broken plugin; listing it is this command's job
        infos = [info.as_dict() for info in list_plugins()]
        registry.catalogue("ops")  # runs the hooks, which register the kernels listed below
    kernels = kernels_by_plugin(registry)
    for info in infos:
        info["kernels"] = kernels.get(info["name"], {})
    status = 1 if any(info["status"] in ("broken", "clash") for info in infos) else 0
    if args.json:
        print(json.dumps(infos, indent=2))
        return status
    width = shutil.get_terminal_size((100, 24)).columns
    print(f"{'name':<16} {'distribution':<22} {'version':<10} status")
    for info in infos:
        dist = info["distribution"] or "(in-process)"
        slow = info["import_seconds"] is not None and info["import_seconds"] >= SLOW_IMPORT_SECONDS
        took = f" (import took {info['import_seconds']:.1f} s)" if slow else ""
        print(f"{info['name']:<16} {dist:<22} {info['version'] or '-':<10} {info['status']}{took}")
        if info["error"]:
            print(textwrap.fill(f"error: {info['error']}", width, initial_indent="    ", subsequent_indent="      ",
                                break_long_words=True, break_on_hyphens=False))
        for catalogue, names in info["registered"].items():
            if catalogue == "kernels":  # listed below, per device type
                continue
            if catalogue == "backends":  # few, and why one is unavailable matters: wrapped, never cut
                print(textwrap.fill(f"{catalogue}: " + ", ".join(_backend_status(name) for name in names), width,
                                    initial_indent="    ", subsequent_indent="      "))
            else:
                print(_listed(f"    {catalogue}: ", names, width))
        for device_type, names in info["kernels"].items():  # wrapped, never cut: it is all they register
            print(textwrap.fill(f"kernels[{device_type}]: " + ", ".join(names), width, initial_indent="    ",
                                subsequent_indent="      ", break_on_hyphens=False))
        if info["skipped"]:  # kernels for ops nobody defines (NOTE [ Kernels a plugin registers ... ])
            print(textwrap.fill("skipped (no such op): " + ", ".join(info["skipped"]), width, initial_indent="    ",
                                subsequent_indent="      ", break_on_hyphens=False))
    return status


# NOTE [ Kernels a plugin registers for other plugins' ops ]
# A plugin like ember-numba defines no ops: its ``ember_register_kernels`` hook registers
# kernels for ops that core or another plugin defines, by name (ember's
# REGISTER_DISPATCH; NOTE [ Kernels for another plugin's ops ] in manager.py). They are
# the ``kernels`` catalogue, keyed ``"norm::layer_norm[cpu]"``; ``ember plugins`` lists
# the ones installed per device type in full (``kernels[cpu]: aten::log_softmax, ...``),
# ``--json`` under ``"kernels"``, and the ones skipped for want of their op under
# ``skipped``; ``ember explain OP`` names the plugin that replaced a kernel.


def kernels_by_plugin(registry):
    """{plugin: {device type: [op qualnames]}}: the kernels each plugin registered for
    ops by name that were installed (NOTE above)."""
    ops = registry.catalogue("ops")
    found = {}
    for entry in registry.catalogue("kernels").values():
        if entry.extra["op"] in ops:
            found.setdefault(entry.plugin, {}).setdefault(entry.extra["device"], set()).add(entry.extra["op"])
    return {plugin: {device: sorted(names) for device, names in sorted(devices.items())}
            for plugin, devices in found.items()}


def _kernel_owner(registry, qualname, device_type):
    """The plugin whose ``ember_register_kernels`` serves ``qualname`` on ``device_type``, or None."""
    entry = registry.catalogue("kernels").get(f"{qualname}[{device_type}]")
    return None if entry is None else entry.plugin


def _listed(prefix, names, width):
    """``prefix`` and as many of ``names`` as fit in ``width`` columns, then how many in all."""
    shown = prefix + ", ".join(names)
    if len(shown) <= width:
        return shown
    for count in range(len(names) - 1, 0, -1):
        shown = prefix + ", ".join(names[:count]) + f", ... ({len(names)} in all)"
        if len(shown) <= width:
            return shown
    return (prefix + f"... ({len(names)} in all)")[:width]


def _backend_status(device_type):
    """``"cuda"``, or ``"cuda (unavailable: <why>)"`` for a backend that cannot be used here."""
    from ember.plugins import registry

    backend = registry.find_backend(device_type)
    if backend is None or backend.is_available():
        return device_type
    return f"{device_type} (unavailable: {backend.unavailable_reason() or 'no device'})"


# torch's operator names that ember computes with another operator (torch's own
# composites: aten::conv2d calls aten::convolution).
ALIASES = {
    "conv1d": "convolution", "conv2d": "convolution", "conv3d": "convolution",
    "conv_transpose1d": "convolution", "conv_transpose2d": "convolution", "conv_transpose3d": "convolution",
    "_convolution": "convolution",
}


def cmd_explain(args):
    from ember.library import schema
    from ember.plugins import registry

    registry.plugin_infos()  # discovery, and the distributions' versions
    ops = registry.catalogue("ops")
    qualname = args.op if "::" in args.op else f"aten::{args.op}"
    found = ops.get(qualname)
    namespace, _, short = qualname.rpartition("::")
    if found is None and namespace == "aten" and short in ALIASES:
        found = ops.get(f"aten::{ALIASES[short]}")
        if found is not None:
            print(f"{qualname} is computed by aten::{ALIASES[short]} in ember (as in torch, where it is a composite)")
    if found is None and "::" not in args.op:  # a plugin's op: torch's aten::silu is ember's activation::silu
        namesakes = sorted(key for key in ops if key.rpartition("::")[2] == short)
        if namesakes:
            found = ops[namesakes[0]]
            others = f" (also: {', '.join(namesakes[1:])})" if len(namesakes) > 1 else ""
            print(f"{args.op} is {namesakes[0]} in ember, defined by a plugin (torch: aten::{short}){others}")
    if found is None:
        close = suggestions(qualname, ops)
        hint = f"; did you mean: {', '.join(close)}" if close else ""
        print(f"ember explain: no operator named {qualname!r}{hint}", file=sys.stderr)
        return 1
    op = found.obj
    print(schema(op))
    print(f"  plugin:      {_describe_plugin(registry, found.plugin)}")
    outputs = "as many as its kernel returns" if op.num_outputs is None else op.num_outputs
    print(f"  promotion:   {op.promote}; saves for backward: {op.save}; outputs: {outputs}"
          + ("; view of its first input" if op.view else ""))
    print(f"  kernel:      {_where(op.generic)} (generic, every device)")
    for device_type, kernel in sorted(op.kernels.items()):
        plugin = _kernel_owner(registry, op.qualname, device_type)
        if plugin is not None:  # NOTE [ Kernels a plugin registers ... ]
            print(f"  kernel[{device_type}]: {_where(kernel)} (registered by plugin "
                  f"{_describe_plugin(registry, plugin)}; it replaces the generic kernel on {device_type})")
        else:
            print(f"  kernel[{device_type}]: {_where(kernel)} (the op's own kernel for {device_type})")
    for device_type, entry in sorted(registry.catalogue("backends").items()):
        kernel = entry.obj.kernels.get(op.qualname)
        if kernel is not None:
            print(f"  kernel[{device_type}]: {_where(kernel)} (override from backend plugin {entry.plugin!r})")
    if op.backward is None:
        print("  backward:    none (not differentiable)")
    else:
        print(f"  backward:    {_where(op.backward)} (grad_fn: {op.backward_name})")
    return 0


def suggestions(qualname, ops, limit=8):
    """Operator names close to ``qualname``: those containing its short name, then the
    near spellings (difflib), without repeats."""
    short = qualname.rpartition("::")[2]
    containing = sorted(k for k in ops if short and short in k.rpartition("::")[2])
    by_short = {}
    for key in ops:
        by_short.setdefault(key.rpartition("::")[2], []).append(key)
    near = [key for name in difflib.get_close_matches(short, list(by_short), n=limit, cutoff=0.6)
            for key in by_short[name]]
    return list(dict.fromkeys(containing + near))[:limit]


def _describe_plugin(registry, name):
    info = registry.infos.get(name)
    if info is None or info.distribution is None:
        return f"{name} (in-process)"
    return f"{name} ({info.distribution} {info.version or ''})".replace(" )", ")")


def _where(fn):
    """``file:line`` of a function, or a placeholder when Python cannot tell."""
    if fn is None:
        return "(none)"
    fn = inspect.unwrap(fn)  # a kernel installed with its fallback (functools.update_wrapper)
    try:
        return f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return repr(fn)


def add_commands(sub):
    """Add ``plugins`` and ``explain`` to the ``ember`` parser's subcommands."""
    p = sub.add_parser("plugins", help="list installed plugins and what they register")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_plugins, computes=False)
    p = sub.add_parser("explain", help="an operator's schema and where its kernels and backward live")
    p.add_argument("op", help="operator name, e.g. mul or aten::mul or example::softclamp")
    p.set_defaults(func=cmd_explain, computes=False)
