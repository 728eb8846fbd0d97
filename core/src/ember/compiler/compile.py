"""``ember.compile(module)``: capture a module's forward as an op graph, optimise it, and
run it straight against the backend's arrays, for inference.

PyTorch counterpart: torch/__init__.py (``torch.compile``) and torch/_dynamo/eval_frame.py
(``OptimizedModule``) (v2.13). ember captures with ``ember.jit.trace`` (one graph per
input signature: shapes, dtypes, device), runs the passes of ember/compiler/passes, and
executes the result with ember/compiler/executor.py. Unlike torch.compile, the compiled
module is for inference only: a module in training mode runs eagerly, the outputs carry
no autograd history, and the program holds the tensors it captured, so a parameter
replaced afterwards, or a batch norm folded into its convolution, is not seen until the
model is compiled again. There are no guards but the input signature and no graph
breaks: what cannot be captured runs eagerly as a whole.
"""

import warnings

from ember.nn import Module


class CompiledModule(Module):
    """What ``ember.compile`` returns: call it like the module. ``programs`` maps each input
    signature to its compiled ``Program`` (``program.source`` is the generated code)."""

    def __init__(self, module, passes=True, conv_algorithm="auto"):
        super().__init__()
        self._orig_mod = module
        object.__setattr__(self, "conv_algorithm", conv_algorithm)
        object.__setattr__(self, "conv_choices", {})
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
                choices = optimise(graph, attributes, inputs, conv_algorithm=self.conv_algorithm)
            program = Program(graph, attributes, inputs, inputs[0].device)
        self.graphs[program] = graph
        if self.use_passes:
            self.conv_choices[program] = choices
        return program

    def _fall_back(self, reason, inputs):
        name = type(self._orig_mod).__name__
        warnings.warn(f"ember.compile: cannot compile {name} ({reason}); running it eagerly", RuntimeWarning,
                      stacklevel=3)
        object.__setattr__(self, "fallback_reason", reason)
        return self._orig_mod(*inputs)


def optimise(graph, attributes, inputs, conv_algorithm="auto"):
    """The pass pipeline, in place: dead code, constants, conv-bn, a convolution algorithm
    per shape, the convolutions' epilogues (ReLU, residual add), fusion. Returns the
    convolutions' choices (passes/conv_algorithm.py)."""
    from ember.compiler.executor import _plan_run
    from ember.compiler.passes import (
        choose_conv_algorithms,
        eliminate_dead_code,
        fold_constants,
        fold_conv_bn,
        fold_conv_epilogues,
        fuse_elementwise,
    )

    eliminate_dead_code(graph)
    fold_constants(graph, attributes)
    fold_conv_bn(graph, attributes)
    values = _plan_run(graph, attributes, inputs)  # shapes and dtypes for the passes below (kept up to date)
    choices = choose_conv_algorithms(graph, attributes, values, inputs[0].device, conv_algorithm)
    fold_conv_epilogues(graph, values)
    fuse_elementwise(graph, values)
    graph.lint()
    return choices


def _why_not(module, inputs):
    from ember.tensor import Tensor

    if not inputs or not all(isinstance(x, Tensor) for x in inputs):
        return "only tensor arguments can be compiled"
    if isinstance(module, Module) and module.training:
        return ("ember.compile is for inference and the module is in training mode (batch statistics and "
                "dropout would be frozen into the graph): call module.eval() first")
    return None


def compile(model, *, passes=True, conv_algorithm="auto"):
    """Compile ``model`` (a Module) for inference; returns a ``CompiledModule``.

    Args:
        model: the module to compile; it is captured on its first call, per input signature.
        passes: run the optimisation passes (set False to run the plain captured graph).
        conv_algorithm: how 2-D convolutions (groups 1, dilation 1) are computed:
            ``"auto"`` (the default) times im2col, Winograd F(2x2, 3x3) and F(4x4, 3x3)
            on the example input and keeps the fastest per shape, on the CPU (other
            devices keep eager ember's kernel); ``"im2col"``, ``"winograd_2x2"`` or
            ``"winograd_4x4"`` force one (a convolution it cannot run, not 3x3 stride
            1, uses im2col); ``"eager"`` keeps eager ember's kernel. The choices are in
            ``conv_choices``. NOTE [ Choosing a convolution algorithm by measurement ].

    Outputs equal eager ember's up to rounding, which depends on the algorithm: in
    float32, relative to the output's largest magnitude, about 1e-6 for im2col and
    F(2x2) and about 1e-5 for F(4x4) (both against eager ember and against a float64
    reference; torch's own float32 convolution is about 2e-6 off the reference). In
    float64 every algorithm is within about 1e-15. NOTE [ Winograd F(4x4, 3x3) ].

    >>> import ember
    >>> fast = ember.compile(ember.nn.Sequential(ember.nn.Linear(3, 3), ember.nn.ReLU()).eval())
    >>> fast(ember.ones(2, 3)).shape
    ember.Size([2, 3])
    """
    if not isinstance(model, Module):
        raise TypeError(f"ember.compile expects an ember.nn.Module, got {type(model).__name__}")
    return CompiledModule(model, passes, conv_algorithm)
