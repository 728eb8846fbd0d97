"""``ember.nn.utils.parametrizations``: weight normalisation and spectral normalisation
as parametrizations (NOTE [ How a parametrization replaces a parameter ] in
parametrize.py).

PyTorch counterpart: torch/nn/utils/parametrizations.py (``weight_norm``,
``spectral_norm``; ``orthogonal`` is left out) (v2.13).

Weight normalisation (Salimans and Kingma, 2016) writes a weight as a direction times
a magnitude, ``w = g * v / ||v||``, the norm taken over every dimension but ``dim``;
the state dict holds ``parametrizations.weight.original0`` (g) and ``original1`` (v).
Spectral normalisation (Miyato et al., 2018) divides a weight by its largest singular
value, estimated by power iteration: ``u`` and ``v`` are kept between calls and moved
one step each training-mode forward, so sigma tracks the weight as it trains.
"""

from ember.autograd.grad_mode import no_grad
from ember.native.distance import normalize
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize

__all__ = ["spectral_norm", "weight_norm"]


def norm_except_dim(v, power=2, dim=0):
    """The ``power``-norm of ``v`` over every dimension but ``dim`` (kept, size 1 elsewhere),
    or over all of it for ``dim`` -1, as torch's ``norm_except_dim``."""
    if dim == -1:
        return v.norm(power)
    others = tuple(d for d in range(v.ndim) if d != dim)
    return v.norm(power, dim=others, keepdim=True)


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, 2, self.dim))

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Re-parametrize ``module.<name>`` as ``g * v / ||v||`` (norm over all dims but
    ``dim``; ``dim=None``: over the whole tensor). Returns ``module``."""
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
                             f"{dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            matrix = self._as_matrix(weight)
            h, w = matrix.shape
            # torch's draws, in torch's order: the same u and v after the same seed
            self.register_buffer("_u", normalize(matrix.new_empty(h).normal_(0, 1), dim=0, eps=eps))
            self.register_buffer("_v", normalize(matrix.new_empty(w).normal_(0, 1), dim=0, eps=eps))
            self._power_method(matrix, 15)

    def _as_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, matrix, iterations):
        with no_grad():
            for _ in range(iterations):
                self._u.copy_(normalize(matrix.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(matrix.t().mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        matrix = self._as_matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = u.dot(matrix.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Re-parametrize ``module.<name>`` as itself over its largest singular value
    (``dim``: the output dimension, 1 for transposed convolutions, else 0). Returns
    ``module``."""
    weight = getattr(module, name, None)
    if weight is None:
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ember.nn import ConvTranspose1d, ConvTranspose2d

        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
