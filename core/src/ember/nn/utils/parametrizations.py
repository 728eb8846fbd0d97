"""``ember.nn.utils.parametrizations``: weight normalisation, spectral normalisation and
orthogonal weights as parametrizations (NOTE [ How a parametrization replaces a
parameter ] in parametrize.py).

PyTorch counterpart: torch/nn/utils/parametrizations.py (``weight_norm``,
``spectral_norm``, ``orthogonal``) (v2.13).

Weight normalisation (Salimans and Kingma, 2016) writes a weight as a direction times
a magnitude, ``w = g * v / ||v||``, the norm taken over every dimension but ``dim``;
the state dict holds ``parametrizations.weight.original0`` (g) and ``original1`` (v).
Spectral normalisation (Miyato et al., 2018) divides a weight by its largest singular
value, estimated by power iteration: ``u`` and ``v`` are kept between calls and moved
one step each training-mode forward, so sigma tracks the weight as it trains.

# NOTE [ Orthogonal weights from unconstrained ones ]
# ``orthogonal`` keeps an unconstrained tensor X (``parametrizations.weight.original``)
# and maps it onto matrices with orthonormal columns (rows, for a wide one), so plain SGD
# on X keeps the weight orthogonal. Three maps, as torch's: ``matrix_exp`` and
# ``cayley`` take the skew-symmetric A = L - L^T of X's lower triangle L (the tall
# matrix padded to square with zero columns) to exp(A) or (I - A/2)^-1 (I + A/2), both
# orthogonal, and keep the first k columns; ``householder`` reads the strictly lower
# triangle as Householder reflectors and multiplies them out. The default is
# ``matrix_exp`` for square (or complex) weights, ``householder`` otherwise. With
# ``use_trivialization`` (the default) a buffer ``base`` B, an orthogonal matrix, is
# kept too and the weight is B @ map(X): assigning a weight sets B to (the orthogonal
# completion of) it and X to the point that maps to I (zeros, or -I on the diagonal for
# householder), so training starts at the map's best-conditioned point.
"""

from ember.autograd.grad_mode import no_grad
from ember.native.distance import normalize
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


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


# --- orthogonal (NOTE [ Orthogonal weights from unconstrained ones ]) ---------------------

_MAPS = ("matrix_exp", "cayley", "householder")


def _is_orthogonal(q):
    import ember

    n, k = q.shape[-2], q.shape[-1]
    eye = ember.eye(k, dtype=q.dtype, device=q.device)
    return ember.allclose(q.mH @ q, eye, atol=10.0 * n * ember.finfo(q.dtype).eps)


def _make_orthogonal(a):
    """The Q of A = QR (A tall) with R's diagonal real and non-negative."""
    import ember

    x, tau = ember.geqrf(a)
    q = ember.linalg.householder_product(x, tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:  # work on the tall form
            x, n, k = x.mT, k, n
        if self.orthogonal_map == "householder":
            q = self._householder(x)
        else:
            q = self._skew_map(x, n, k)
        if "base" in self._buffers:
            q = self.base @ q
        return q.mT if transposed else q

    def _skew_map(self, x, n, k):
        import ember

        x = x.tril()
        if n != k:  # pad to square with zero columns
            x = ember.cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
        a = x - x.mH  # skew-symmetric (skew-hermitian)
        if self.orthogonal_map == "matrix_exp":
            q = ember.matrix_exp(a)
        else:  # the Cayley map (I + A/2)(I - A/2)^-1, as a solve
            eye = ember.eye(n, dtype=a.dtype, device=a.device)
            q = ember.linalg.solve(ember.add(eye, a, alpha=-0.5), ember.add(eye, a, alpha=0.5))
        return q[..., :k] if n != k else q

    @staticmethod
    def _householder(x):
        import ember

        a = x.tril(diagonal=-1)
        tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
        q = ember.linalg.householder_product(a, tau)
        # X's diagonal holds the reflections' signs (+-1), not differentiated through
        return q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)

    def right_inverse(self, q):
        with no_grad():
            return self._right_inverse(q)

    def _right_inverse(self, q):
        import ember

        if q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {q.shape}.")
        original = q
        n, k = q.shape[-2], q.shape[-1]
        transpose = n < k
        if transpose:
            q, n, k = q.mT, k, n
        if "base" not in self._buffers:
            if self.orthogonal_map != "householder":
                raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                          "or the Cayley parametrizations when use_trivialization=False.")
            a, tau = ember.geqrf(q)  # reflectors with a positive R diagonal: the sign goes on A's diagonal
            a.diagonal(dim1=-2, dim2=-1).sign_()
            a.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return a.mT if transpose else a
        if n == k:
            q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
        else:  # complete the tall Q to an n x n orthogonal matrix (torch's draw, same stream)
            filler = ember.randn(*(q.shape[:-2] + (n, n - k)), dtype=q.dtype, device=q.device)
            q = _make_orthogonal(ember.cat([q, filler], dim=-1))
        self.base = q
        start = ember.zeros_like(original)  # maps to I: -I's diagonal for householder, zeros otherwise
        start.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return start


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Re-parametrize ``module.<name>`` (a matrix or a batch of them) to be orthogonal:
    orthonormal columns if tall, rows if wide. ``orthogonal_map``: ``"matrix_exp"``,
    ``"cayley"`` or ``"householder"`` (default: matrix_exp when square or complex, else
    householder). Returns ``module``.

    >>> import ember
    >>> layer = ember.nn.utils.parametrizations.orthogonal(ember.nn.Linear(3, 5))
    >>> q = layer.weight
    >>> bool(ember.allclose(q.T @ q, ember.eye(3), atol=1e-5))
    True
    """
    from ember.tensor import Tensor

    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
