"""``Graph``: the ordered list of ``Node``s an fx trace records, and the Python code
generated from it.

PyTorch counterpart: torch/fx/graph.py (v2.13): ``Graph`` (create_node and the six
opcode helpers, inserting_before/after, erase_node, eliminate_dead_code, lint,
print_tabular) and ``CodeGen`` (``python_code``). ember generates one plain function,
``def forward(self, x): ...``, whose globals hold only ``ember`` and the callables the
graph names; PyTorch's pytree codegen and custom CodeGen subclasses are left out.
"""

import builtins
import contextlib
import keyword
import math
import re

from ember.fx.node import GETATTR, GETITEM, INFIX, Node, map_arg, target_name

_NO_DEFAULT = object()


class Graph:
    """Nodes in execution order; ``output`` last. See NOTE [ fx graphs and their code ]."""

    def __init__(self):
        self._nodes = []
        self._names = set()
        self._insert_at = None  # None: append; else the index the next node takes

    @property
    def nodes(self):
        return list(self._nodes)

    def __len__(self):
        return len(self._nodes)

    # --- building ----------------------------------------------------------------------
    def create_node(self, op, target, args=(), kwargs=None, name=None, type_expr=None):
        node = Node(self, self._unique_name(name or _candidate_name(op, target)), op, target, args, kwargs or {},
                    type_expr)
        if self._insert_at is None:
            self._nodes.append(node)
        else:
            self._nodes.insert(self._insert_at, node)
            self._insert_at += 1
        return node

    def placeholder(self, name, default_value=_NO_DEFAULT):
        node = self.create_node("placeholder", name, name=name)
        if default_value is not _NO_DEFAULT:
            node.args = (default_value,)
        return node

    def get_attr(self, qualified_name):
        return self.create_node("get_attr", qualified_name)

    def call_module(self, module_name, args=(), kwargs=None):
        return self.create_node("call_module", module_name, args, kwargs)

    def call_method(self, method_name, args=(), kwargs=None):
        return self.create_node("call_method", method_name, args, kwargs)

    def call_function(self, the_function, args=(), kwargs=None):
        return self.create_node("call_function", the_function, args, kwargs)

    def output(self, result):
        return self.create_node("output", "output", (result,), name="output")

    def node_copy(self, node, arg_transform=lambda n: n):
        """A copy of ``node`` (from any graph) in this one, its inputs mapped by ``arg_transform``."""
        args, kwargs = map_arg((node.args, node.kwargs), arg_transform)
        copy = self.create_node(node.op, node.target, args, kwargs, name=node.name)
        copy.meta = dict(node.meta)
        return copy

    def graph_copy(self, other, value_remap):
        """Copy every node of ``other`` but its output into this graph; returns the output's value."""
        for node in other._nodes:
            if node.op == "output":
                return map_arg(node.args[0], lambda n: value_remap[n])
            value_remap[node] = self.node_copy(node, lambda n: value_remap[n])
        return None

    @contextlib.contextmanager
    def inserting_before(self, node):
        saved = self._insert_at
        self._insert_at = self._nodes.index(node)
        try:
            yield
        finally:
            self._insert_at = saved

    @contextlib.contextmanager
    def inserting_after(self, node):
        saved = self._insert_at
        self._insert_at = self._nodes.index(node) + 1
        try:
            yield
        finally:
            self._insert_at = saved

    def erase_node(self, node):
        if node.users:
            raise RuntimeError(f"Tried to erase Node {node} but it still had {len(node.users)} users in the graph: "
                               f"{dict(node.users)}!")
        index = self._nodes.index(node)
        node._update_args_kwargs((), {})
        del self._nodes[index]
        self._names.discard(node.name)
        if self._insert_at is not None and index < self._insert_at:
            self._insert_at -= 1

    def eliminate_dead_code(self):
        """Remove the nodes whose value nobody reads (walking backwards, so chains go at once);
        returns whether anything changed."""
        changed = False
        for node in reversed(self._nodes):
            if not node.users and not node.is_impure():
                self.erase_node(node)
                changed = True
        return changed

    def find_nodes(self, *, op, target=None):
        return [n for n in self._nodes if n.op == op and (target is None or n.target == target)]

    def lint(self):
        """Check the invariants: unique names, inputs defined before use, one output, last."""
        seen = set()
        names = set()
        for node in self._nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for used in node.all_input_nodes:
                if used not in seen:
                    raise RuntimeError(f"Argument '{used}' of Node '{node}' was used before it has been defined!")
            seen.add(node)
        outputs = [n for n in self._nodes if n.op == "output"]
        if len(outputs) != 1 or self._nodes[-1] is not outputs[0]:
            raise RuntimeError("a Graph must end with exactly one output node")

    # --- reading -----------------------------------------------------------------------
    def __str__(self):
        placeholders = ", ".join(n.name for n in self._nodes if n.op == "placeholder")
        body = "\n".join("    " + n.format_node() for n in self._nodes)
        return f"graph({placeholders}):\n{body}"

    def tabular(self):
        """The rows ``print_tabular`` shows: opcode, name, target, args, kwargs."""
        return [[n.op, n.name, target_name(n.target), _plain(n.args), _plain(n.kwargs)] for n in self._nodes]

    def print_tabular(self):
        """Print the graph as a table (PyTorch prints it with ``tabulate``; ember pads columns itself)."""
        rows = [["opcode", "name", "target", "args", "kwargs"]] + [[str(c) for c in r] for r in self.tabular()]
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        print("\n".join(lines))

    def python_code(self, root_module="self"):
        """``(source, globals)`` of ``def forward(self, ...)`` computing this graph."""
        return _CodeGen(self, root_module).generate()

    def _unique_name(self, candidate):
        base = _sanitize(candidate)
        name, i = base, 0
        while name in self._names:
            i += 1
            name = f"{base}_{i}"
        self._names.add(name)
        return name


