"""Module full backward hooks: identity Functions around a module's inputs and outputs.

PyTorch counterpart: torch/utils/hooks.py (``BackwardHook``) and
torch/nn/modules/_functions.py (``BackwardHookFunction``) (v2.13).

# NOTE [ How a module's full backward hook sees its gradients ]
# A module's forward may record any number of graph nodes, so no single node carries
# "the gradient with respect to the module's inputs". ``Module.__call__`` therefore
# passes the tensor inputs through an identity Function before ``forward`` and the
# tensor outputs through another one after it. In backward:
#   1. the output identity node runs first; a pre-hook on it sees ``grad_output``,
#      runs the module's backward pre-hooks (which may replace it) and keeps it;
#   2. the module's own nodes run;
#   3. the input identity node runs last; a hook on it sees ``grad_input`` and calls
#      ``hook(module, grad_input, grad_output)``, which may replace ``grad_input``.
# Inputs that are no tensors get None in ``grad_input``; tensors that need no grad get
# zeros (the identity's materialised gradient), as in PyTorch.
# When no input requires grad there is no input node, so step 1 calls the hooks
# with an all-None ``grad_input``.
"""

import warnings

from ember.autograd.function import Function
from ember.autograd.grad_mode import grad_state
from ember.tensor import Tensor


class BackwardHookFunction(Function):
    """Returns its tensor arguments unchanged; records a node the hooks attach to."""

    @staticmethod
    def forward(ctx, *tensors):
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        # Inputs that need no grad get zeros here, as in PyTorch: the hook sees them.
        return grads


class BackwardHook:
    """The state of one module call with backward hooks (NOTE above)."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.n_outputs = 0
        self.input_tensors_index = None
        self.output_tensors_index = None

    # --- forward: wrap inputs and outputs -------------------------------------------
    def setup_input_hook(self, args):
        result, self.input_tensors_index = _wrap_tensors(args, self._set_input_hook)
        self.n_inputs = len(args)
        return result

    def setup_output_hook(self, result):
        is_tuple = isinstance(result, tuple)
        outputs = result if is_tuple else (result,)
        wrapped, self.output_tensors_index = _wrap_tensors(outputs, self._set_output_hook)
        self.n_outputs = len(outputs)
        return wrapped if is_tuple else wrapped[0]

    # --- backward: the hooks on the identity nodes ----------------------------------
    def _set_output_hook(self, grad_fn):
        def hook(grad_outputs):
            self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_outputs, self.n_outputs)
            for pre_hook in self.user_pre_hooks:
                new = pre_hook(self.module, self.grad_outputs)
                if new is None:
                    continue
                if len(new) != len(self.grad_outputs):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                       f"{len(new)}, but expected {len(self.grad_outputs)}")
                self.grad_outputs = tuple(new)
            local_grad_outputs = self.grad_outputs
            if self.input_tensors_index is None:
                self._call_hooks_without_input_grads()
            return tuple(local_grad_outputs[i] for i in self.output_tensors_index)

        grad_fn.register_prehook(hook)

    def _call_hooks_without_input_grads(self):
        if self.user_hooks:
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                          "outputs since no inputs require gradients.", stacklevel=2)
        grad_inputs = (None,) * self.n_inputs
        for user_hook in self.user_hooks:
            result = user_hook(self.module, grad_inputs, self.grad_outputs)
            if result is not None and not (isinstance(result, tuple) and all(r is None for r in result)):
                raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                   "return None or None for all gradients.")
        self.grad_outputs = None

    def _set_input_hook(self, grad_fn):
        def hook(grad_inputs, _grad_outputs):
            if self.grad_outputs is None:
                return None  # the module's outputs took no part in this backward
            result = _pack_with_none(self.input_tensors_index, grad_inputs, self.n_inputs)
            for user_hook in self.user_hooks:
                new = user_hook(self.module, result, self.grad_outputs)
                if new is None:
                    continue
                if len(new) != len(result):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(new)}, "
                                       f"but expected {len(result)}")
                result = tuple(new)
            self.grad_outputs = None
            return tuple(result[i] for i in self.input_tensors_index)

        grad_fn.register_hook(hook)


def _wrap_tensors(values, set_hook):
    """Pass the tensors among ``values`` through ``BackwardHookFunction``; returns the new
    values and the indices of the tensors (None when nothing needs grad)."""
    index = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
    tensors = [values[i] for i in index]
    if not (grad_state.enabled and any(t.requires_grad for t in tensors)):
        return values, None
    new_tensors = BackwardHookFunction.apply(*tensors)
    grad_fn = next(t.grad_fn for t in new_tensors
                   if t.grad_fn is not None and type(t.grad_fn).__name__ == "BackwardHookFunctionBackward")
    set_hook(grad_fn)
    result = list(values)
    for i, t in zip(index, new_tensors):
        result[i] = t
    return (tuple(result) if type(values) is tuple else type(values)(*result)), index


def _pack_with_none(indices, values, size):
    result = [None] * size
    for i, v in zip(indices, values):
        result[i] = v
    return tuple(result)
