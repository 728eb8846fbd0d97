"""``ember.compile(module)``: capture a module's forward as an op graph, optimise it, and
run it straight against the backend's arrays, for inference.

PyTorch counterpart: torch/__init__.py (``torch.compile``) and torch/_dynamo/eval_frame.py
(``OptimizedModule``) (v2.13). ember captures with ``ember.jit.trace`` (one graph per
input signature: shapes, dtypes, device), runs the passes of ember/compiler/passes, and
executes the result with ember/compiler/executor.py. Unlike torch.compile, the compiled
module is for inference only: its outputs carry no autograd history, and the weights are
frozen at compile time (a model changed afterwards must be compiled again).
"""

import warnings

from ember.nn import Module


class CompiledModule(Module):
    """What ``ember.compile`` returns: call it like the module. ``programs`` maps each input
    signature to its compiled ``Program`` (``program.source`` is the generated code)."""

    def __init__(self, module, passes=True, winograd=False):
        super().__init__()
        self._orig_mod = module
        object.__setattr__(self, "winograd", winograd)
        object.__setattr__(self, "programs", {})
        object.__setattr__(self, "graphs", {})
        object.__setattr__(self, "use_passes", passes)
        object.__setattr__(self, "fallback_reason", None)

    def forward(self, *inputs):
        from ember.tensor import Tensor

        if self.fallback_reason is not None:
            return self._orig_mod(*inputs)
        reason = _why_not(self._orig_mod, inputs)
        if reason is not None:
            return self._fall_back(reason, inputs)
        key = tuple((tuple(x.shape), x.dtype, str(x.device)) if isinstance(x, Tensor) else ("const", x)
                    for x in inputs)
        program = self.programs.get(key)
        if program is None:
            try:
                program = self._compile(inputs)
            except Exception as e:  # anything capture or planning cannot handle: run eagerly
                return self._fall_back(f"{type(e).__name__}: {e}", inputs)
            self.programs[key] = program
        return program.run(*[x._data for x in inputs])

    def _compile(self, inputs):
        from ember.autograd.grad_mode import no_grad
        from ember.compiler.capture import capture
        from ember.compiler.executor import Program

        with no_grad():
            graph, attributes = capture(self._orig_mod, inputs)
            if self.use_passes:
                optimise(graph, attributes, inputs, winograd=self.winograd)
            program = Program(graph, attributes, inputs, inputs[0].device)
        self.graphs[program] = graph
        return program

    def _fall_back(self, reason, inputs):
        name = type(self._orig_mod).__name__
        warnings.warn(f"ember.compile: cannot compile {name} ({reason}); running it eagerly", RuntimeWarning,
                      stacklevel=3)
        object.__setattr__(self, "fallback_reason", reason)
        return self._orig_mod(*inputs)


def optimise(graph, attributes, inputs, winograd=False):
    """The pass pipeline, in place: dead code, constants, conv-bn, (Winograd kernels,) fusion."""
    from ember.compiler.executor import _plan_run
    from ember.compiler.passes import eliminate_dead_code, fold_constants, fold_conv_bn, fuse_elementwise, use_winograd

    eliminate_dead_code(graph)
    fold_constants(graph, attributes)
    fold_conv_bn(graph, attributes)
    if winograd:
        use_winograd(graph, attributes)
    fuse_elementwise(graph, _plan_run(graph, attributes, inputs))
    graph.lint()


def _why_not(module, inputs):
    from ember.tensor import Tensor

    if not inputs or not all(isinstance(x, Tensor) for x in inputs):
        return "only tensor arguments can be compiled"
    if isinstance(module, Module) and module.training:
        return ("ember.compile is for inference and the module is in training mode (batch statistics and "
                "dropout would be frozen into the graph): call module.eval() first")
    return None


def compile(model, *, passes=True, winograd=False):
    """Compile ``model`` (a Module) for inference; returns a ``CompiledModule``.

    Args:
        model: the module to compile; it is captured on its first call, per input signature.
        passes: run the optimisation passes (set False to run the plain captured graph).
        winograd: compute 3x3 stride-1 convolutions with Winograd F(2x2, 3x3)
            (passes/winograd.py); off by default, as it measured no faster than the
            direct kernel on NumPy for CIFAR-sized layers (see bench/compile_infer.py).

    >>> import ember
    >>> fast = ember.compile(ember.nn.Sequential(ember.nn.Linear(3, 3), ember.nn.ReLU()).eval())
    >>> fast(ember.ones(2, 3)).shape
    ember.Size([2, 3])
    """
    if not isinstance(model, Module):
        raise TypeError(f"ember.compile expects an ember.nn.Module, got {type(model).__name__}")
    return CompiledModule(model, passes, winograd)
