"""``Node``: one instruction of an fx ``Graph``, and ``map_arg`` over nested arguments.

PyTorch counterpart: torch/fx/node.py (v2.13).

A node has an opcode (one of the six below), a target (what it runs), ``args`` and
``kwargs`` that may hold other nodes (inside tuples, lists, dicts and slices), the
set of nodes that use it (``users``), and ``meta`` for passes (``ShapeProp`` fills
``meta["tensor_meta"]``). ember keeps the nodes of a graph in a Python list instead of
PyTorch's doubly linked list: the graph is small and a reader follows a list at once.
"""

import builtins
import operator

OPCODES = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


class Node:
    """One instruction: ``name = target(*args, **kwargs)`` run the way ``op`` says.

    Args:
        graph: the ``Graph`` that owns the node.
        name: a unique Python identifier, the variable of the generated code.
        op: one of ``placeholder``, ``get_attr``, ``call_function``, ``call_method``,
            ``call_module``, ``output``.
        target: the argument name (placeholder), a dotted attribute path (get_attr,
            call_module), a callable (call_function) or a method name (call_method).
    """

    def __init__(self, graph, name, op, target, args, kwargs, type_expr=None):
        if op not in OPCODES:
            raise ValueError(f"unknown fx opcode {op!r}; expected one of {', '.join(OPCODES)}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = type_expr  # an annotation the tracer passed on (torch's Node.type), unused by ember
        self.users = {}  # dict used as an ordered set
        self.meta = {}
        self._args = ()
        self._kwargs = {}
        self._input_nodes = {}
        self._update_args_kwargs(tuple(args), dict(kwargs))

    # --- arguments and use lists ---------------------------------------------------
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, value):
        self._update_args_kwargs(tuple(value), self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value):
        self._update_args_kwargs(self._args, dict(value))

    @property
    def all_input_nodes(self):
        """The nodes this node reads, in the order they first appear in its arguments."""
        return list(self._input_nodes)

    def _update_args_kwargs(self, args, kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        self._input_nodes = {}
        map_arg((args, kwargs), self._input_nodes.setdefault)
        for new in self._input_nodes:
            new.users.setdefault(self)

    def replace_all_uses_with(self, replace_with):
        """Make every user of this node read ``replace_with`` instead; returns the users."""
        users = list(self.users)
        for user in users:
            user._update_args_kwargs(*map_arg((user.args, user.kwargs),
                                             lambda n: replace_with if n is self else n))
        return users

    def replace_input_with(self, old, new):
        self._update_args_kwargs(*map_arg((self.args, self.kwargs), lambda n: new if n is old else n))

    # --- reading ---------------------------------------------------------------------
    def is_impure(self):
        """Placeholders and outputs are never dead code; everything else in ember's graphs is pure
        (in-place ops are recorded as an out-of-place op plus a rebinding, see ember/jit)."""
        return self.op in ("placeholder", "output")

    def format_node(self):
        """One line for ``print(graph)``, like PyTorch's."""
        if self.op == "placeholder":
            return f"%{self.name} : [num_users={len(self.users)}] = placeholder[target={self.target}]"
        if self.op == "output":
            return f"return {_format(self.args[0])}"
        return (f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={target_name(self.target)}]"
                f"(args = {_format(self.args)}, kwargs = {_format(self.kwargs)})")

    def __repr__(self):
        return self.name


def target_name(target):
    """A readable name for a node's target: a qualified name for functions and ops."""
    if isinstance(target, str):
        return target
    qualname = getattr(target, "qualname", None)  # an ember op: aten::convolution
    if isinstance(qualname, str) and "::" in qualname:
        return qualname
    from ember.fx.graph import _ember_path

    path = _ember_path(target)  # ember.relu, as PyTorch prints torch.relu
    if path is not None:
        return path
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    if module in (None, "builtins", "_operator", "operator"):
        return f"{'operator' if module in ('_operator', 'operator') else 'builtins'}.{name}"
    return f"{module}.{name}"


def _format(value):
    if isinstance(value, Node):
        return f"%{value.name}"
    if isinstance(value, tuple):
        inner = ", ".join(_format(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_format(v)}" for k, v in value.items()) + "}"
    return repr(value)


def map_arg(value, fn):
    """Apply ``fn`` to every ``Node`` inside ``value`` (nested tuples, lists, dicts, slices)."""
    return map_aggregate(value, lambda x: fn(x) if isinstance(x, Node) else x)


def map_aggregate(value, fn):
    """Apply ``fn`` to every leaf of ``value``, rebuilding tuples, lists, dicts and slices."""
    if isinstance(value, tuple):
        mapped = tuple(map_aggregate(v, fn) for v in value)
        return type(value)(*mapped) if hasattr(value, "_fields") else mapped  # namedtuples keep their type
    if isinstance(value, list):
        return [map_aggregate(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_aggregate(v, fn) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(map_aggregate(value.start, fn), map_aggregate(value.stop, fn), map_aggregate(value.step, fn))
    return fn(value)


# The Python operators a Proxy records, with the infix form the generated code uses.
MAGIC_METHODS = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "truediv": "{} / {}", "floordiv": "{} // {}",
    "mod": "{} % {}", "pow": "{} ** {}", "matmul": "{} @ {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "lshift": "{} << {}", "rshift": "{} >> {}",
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "le": "{} <= {}", "gt": "{} > {}", "ge": "{} >= {}",
}
UNARY_METHODS = {"neg": "-{}", "pos": "+{}", "invert": "~{}", "abs": "abs({})"}
INFIX = {getattr(operator, name): pattern for name, pattern in {**MAGIC_METHODS, **UNARY_METHODS}.items()}
GETITEM = operator.getitem
GETATTR = builtins.getattr
