"""Elementwise fusion: a chain of elementwise ops becomes one generated kernel that
evaluates the chain in place, into one buffer.

PyTorch counterpart: torch/_inductor/scheduler.py (fusing pointwise nodes) and
torch/_inductor/codegen/cpp.py (one loop per fused group) (v2.13). ember generates a
NumPy function: each op of the chain is one ufunc call with ``out=`` the same buffer,
so ``relu(conv + residual)`` allocates nothing and passes over memory once per op
instead of allocating per op. On CuPy the chain is one ElementwiseKernel: one pass,
the intermediate values in registers.
"""

from ember.dtypes import BFLOAT16_NP, is_floating_array

# What each fusible op writes into `out`: operands are source expressions.
_EMIT = {
    "aten::add": (2, lambda a, b: [f"xp.add({a}, {b}, out=out)"]),
    "aten::sub": (2, lambda a, b: [f"xp.subtract({a}, {b}, out=out)"]),
    "aten::mul": (2, lambda a, b: [f"xp.multiply({a}, {b}, out=out)"]),
    "aten::div": (2, lambda a, b: [f"xp.true_divide({a}, {b}, out=out)"]),
    "aten::neg": (1, lambda a: [f"xp.negative({a}, out=out)"]),
    "aten::relu": (1, lambda a: [f"xp.maximum({a}, 0, out=out)"]),
    "aten::exp": (1, lambda a: [f"xp.exp({a}, out=out)"]),
    "aten::tanh": (1, lambda a: [f"xp.tanh({a}, out=out)"]),
    "aten::sqrt": (1, lambda a: [f"xp.sqrt({a}, out=out)"]),
    "aten::abs": (1, lambda a: [f"xp.absolute({a}, out=out)"]),
    "aten::sigmoid": (1, lambda a: [f"xp.negative({a}, out=out)", "xp.exp(out, out=out)", "xp.add(out, 1, out=out)",
                                    "xp.reciprocal(out, out=out)"]),
    "activation::silu": (1, lambda a: [f"t = xp.negative({a})", "xp.exp(t, out=t)", "xp.add(t, 1, out=t)",
                                       f"xp.true_divide({a}, t, out=out)"]),
}


# The same steps as CUDA C expressions of one element, for CuPy's ElementwiseKernel.
_CUDA = {
    "aten::add": lambda a, b: f"{a} + {b}",
    "aten::sub": lambda a, b: f"{a} - {b}",
    "aten::mul": lambda a, b: f"{a} * {b}",
    "aten::div": lambda a, b: f"{a} / {b}",
    "aten::neg": lambda a: f"-{a}",
    "aten::relu": lambda a: f"(({a}) > (T)0 || ({a}) != ({a}) ? ({a}) : (T)0)",  # NaN passes, as max(x, 0)
    "aten::exp": lambda a: f"exp({a})",
    "aten::tanh": lambda a: f"tanh({a})",
    "aten::sqrt": lambda a: f"sqrt({a})",
    "aten::abs": lambda a: f"fabs({a})",
    "aten::sigmoid": lambda a: f"(T)1 / ((T)1 + exp(-({a})))",
    "activation::silu": lambda a: f"({a}) / ((T)1 + exp(-({a})))",
}


def _c_literal(value):
    value = float(value)
    if value != value:
        return "(T)NAN"
    if value in (float("inf"), float("-inf")):
        return "(T)INFINITY" if value > 0 else "(T)(-INFINITY)"
    return f"(T)({value!r})"


