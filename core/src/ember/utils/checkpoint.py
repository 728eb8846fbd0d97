"""``ember.utils.checkpoint``: activation checkpointing, trading compute for memory.
A checkpointed segment keeps no intermediate activations for backward; its backward
runs the segment's forward again, with the random state it had, and backpropagates
through that.

PyTorch counterpart: torch/utils/checkpoint.py (``checkpoint``, ``checkpoint_sequential``,
``CheckpointFunction`` for ``use_reentrant=True``, the saved-tensor-hook machinery for
``use_reentrant=False``) (v2.13).

# NOTE [ Checkpointing ]
# A training step keeps every tensor a backward formula needs until backward runs: for
# a deep network, the activations dominate memory. ``checkpoint(f, x)`` runs ``f``
# under ``no_grad``, so nothing inside is recorded or kept, and puts one node in the
# graph for the whole segment (``CheckpointBackward``, a custom Function). Its backward
# restores the random state of the forward (so dropout draws the same mask), runs ``f``
# again with grad enabled, and backpropagates the incoming gradients through that
# fresh graph, which lives only for this backward.
#
# What the segment's gradient reaches differs between torch's two variants:
# - ``use_reentrant=True`` (torch 2.13's default when the argument is left out, with a
#   warning): only the explicit tensor arguments connect to the node. When none of them
#   requires grad, nothing does, and the parameters used inside get no gradient (torch
#   warns: "None of the inputs have requires_grad=True").
# - ``use_reentrant=False`` (recommended): every tensor that requires grad and is used
#   inside, the parameters a module closes over too, gets its gradient. torch records
#   them with saved-tensor hooks on the graph; ember finds them during the forward: a
#   dispatcher mode (NOTE [ Modes at the dispatcher ]) sees every op's inputs, and
#   those requiring grad (under ``no_grad`` nothing made inside does, so they come from
#   outside) become extra inputs of the node. Keyword arguments are passed through.
# The recomputation graph is not kept, so a checkpointed segment cannot be
# differentiated twice (``create_graph=True``); torch's non-reentrant variant can.
"""

import warnings

from ember import random
from ember.amp import autocast, get_autocast_dtype, is_autocast_enabled
from ember.autograd.engine import backward as autograd_backward
from ember.autograd.engine import grad as autograd_grad
from ember.autograd.function import Function
from ember.autograd.grad_mode import enable_grad, no_grad
from ember.dispatch_modes import modes
from ember.tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Capture:
    """Collects the tensors requiring grad that a checkpointed forward's ops read;
    nested checkpoints report to the enclosing one too."""

    def __init__(self, outer, skip):
        self.outer = outer
        self.skip = {id(t) for t in skip}
        self.found = {}

    def saw(self, inputs):
        for x in inputs:
            if isinstance(x, (list, tuple)):  # cat, stack: a list of tensors
                self.saw(x)
            elif isinstance(x, Tensor) and x._requires_grad and id(x) not in self.skip:
                self.found.setdefault(id(x), x)
        if self.outer is not None:
            self.outer.saw(inputs)


class _Segment:
    """What the backward needs to run the segment again."""

    def __init__(self, function, args, kwargs, preserve_rng_state):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state = random.get_rng_state() if preserve_rng_state else None
        self.autocast = get_autocast_dtype("cpu") if is_autocast_enabled("cpu") else None
        self.outputs = None
        self.captured = []  # the tensors use_reentrant=False found used inside
        self.reentrant = True

    def run_again(self, detached):
        """The forward once more, with grad, on ``detached`` inputs and the saved state."""
        rng_before = random.get_rng_state()
        if self.rng_state is not None:
            random.set_rng_state(self.rng_state)
        try:
            with enable_grad(), autocast("cpu", dtype=self.autocast, enabled=self.autocast is not None):
                return self.function(*detached, **self.kwargs)
        finally:
            random.set_rng_state(rng_before)


