"""``opcheck``: the checks a plugin author runs on a custom operator.

PyTorch counterpart: torch/library.py ``opcheck`` and
torch/testing/_internal/optests (schema, autograd registration, devices) (v2.13).

For each sample it checks: the forward against a reference function (NumPy), the
output dtype and shape, the backward against finite differences (``gradcheck`` in
float64) when the op is differentiable, and that every device with a backend gives
the same values as the cpu.
"""

import numpy as np


def opcheck(op, samples, reference=None, *, atol=1e-5, rtol=1e-4, check_grad=True, devices=None):
    """Check ``op`` on ``samples``: a list of ``(args, kwargs)`` pairs whose args are
    ember tensors or numbers. ``reference(*numpy_args, **kwargs)`` gives expected values.

    Raises AssertionError naming the sample and the check that failed.
    """
    import ember
    from ember.autograd.gradcheck import gradcheck

    for n, (args, kwargs) in enumerate(samples):
        out = op(*args, **kwargs)
        if reference is not None:
            numpy_args = [a.detach().numpy() if isinstance(a, ember.Tensor) else a for a in args]
            expected = np.asarray(reference(*numpy_args, **kwargs))
            got = out.detach().numpy()
            if got.shape != expected.shape:
                raise AssertionError(f"sample {n}: shape {got.shape} != reference {expected.shape}")
            if not np.allclose(got, expected, atol=atol, rtol=rtol, equal_nan=True):
                raise AssertionError(f"sample {n}: values differ from the reference\n{got}\n{expected}")
        floating = [isinstance(a, ember.Tensor) and a.dtype.is_floating_point for a in args]
        if check_grad and op.backward is not None and out.dtype.is_floating_point and any(floating):
            # Only floating inputs are differentiated (in float64); integer ones stay as they are.
            doubles = [a.detach().double().requires_grad_() if is_float else a for a, is_float in zip(args, floating)]
            if not gradcheck(lambda *xs: op(*xs, **kwargs), tuple(doubles)):
                raise AssertionError(f"sample {n}: gradcheck failed")
        for device in devices or ():
            moved = [a.to(device) if isinstance(a, ember.Tensor) else a for a in args]
            on_device = op(*moved, **kwargs)
            if on_device.device != ember.device(device):
                raise AssertionError(f"sample {n}: output on {on_device.device}, expected {device}")
            if not np.allclose(on_device.cpu().detach().numpy(), out.detach().numpy(), atol=atol, rtol=rtol,
                               equal_nan=True):
                raise AssertionError(f"sample {n}: {device} values differ from cpu")
    return True
