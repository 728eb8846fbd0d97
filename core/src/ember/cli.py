"""The ``ember`` command: ``ember plugins``, ``ember explain OP``.

PyTorch counterpart: none (``python -m torch.utils.collect_env`` is the closest); the
shape follows datasette's and llm's ``plugins`` commands.
"""

import argparse
import json
import sys


def cmd_plugins(args):
    from ember.plugins import list_plugins

    infos = [info.as_dict() for info in list_plugins()]
    if args.json:
        print(json.dumps(infos, indent=2))
        return 0
    for info in infos:
        version = info["version"] or "-"
        dist = info["distribution"] or "(in-process)"
        print(f"{info['name']:<16} {dist:<22} {version:<10} {info['status']}")
        if info["error"]:
            print(f"    error: {info['error']}")
        for catalogue, names in info["registered"].items():
            shown = ", ".join(names[:8]) + (f", ... ({len(names)} in all)" if len(names) > 8 else "")
            print(f"    {catalogue}: {shown}")
    return 0


def cmd_explain(args):
    from ember.plugins import registry

    ops = registry.catalogue("ops")
    name = args.op if "::" in args.op else f"aten::{args.op}"
    found = ops.get(name)
    if found is None:
        close = sorted(k for k in ops if args.op in k)[:10]
        print(f"no operator named {name!r}" + (f"; did you mean: {', '.join(close)}" if close else ""),
              file=sys.stderr)
        return 1
    op, plugin = found[0], found[1]
    print(f"{op.qualname}  (plugin: {plugin})")
    print(f"  promotion: {op.promote}; saves for backward: {op.save}; outputs: {op.num_outputs}"
          f"{'; view' if op.view else ''}")
    for role, where in op.source().items():
        print(f"  {role:<12} {where[0]}:{where[1]}" if where else f"  {role:<12} (none)")
    for dev_type in sorted(registry.catalogue("backends")):
        backend = registry.catalogue("backends")[dev_type][0]
        if op.qualname in backend.kernels:
            kernel = backend.kernels[op.qualname]
            from ember.dispatcher import _where

            where = _where(kernel)
            print(f"  kernel on {dev_type} (backend override): {where[0]}:{where[1]}" if where else "")
    if op.backward is None:
        print("  not differentiable")
    else:
        print(f"  grad_fn name: {op.backward_name}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="ember", description="ember: a small PyTorch-like framework")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plugins", help="list installed plugins and what they register")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_plugins)
    p = sub.add_parser("explain", help="where an operator and its backward are implemented")
    p.add_argument("op", help="operator name, e.g. mul or aten::mul or mylib::softclamp")
    p.set_defaults(func=cmd_explain)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