class FusedElementwise:
    """A fused chain, callable like an op on tensors (so the graph stays runnable by
    ``GraphModule``) and, through ``function(xp)``, on arrays with ``out=``.

    ``steps`` is a list of ``(qualname, operands)``; an operand is ``("arg", i)`` (the
    fused node's i-th argument), ``("prev",)`` (the chain so far) or ``("const", value)``.
    """

    def __init__(self, steps):
        self.steps = steps
        self.__name__ = "fused_" + "_".join(q.split("::")[1] for q, _ in steps)
        self.qualname = None

    def __repr__(self):
        return f"<fused {' -> '.join(q for q, _ in self.steps)}>"

    def source(self):
        count = 1 + max([o[1] for _, ops in self.steps for o in ops if o[0] == "arg"], default=-1)
        lines = []
        for qualname, operands in self.steps:
            texts = ["out" if o[0] == "prev" else f"a{o[1]}" if o[0] == "arg" else repr(o[1]) for o in operands]
            lines += _EMIT[qualname][1](*texts)
        params = ", ".join([f"a{i}" for i in range(count)] + ["out"])
        return f"def {self.__name__}({params}):\n" + "".join(f"    {line}\n" for line in lines) + "    return out\n"

    def function(self, xp):
        """The chain as a function ``f(*arrays, out=)``: one CuPy ElementwiseKernel (one GPU
        kernel per chain) on CuPy, the generated ufunc calls of ``source()`` otherwise."""
        if getattr(xp, "ElementwiseKernel", None) is not None:
            return self._cuda_function(xp)
        namespace = {"xp": xp}
        exec(compile(self.source(), f"<ember.compile {self.__name__}>", "exec"), namespace)
        return namespace[self.__name__]

    def cuda_source(self):
        """``(in_params, operation)`` of the chain's ElementwiseKernel: one value ``v``
        carried through the steps in registers."""
        count = 1 + max([o[1] for _, ops in self.steps for o in ops if o[0] == "arg"], default=-1)
        lines = []
        for position, (qualname, operands) in enumerate(self.steps):
            texts = ["v" if o[0] == "prev" else f"a{o[1]}" if o[0] == "arg" else _c_literal(o[1])
                     for o in operands]
            lines.append(("T v = " if position == 0 else "v = ") + _CUDA[qualname](*texts) + ";")
        lines.append("out = v;")
        return ", ".join(f"T a{i}" for i in range(count)), " ".join(lines)

    def _cuda_function(self, xp):
        if getattr(self, "_kernel", None) is None:
            params, operation = self.cuda_source()
            self._kernel = xp.ElementwiseKernel(params, "T out", operation, self.__name__)
        kernel = self._kernel

        def run(*arrays, out):
            return kernel(*arrays, out)
        return run

    def __call__(self, *tensors):
        from ember.dispatcher import _wrap
        from ember.tensor import Tensor

        first = next(t for t in tensors if isinstance(t, Tensor))
        xp = first._device.backend.xp
        arrays = [t._data if isinstance(t, Tensor) else t for t in tensors]
        shape = xp.broadcast_shapes(*[a.shape for a in arrays if hasattr(a, "shape")])
        dtype = first._data.dtype
        like = next((a for a in arrays if getattr(a, "shape", None) == shape and a.dtype == dtype), None)
        # the layout of an operand of the result's shape (NOTE [ Pixel-major activations in the compiled program ])
        out = xp.empty(shape, dtype) if like is None else xp.empty_like(like)
        return _wrap(self.function(xp)(*arrays, out=out), first._device)

    def inplace_operand(self, node, values):
        """The index of an argument the chain may overwrite (NOTE [ The compiled program ]),
        or None."""
        from ember.compiler.executor import _alias_roots

        roots = _alias_roots(node.graph, values)
        result = values[node]
        first_operands = {o[1] for o in self.steps[0][1] if o[0] == "arg"}
        for i in sorted(first_operands):
            source = node.args[i]
            array = values.get(source)
            if (source.op == "call_function" and len(source.users) == 1 and node.args.count(source) == 1
                    and _uses(self.steps[1:], i) == 0 and roots[source] is source
                    and getattr(array, "shape", None) == result.shape and array.dtype == result.dtype
                    and getattr(array.flags, "writeable", True)):
                return i
        return None


def _uses(steps, index):
    return sum(1 for _, ops in steps for o in ops if o == ("arg", index))


def fuse_elementwise(graph, values):
    """Replace every chain of fusible ops by one ``FusedElementwise`` node (a chain of one
    still gains: it may write into its operand instead of allocating).
    ``values`` are the nodes' arrays on example inputs (shapes and dtypes); returns how
    many chains were fused."""
    fused = 0
    erased = set()
    for node in graph.nodes:
        if node in erased or not _fusible(node, values):
            continue
        if any(_fusible(n, values) and _links(n, node, values) for n in node.all_input_nodes):
            continue  # not the head of a chain
        chain = [node]
        while True:
            users = list(chain[-1].users)
            if len(users) != 1 or not _fusible(users[0], values) or not _links(chain[-1], users[0], values):
                break
            chain.append(users[0])
        values[_replace(graph, chain)] = values[chain[-1]]  # later chains read its shape and dtype
        erased.update(chain)
        fused += 1
    return fused


def _fusible(node, values):
    qualname = getattr(node.target, "qualname", None) if node.op == "call_function" else None
    if qualname not in _EMIT or node.kwargs or len(node.args) != _EMIT[qualname][0]:
        return False
    result = values.get(node)
    # floating results only, and not bfloat16: its ops compute in float32 and round
    # each result (NOTE [ bfloat16 ] in dtypes.py), which a fused kernel would skip
    if getattr(result, "dtype", None) is None or not is_floating_array(result.dtype) or result.dtype == BFLOAT16_NP:
        return False
    for a in node.args:  # every tensor operand already in the result's dtype: no casts inside
        if hasattr(a, "op") and getattr(values.get(a), "dtype", None) != result.dtype:
            return False
        if not hasattr(a, "op") and not isinstance(a, (int, float)) or isinstance(a, bool):
            return False
    return True


def _links(producer, consumer, values):
    """``consumer`` can continue ``producer``'s chain: it is the only reader, reads it once,
    and the chain's buffer (the consumer's shape) can hold the producer's value."""
    return (len(producer.users) == 1 and consumer.args.count(producer) == 1
            and values[producer].shape == values[consumer].shape)


def _replace(graph, chain):
    args = []
    steps = []
    for position, node in enumerate(chain):
        operands = []
        for a in node.args:
            if position > 0 and a is chain[position - 1]:
                operands.append(("prev",))
            elif hasattr(a, "op"):
                if a not in args:
                    args.append(a)
                operands.append(("arg", args.index(a)))
            else:
                operands.append(("const", a))
        steps.append((node.target.qualname, operands))
    with graph.inserting_before(chain[-1]):
        new = graph.call_function(FusedElementwise(steps), tuple(args))
    chain[-1].replace_all_uses_with(new)
    for node in reversed(chain):
        graph.erase_node(node)
    return new