# NOTE [ fx graphs and their code ]
# A Graph is data: six kinds of instruction over named values. `python_code` turns it
# into the source of one function, a line per node, read by people (GraphModule.code)
# and run by Python (GraphModule.forward is that source, compiled). Like PyTorch, a value
# is dropped (`x = None`) right after its last use, so a long graph does not keep every
# activation alive until it returns.


def _candidate_name(op, target):
    if op in ("get_attr", "call_module"):
        return target.replace(".", "_")
    if op == "call_method" or isinstance(target, str):
        return target
    qualname = getattr(target, "qualname", None)
    if isinstance(qualname, str) and "::" in qualname:
        return qualname.split("::")[1].split(".")[0]
    return getattr(target, "__name__", "fn")


_BUILTIN_NAMES = set(dir(builtins)) | {"self", "ember", "inf", "nan"}


def _sanitize(candidate):
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", str(candidate)).strip("_") or "_"
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower() if not name.islower() else name
    if name[0].isdigit():
        name = "_" + name
    if keyword.iskeyword(name) or name in _BUILTIN_NAMES:
        name = name + "_1"
    return name


def _plain(value):
    return map_arg(value, lambda n: n.name)


class _CodeGen:
    """Writes the source of ``forward`` from a graph (NOTE [ fx graphs and their code ])."""

    def __init__(self, graph, root_module):
        self.graph = graph
        self.root = root_module
        self.globals = {}
        self.taken = {n.name for n in graph._nodes} | {root_module}

    def generate(self):
        import ember

        self.globals["ember"] = ember
        params = []
        body = []
        last_use = self._last_uses()
        for node in self.graph._nodes:
            if node.op == "placeholder":
                default = f" = {self.arg(node.args[0])}" if node.args else ""
                params.append(node.target + default)
                if node.name != node.target:  # `input` keeps its name; the value is `input_1`
                    body.append(f"{node.name} = {node.target}")
                continue
            body.append(self.line(node))
            dead = [n.name for n in last_use.get(node, [])]
            if dead and node.op != "output":
                body[-1] += "; " + " = ".join(dead) + " = None"
        signature = ", ".join([self.root] + params)
        source = f"def forward({signature}):\n" + "\n".join("    " + line for line in body or ["pass"]) + "\n"
        return source, self.globals

    def _last_uses(self):
        last = {}
        for node in self.graph._nodes:
            for used in node.all_input_nodes:
                last[used] = node
        by_user = {}
        for used, user in last.items():
            by_user.setdefault(user, []).append(used)
        return by_user

    def line(self, node):
        if node.op == "output":
            return f"return {self.arg(node.args[0])}"
        if node.op == "get_attr":
            return f"{node.name} = {self.attribute_path(node.target)}"
        args = [self.arg(a) for a in node.args] + [f"{k} = {self.arg(v)}"
                                                   for k, v in node.kwargs.items()]
        if node.op == "call_module":
            return f"{node.name} = {self.attribute_path(node.target)}({', '.join(args)})"
        if node.op == "call_method":
            return f"{node.name} = {args[0]}.{node.target}({', '.join(args[1:])})"
        return f"{node.name} = {self.call(node, args)}"

    def call(self, node, args):
        target = node.target
        if target in INFIX and len(args) == INFIX[target].count("{}") and not node.kwargs:
            return INFIX[target].format(*args)
        if target is GETITEM and len(args) == 2:
            return f"{args[0]}[{self.index(node.args[1])}]"
        if target is GETATTR and len(args) == 2 and isinstance(node.args[1], str) and node.args[1].isidentifier():
            return f"{args[0]}.{node.args[1]}"
        return f"{self.callable_name(target)}({', '.join(args)})"

    def index(self, value):
        if isinstance(value, tuple) and value:
            return ", ".join(self.index(v) for v in value)
        if isinstance(value, slice):
            parts = ["" if p is None else self.arg(p) for p in (value.start, value.stop, value.step)]
            return ":".join(parts[:2]) + (f":{parts[2]}" if value.step is not None else "")
        return self.arg(value)

    def callable_name(self, target):
        path = _ember_path(target)
        if path is not None:
            return path
        name = _sanitize(getattr(target, "__name__", "fn"))
        alias, i = name, 0
        while alias in self.taken or (alias in self.globals and self.globals[alias] is not target):
            i += 1
            alias = f"{name}_{i}"
        self.globals[alias] = target
        return alias

    def attribute_path(self, qualified):
        parts = [self.root]
        for atom in qualified.split("."):
            if atom.isidentifier() and not keyword.iskeyword(atom):
                parts.append("." + atom)
            else:
                parts = [f"getattr({''.join(parts)}, {atom!r})"]
        return "".join(parts)

    def arg(self, value):
        if isinstance(value, Node):
            return value.name
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            inner = ", ".join(self.arg(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, list):
            return "[" + ", ".join(self.arg(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{self.arg(k)}: {self.arg(v)}" for k, v in value.items()) + "}"
        if isinstance(value, slice):
            return f"slice({self.arg(value.start)}, {self.arg(value.stop)}, {self.arg(value.step)})"
        if isinstance(value, float) and not math.isfinite(value):
            return f"float({str(value)!r})"
        if value is None or value is Ellipsis or isinstance(value, (bool, int, float, str, complex)):
            return repr(value)
        return self.constant(value)

    def constant(self, value):
        import ember

        if isinstance(value, ember.dtype):
            return repr(value)  # ember.float32
        if isinstance(value, ember.device):
            return f"ember.device({str(value)!r})"
        path = _ember_path(value)
        if path is not None:
            return path
        name = "_" + _sanitize(type(value).__name__)
        alias, i = name, 0
        while alias in self.taken or (alias in self.globals and self.globals[alias] is not value):
            i += 1
            alias = f"{name}_{i}"
        self.globals[alias] = value
        return alias


def _ember_path(target):
    """``ember.ops.aten.mul``, ``ember.relu`` or ``ember.nn.functional.gelu`` when that
    name reaches ``target``; None otherwise (the code then names it through its globals)."""
    import ember

    qualname = getattr(target, "qualname", None)
    if isinstance(qualname, str) and "::" in qualname:
        namespace, name = qualname.split("::")
        if name.isidentifier() and getattr(getattr(ember.ops, namespace), name, None) is target:
            return f"ember.ops.{namespace}.{name}"
        return None
    name = getattr(target, "__name__", None)
    if not isinstance(name, str) or not name.isidentifier():
        return None
    for path, namespace in (("ember", ember), ("ember.nn.functional", ember.nn.functional)):
        try:
            found = getattr(namespace, name)
        except Exception:  # a catalogue name whose plugin is missing
            continue
        if _original(found) is target:
            return f"{path}.{name}"
    return None


def _original(fn):
    # While a trace runs, ember's functions are wrapped (ember/fx/_symbolic_trace.py);
    # the wrapper keeps the original in __fx_original__.
    return getattr(fn, "__fx_original__", fn)
