"""``gradcheck`` and ``gradgradcheck``: compare analytic gradients with finite differences.

PyTorch counterpart: torch/autograd/gradcheck.py (slow mode: the full Jacobian by
central differences, column by column) (v2.13).
"""

import numpy as np

from ember.autograd.grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when the gradients disagree."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_inputs(inputs):
    from ember.tensor import Tensor

    return [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def _outputs(fn, inputs):
    from ember.tensor import Tensor

    return [o for o in _as_tuple(fn(*inputs)) if isinstance(o, Tensor) and o.is_floating_point()]


def numerical_jacobian(fn, inputs, eps=1e-6):
    """d outputs / d inputs as a list (per input) of list (per output) of arrays
    shaped (input numel, output numel)."""
    jacobians = []
    with no_grad():
        outputs = _outputs(fn, inputs)
        for i in _differentiable_inputs(inputs):
            x = inputs[i]
            per_output = [np.zeros((x.numel(), o.numel())) for o in outputs]
            array = x._data  # written element by element, in place: works for any strides
            for k in range(x.numel()):
                where = np.unravel_index(k, array.shape)
                original = array[where].item()
                array[where] = original + eps
                plus = [o._host().astype(np.float64).reshape(-1) for o in _outputs(fn, inputs)]
                array[where] = original - eps
                minus = [o._host().astype(np.float64).reshape(-1) for o in _outputs(fn, inputs)]
                array[where] = original
                for j in range(len(outputs)):
                    per_output[j][k] = (plus[j] - minus[j]) / (2 * eps)
            jacobians.append(per_output)
    return jacobians


def analytical_jacobian(fn, inputs):
    """The same Jacobians from backward: one ``autograd.grad`` per output element."""
    from ember.autograd.engine import grad
    from ember.memory_format import contiguous_format
    from ember.native.factory import zeros_like

    diff = [inputs[i] for i in _differentiable_inputs(inputs)]
    outputs = _outputs(fn, inputs)
    jacobians = [[np.zeros((x.numel(), o.numel())) for o in outputs] for x in diff]
    for j, out in enumerate(outputs):
        for k in range(out.numel()):
            # row-major, so that reshape(-1) below is a view (zeros_like keeps out's layout)
            seed = zeros_like(out, memory_format=contiguous_format)
            seed._data.reshape(-1)[k] = 1
            grads = grad(out, diff, seed, retain_graph=True, allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    jacobians[i][j][:, k] = g._host().astype(np.float64).reshape(-1)
    return jacobians


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_ignored):
    """True if backward agrees with central differences on every input and output.

    Inputs that require grad should be float64: float32 differences are too coarse.
    """
    inputs = _as_tuple(inputs)
    if not _differentiable_inputs(inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")
    for i in _differentiable_inputs(inputs):
        if inputs[i].dtype.name != "float64":
            import warnings

            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. "
                          "This check will likely fail if all the inputs are not of double precision "
                          "floating point. ", stacklevel=2)
    numerical = numerical_jacobian(func, inputs, eps)
    analytical = analytical_jacobian(func, inputs)
    for i, (num_i, ana_i) in enumerate(zip(numerical, analytical)):
        for j, (num, ana) in enumerate(zip(num_i, ana_i)):
            if not np.allclose(ana, num, rtol=rtol, atol=atol, equal_nan=True):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {j} with respect to input {i},\n"
                                     f"numerical:{num}\nanalytical:{ana}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, **_ignored):
    """``gradcheck`` of the first derivative: checks second-order gradients."""
    from ember.autograd.engine import grad
    from ember.native.factory import randn
    from ember.tensor import Tensor

    inputs = _as_tuple(inputs)
    diff_idx = _differentiable_inputs(inputs)
    outputs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = [randn(tuple(o.shape), dtype=o.dtype).requires_grad_(True) for o in outputs]
    grad_outputs = list(_as_tuple(grad_outputs))
    n = len(inputs)

    def first_derivative(*args):
        xs, gs = args[:n], args[n:]
        # numerical_jacobian calls this under no_grad; the first derivative needs a graph.
        with enable_grad():
            outs = _outputs(func, xs)
            diff = [xs[i] for i in diff_idx]
            grads = grad(outs, diff, gs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if isinstance(g, Tensor))

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
