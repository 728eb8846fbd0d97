"""The plugin commands of the ``ember`` CLI: ``ember plugins`` and ``ember explain OP``.

PyTorch counterpart: none (``python -m torch.utils.collect_env`` is the closest); the
shape follows datasette's and llm's ``plugins`` commands. ember/cli.py adds them with
``add_commands``.

    $ ember plugins            # name, distribution, version, status, what each registered
    $ ember plugins --json
    $ ember explain mul        # schema, and the file:line of its kernels and backward
"""

import inspect
import json
import sys


def cmd_plugins(args):
    from ember.plugins import list_plugins

    infos = [info.as_dict() for info in list_plugins()]
    if args.json:
        print(json.dumps(infos, indent=2))
        return 0
    print(f"{'name':<16} {'distribution':<22} {'version':<10} status")
    for info in infos:
        dist = info["distribution"] or "(in-process)"
        print(f"{info['name']:<16} {dist:<22} {info['version'] or '-':<10} {info['status']}")
        if info["error"]:
            print(f"    error: {info['error']}")
        for catalogue, names in info["registered"].items():
            if catalogue == "backends":
                names = [_backend_status(name) for name in names]
            shown = ", ".join(names[:8]) + (f", ... ({len(names)} in all)" if len(names) > 8 else "")
            print(f"    {catalogue}: {shown}")
    return 0


def _backend_status(device_type):
    """``"cuda"``, or ``"cuda (unavailable: <why>)"`` for a backend that cannot be used here."""
    from ember.plugins import registry

    backend = registry.find_backend(device_type)
    if backend is None or backend.is_available():
        return device_type
    return f"{device_type} (unavailable: {backend.unavailable_reason() or 'no device'})"


def cmd_explain(args):
    from ember.library import schema
    from ember.plugins import registry

    registry.plugin_infos()  # discovery, and the distributions' versions
    ops = registry.catalogue("ops")
    qualname = args.op if "::" in args.op else f"aten::{args.op}"
    found = ops.get(qualname)
    if found is None:
        close = sorted(k for k in ops if args.op.split("::")[-1] in k)[:10]
        hint = f"; did you mean: {', '.join(close)}" if close else ""
        print(f"ember explain: no operator named {qualname!r}{hint}", file=sys.stderr)
        return 1
    op = found.obj
    print(schema(op))
    print(f"  plugin:      {_describe_plugin(registry, found.plugin)}")
    print(f"  promotion:   {op.promote}; saves for backward: {op.save}; outputs: {op.num_outputs}"
          + ("; view of its first input" if op.view else ""))
    print(f"  kernel:      {_where(op.generic)} (generic, every device)")
    for device_type, kernel in sorted(op.kernels.items()):
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


def _describe_plugin(registry, name):
    info = registry.infos.get(name)
    if info is None or info.distribution is None:
        return f"{name} (in-process)"
    return f"{name} ({info.distribution} {info.version or ''})".replace(" )", ")")


def _where(fn):
    """``file:line`` of a function, or a placeholder when Python cannot tell."""
    if fn is None:
        return "(none)"
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
