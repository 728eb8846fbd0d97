"""Parameters to one flat vector and back.

PyTorch counterpart: torch/nn/utils/convert_parameters.py (v2.13).
"""

from ember.tensor import Tensor


def _check_same_device(parameters):
    device = None
    for p in parameters:
        if device is None:
            device = p.device
        elif p.device != device:
            raise TypeError("Found two parameters on different devices, this is currently not supported.")


def parameters_to_vector(parameters):
    """Concatenate the flattened parameters into one 1-D tensor (differentiable)."""
    from ember import cat

    parameters = list(parameters)
    _check_same_device(parameters)
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D ``vec`` into the parameters' data."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected ember.Tensor, but got: {type(vec).__name__}")
    parameters = list(parameters)
    _check_same_device(parameters)
    pointer = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[pointer:pointer + n].reshape(p.shape).data
        pointer += n