class CheckpointFunction(Function):
    """One node for a whole segment: forward hands over the outputs computed under
    ``no_grad``; backward recomputes and backpropagates (NOTE [ Checkpointing ])."""

    @staticmethod
    def forward(ctx, segment, *tensors):
        ctx.segment = segment
        return segment.outputs

    @staticmethod
    def backward(ctx, *grads):
        segment = ctx.segment
        wanted = _needs(segment.args, ctx.needs_input_grad)
        detached = [_detached(a, need) for a, need in zip(segment.args, wanted)]
        inputs = [t for t in detached if isinstance(t, Tensor)]
        roots, root_grads = _roots(segment.run_again(detached), grads)
        if segment.reentrant:
            # torch's CheckpointFunction: a backward inside the backward, accumulating
            # into the .grad of every leaf the recomputation reached (the parameters);
            # the detached inputs' gradients go on through this node.
            if roots:
                autograd_backward(roots, root_grads)
            return (None, *[t.grad if t.requires_grad else None for t in inputs])
        wrt = [t for t in inputs if t.requires_grad] + segment.captured
        found = [None] * len(wrt)
        if roots and wrt:
            found = autograd_grad(roots, wrt, root_grads, allow_unused=True)
        found = iter(found)
        input_grads = [next(found) if t.requires_grad else None for t in inputs]
        return (None, *input_grads, *found)


def _roots(outputs, grads):
    """The recomputed outputs that need a gradient, with the gradients that reached them."""
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    pairs = [(out, g) for out, g in zip(outputs, grads)
             if isinstance(out, Tensor) and out.requires_grad and g is not None]
    return [out for out, _ in pairs], [g for _, g in pairs]


def _needs(args, needs_input_grad):
    """Per argument: whether its gradient is wanted (needs_input_grad covers the tensors
    after the segment, in order)."""
    flags = iter(needs_input_grad[1:])
    return [next(flags) if isinstance(a, Tensor) else False for a in args]


def _detached(a, need):
    if not isinstance(a, Tensor):
        return a
    d = a.detach()
    d.requires_grad_(need)
    return d


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               **kwargs):
    """``function(*args, **kwargs)`` without keeping its activations: they are
    recomputed in backward (NOTE [ Checkpointing ]). ``preserve_rng_state=True`` (a
    keyword) restores the random state for the recomputation, as torch's."""
    if use_reentrant is None:
        warnings.warn("ember.utils.checkpoint: the use_reentrant parameter should be passed explicitly, as in "
                      "torch 2.13, whose default (use_reentrant=True) this follows; use_reentrant=False is "
                      "recommended. Refer to docs for more details on the differences between the two variants.",
                      stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant and (context_fn is not None or debug is not False):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if context_fn is not None:
        raise NotImplementedError("ember.utils.checkpoint: context_fn is not supported (no selective "
                                  "checkpointing policies in ember)")
    tensors = [a for a in args if isinstance(a, Tensor)]
    if use_reentrant and not any(t.requires_grad for t in tensors):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
    segment = _Segment(function, args, kwargs, preserve)
    capture = _Capture(modes.checkpoint, tensors)
    outer = modes.checkpoint
    modes.set_checkpoint(capture)
    try:
        with no_grad():
            segment.outputs = function(*args, **kwargs)
    finally:
        modes.set_checkpoint(outer)
    segment.reentrant = use_reentrant
    captured = [] if use_reentrant else list(capture.found.values())
    return _apply(segment, tensors, captured)


def _apply(segment, tensors, captured):
    if not isinstance(segment.outputs, (Tensor, tuple)):
        raise TypeError(f"ember.utils.checkpoint: the function must return a tensor or a tuple, "
                        f"got {type(segment.outputs).__name__}")
    segment.captured = captured
    return CheckpointFunction.apply(segment, *tensors, *captured)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list or an ``nn.Sequential``) in order, checkpointing all
    but the last of ``segments`` equal runs of them."""
    if use_reentrant is None:
        warnings.warn("ember.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
                      "passed explicitly, as in torch 2.13, whose default (use_reentrant=True) this follows; "
                      "use_reentrant=False is recommended.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ember.nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(_run(functions, start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _run(functions, end + 1, len(functions) - 1)(input)


def _run(functions, start, end):
    def forward(x):
        for j in range(start, end + 1):
            x = functions[j](x)
        return x

    return forward
