"""``Proxy``: the stand-in value a symbolic trace passes through ``forward``; every
operation on it records a node instead of computing.

PyTorch counterpart: torch/fx/proxy.py (v2.13): ``Proxy``, ``Attribute``,
``TraceError`` and the magic methods that record ``operator.*`` calls. PyTorch routes
``torch.relu(proxy)`` through ``__torch_function__``; ember has no such protocol, so
the tracer wraps ember's functions while it runs (ember/fx/_symbolic_trace.py).
"""

import dis
import inspect
import operator

from ember.fx.node import MAGIC_METHODS, UNARY_METHODS

_NONE = object()

# Tensor attributes and methods that a trace with example inputs answers from the
# example instead of recording (NOTE [ Tracing with example inputs ]).
_SHAPE_QUERIES = frozenset(("shape", "ndim", "dtype", "device", "is_cuda", "dim", "size", "numel", "ndimension"))


class TraceError(ValueError):
    """A program cannot be traced symbolically (control flow or iteration on a Proxy)."""


class Proxy:
    """A value under symbolic trace: ``node`` is what it stands for, ``tracer`` records."""

    def __init__(self, node, tracer):
        self.node = node
        self.tracer = tracer

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, name):
        if name.startswith("__"):  # copy/pickle/inspect probes are not tensor attributes
            raise AttributeError(name)
        example = self.node.meta.get("example_value", _NONE) if name in _SHAPE_QUERIES else _NONE
        if example is not _NONE:
            return getattr(example, name)  # specialised on the example (NOTE [ Tracing with example inputs ])
        return Attribute(self, name)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __getitem__(self, index):
        return self.tracer.create_proxy("call_function", operator.getitem, (self, index), {})

    def __bool__(self):
        example = self.node.meta.get("example_value", _NONE)
        if example is not _NONE:
            return bool(example)
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def __len__(self):
        example = self.node.meta.get("example_value", _NONE)
        if example is not _NONE:
            return len(example)
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call ember.fx.wrap('len') at module scope")

    def __iter__(self):
        # `a, b = proxy`: the calling frame is unpacking a known number of values,
        # read from its bytecode (what PyTorch does too); any other iteration has no length.
        example = self.node.meta.get("example_value", _NONE)
        if example is not _NONE:
            return (self[i] for i in range(len(example)))
        frame = inspect.currentframe().f_back
        for instruction in dis.get_instructions(frame.f_code):
            if instruction.offset == frame.f_lasti and instruction.opname == "UNPACK_SEQUENCE":
                return (self[i] for i in range(instruction.argval))
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
                         "or as a *args or **kwargs function argument. See the ember.fx docs on "
                         "symbolic tracing for a detailed explanation of what types of control flow can be traced, "
                         "and check out the Proxy docstring for help troubleshooting Proxy iteration errors")


class Attribute(Proxy):
    """``proxy.name``: becomes a ``call_method`` node when called, a ``getattr`` node when used."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        # Made lazily: `x.relu()` needs only the call_method node, not a getattr one.
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _binary(name):
    target = getattr(operator, name)

    def method(self, other):
        return self.tracer.create_proxy("call_function", target, (self, other), {})

    def reflected(self, other):
        return self.tracer.create_proxy("call_function", target, (other, self), {})
    return method, reflected


def _unary(name):
    target = getattr(operator, name)

    def method(self):
        return self.tracer.create_proxy("call_function", target, (self,), {})
    return method


_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")

for _name in MAGIC_METHODS:
    _dunder = _name.rstrip("_")
    _method, _reflected = _binary(_name)
    setattr(Proxy, f"__{_dunder}__", _method)
    if _name not in _COMPARISONS:
        setattr(Proxy, f"__r{_dunder}__", _reflected)
for _name in UNARY_METHODS:
    setattr(Proxy, f"__{_name}__", _unary(_name))
