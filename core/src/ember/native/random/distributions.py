"""Random fills and samplers on tensors: ``uniform_``, ``normal_``, ``random_``,
``bernoulli_``/``bernoulli``, ``exponential_``, ``cauchy_``, ``log_normal_``,
``geometric_``, ``normal`` and ``multinomial``.

PyTorch counterpart: aten/src/ATen/native/Distributions.cpp and
aten/src/ATen/native/DistributionTemplates.h (argument checks, which kernel serves
which case), aten/src/ATen/native/cpu/MultinomialKernel.cpp (v2.13).

Each fill draws from an ``ember.Generator`` (the default one unless ``generator=`` is
given) on the host, through ember/native/random/transformations.py, in the order PyTorch's CPU
kernel visits the elements: the tensor's memory order (NOTE [ Filling in memory order ]).
So the same seed gives PyTorch's numbers. A fill is an in-place write: on a non-leaf it
cuts the gradient to the old values (zero, as in PyTorch); a leaf that requires grad is
refused outside ``no_grad``, as in PyTorch (``torch.nn.init`` fills under ``no_grad``).
"""

import math

import numpy as np

from ember import dtypes
from ember.dispatcher import Op
from ember.native.random import transformations
from ember.native.support._inplace import check_inplace
from ember.random import generator_or_default

# NOTE [ Filling in memory order ]
# PyTorch's CPU kernels write a random tensor element by element with a serial
# TensorIterator loop, which walks the output in the order of its strides (innermost =
# smallest stride). For a contiguous tensor that is the row-major order; for a
# transposed one it is the transpose's storage order. ember draws the flat samples, lays
# them out along the dimensions sorted by decreasing stride, and permutes back.


def memory_order(tensor):
    """The dimensions from the outermost (largest stride) to the innermost."""
    strides = tensor.stride()
    return sorted(range(tensor.ndim), key=lambda d: -strides[d])


def lay_out(flat_host, shape, order):
    """The flat samples as an array of ``shape`` whose dimensions ``order`` (outermost
    first) are walked in row-major order."""
    laid_out = flat_host.reshape(tuple(shape[d] for d in order))
    return laid_out.transpose(np.argsort(order).astype(int))


def _write(tensor, flat_host):
    """Write the flat samples into ``tensor`` in its memory order; returns ``tensor``."""
    from ember.native.copy import copy_
    from ember.native.factory import _finish

    values = lay_out(flat_host, tuple(tensor.shape), memory_order(tensor)).astype(tensor.dtype.np, copy=False)
    # Recorded like any in-place write: a non-leaf's old value then gets a zero gradient,
    # as PyTorch's random fills give it.
    copy_(tensor, _finish(np.array(values, order="C"), tensor.dtype, tensor.device, False))
    return tensor


def _as_real(tensor):
    """A complex tensor's real view (..., 2): PyTorch fills complex tensors through it,
    so the parts are drawn interleaved, real first."""
    from ember.native.complex import view_as_real

    return view_as_real(tensor)


def _generator(generator):
    from ember.generator import Generator

    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"expected an ember.Generator, got {type(generator).__name__}")
    return generator_or_default(generator)


def _require_floating(tensor, kernel_name):
    if not tensor.dtype.is_floating_point:
        from ember.native.support._inplace import _type_name

        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{_type_name(tensor.dtype)}'")


def _legacy_name(tensor):
    from ember.native.support._inplace import _type_name

    return _type_name(tensor.dtype)


def _require_continuous(tensor, distribution, type_name):
    if not tensor.dtype.is_floating_point:
        raise RuntimeError(f"{distribution} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {type_name}")


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill with samples uniform on [a, b), PyTorch's numbers for the same generator state.

    >>> import ember
    >>> ember.empty(3).uniform_(-1, 1, generator=ember.Generator().manual_seed(0))
    tensor([-0.0075,  0.5364, -0.8230])
    """
    check_inplace(self)
    if self.dtype.is_complex:  # the real and imaginary parts, each on [a, b)
        uniform_(_as_real(self), a, b, generator=generator)
        return self
    _require_floating(self, "check_uniform_bounds")
    a, b = float(a), float(b)
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
    if self.numel() == 0:
        return self
    host = transformations.uniform(_generator(generator), self.numel(), self.dtype.np, a, b)
    return _write(self, host)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples of mean ``mean`` and standard deviation ``std``
    (NOTE [ Two Box-Muller kernels ]: a contiguous tensor of 16 elements or more takes
    the vectorised kernel, any other the scalar one).

    >>> import ember
    >>> ember.empty(2).normal_(10, 2, generator=ember.Generator().manual_seed(0))
    tensor([13.0820,  9.4131])
    """
    check_inplace(self)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if self.dtype.is_complex:  # each part gets half the variance, so |z - mean|'s spread is std
        normal_(_as_real(self), mean, std / math.sqrt(2), generator=generator)
        return self
    _require_floating(self, "normal_kernel_cpu")
    if self.numel() == 0:
        return self
    host = transformations.normal(_generator(generator), self.numel(), self.dtype.np, float(mean), float(std),
                                  vectorised=self.is_contiguous())
    return _write(self, host)


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with samples of the exponential distribution of rate ``lambd``."""
    check_inplace(self)
    _require_continuous(self, "Exponential", _legacy_name(self))
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    if self.numel() == 0:
        return self
    return _write(self, transformations.exponential(_generator(generator), self.numel(), float(lambd)))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with samples of the Cauchy distribution centred at ``median`` of scale ``sigma``."""
    check_inplace(self)
    _require_continuous(self, "Cauchy", dtypes.C_TYPE_NAMES[self.dtype.name])
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    if self.numel() == 0:
        return self
    return _write(self, transformations.cauchy(_generator(generator), self.numel(), float(median), float(sigma)))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with ``exp`` of normal samples of mean ``mean`` and standard deviation ``std``."""
    check_inplace(self)
    _require_floating(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    if self.numel() == 0:
        return self
    return _write(self, transformations.log_normal(_generator(generator), self.numel(), float(mean), float(std)))


def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success."""
    check_inplace(self)
    if self.dtype is dtypes.bool_:
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self.numel() == 0:
        return self
    return _write(self, transformations.geometric(_generator(generator), self.numel(), float(p)))


def random_(self, *args, generator=None, **kwargs):
    """``random_()``: integers on [0, max of the dtype] (floats: [0, 2**digits]);
    ``random_(to)``: on [0, to); ``random_(from, to)``: on [from, to); ``to=None`` means
    the dtype's maximum, inclusive.

    >>> import ember
    >>> ember.empty(4, dtype=ember.int64).random_(10, generator=ember.Generator().manual_seed(0))
    tensor([4, 9, 3, 0])
    """
    from ember.native.factory import _C_TYPE_NAMES, _check_random_range

    low, high, bounded = _random_bounds(args, kwargs)
    check_inplace(self)
    g = _generator(generator)
    n = self.numel()
    if not bounded:
        return _write(self, transformations.random_default(g, n, self.dtype.np)) if n else self
    if high is None:
        if low == -(2 ** 63) and self.dtype in (dtypes.int64, dtypes.float32, dtypes.float64):
            return _write(self, transformations.random_full_range(g, n)) if n else self
        high = _largest_random(self.dtype) + 1
        if low >= high:  # PyTorch checks the bounds of the range it made up first
            raise RuntimeError(f"from is out of bounds for {_C_TYPE_NAMES[self.dtype.name]}")
    _check_random_range(low, high, self.dtype)
    if n == 0:
        return self
    return _write(self, transformations.random_from_to(g, n, low, high - low))


def _random_bounds(args, kwargs):
    """(from, to, bounded) from ``random_``'s three call forms."""
    if len(args) > 2:
        raise TypeError(f"random_() takes at most 2 positional arguments ({len(args)} given)")
    names = ("from", "to")
    values = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in values:
            raise TypeError(f"random_() got an unexpected keyword argument '{key}'")
        values[key] = value
    if not values:
        return 0, None, False
    if "to" not in values and len(args) == 1 and "from" in values:  # random_(to)
        return 0, int(values["from"]), True
    to = values.get("to")
    return int(values.get("from", 0)), None if to is None else int(to), True


def _largest_random(d):
    if d is dtypes.bool_:
        return 1
    if d.is_floating_point:
        return 2 ** (dtypes.finfo_of(d.np).nmant + 1)
    return int(np.iinfo(d.np).max)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 with probability ``p`` (a float, or a tensor broadcast to ``self``),
    else 0."""
    from ember.tensor import Tensor

    check_inplace(self)
    g = _generator(generator)
    if isinstance(p, Tensor):
        probabilities = p.detach().expand(self.shape)
        host = probabilities.permute(memory_order(self)).contiguous()._host().reshape(-1)
        return _write(self, transformations.bernoulli_tensor(g, host)) if self.numel() else self
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return _write(self, transformations.bernoulli_scalar(g, self.numel(), float(p))) if self.numel() else self


def bernoulli(input, p=None, *, generator=None):
    """A tensor of 0s and 1s: element i is 1 with probability ``input[i]`` (or with the
    float ``p`` for every element), of ``input``'s dtype.

    >>> import ember
    >>> ember.bernoulli(ember.tensor([0.0, 1.0, 1.0, 0.0]))
    tensor([0., 1., 1., 0.])
    """
    from ember.native.factory import empty

    out = empty(tuple(input.shape), dtype=input.dtype, device=input.device)
    if p is None:
        _require_floating(input, "bernoulli_tensor_cpu_p_")
        _check_probabilities(input)
        return _sampled(BERNOULLI, bernoulli_(out, input, generator=generator), input)
    return bernoulli_(out, p, generator=generator)


def _check_probabilities(p):
    host = p._host()
    if host.size and not ((host >= 0) & (host <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, layout=None, device=None, pin_memory=False,
           requires_grad=False):
    """Normal samples: ``normal(mean, std, size)`` with floats, or element-wise with a
    tensor ``mean`` and/or ``std`` (broadcast), drawn as ``normal_(0, 1)`` then
    ``* std + mean``, PyTorch's order. ``layout`` and ``pin_memory`` are accepted and
    ignored (ember's tensors are strided, its host memory is not pinned)."""
    from ember.native.factory import empty
    from ember.tensor import Tensor

    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal() missing required argument 'size'")
        out = empty(*size, dtype=dtype, device=device)
        normal_(out, mean, std, generator=generator)
        return out.requires_grad_(requires_grad) if requires_grad else out
    if isinstance(std, Tensor) and std.numel() and (std._host() < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not isinstance(std, Tensor) and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    reference = mean if isinstance(mean, Tensor) else std
    shape = np.broadcast_shapes(*[tuple(t.shape) for t in (mean, std) if isinstance(t, Tensor)])
    out = empty(tuple(shape), dtype=reference.dtype, device=reference.device)
    normal_(out, 0.0, 1.0, generator=generator)
    from ember.autograd.grad_mode import no_grad

    with no_grad():
        samples = out * std + mean
    return _sampled(NORMAL, samples, *[t for t in (mean, std) if isinstance(t, Tensor)])


# NOTE [ The gradient of a sample ]
# PyTorch records ``torch.normal(mean, std)`` and ``torch.bernoulli(p)`` in the graph
# with a zero gradient for every tensor parameter (NormalBackward, BernoulliBackward0):
# the output requires grad when a parameter does, but a sample is not reparameterised
# (torch.distributions' ``rsample`` does that with ops of its own). ember records the
# drawn tensor through an op whose kernel returns the samples, handed over as an
# attribute like dropout's mask, and whose backward gives each parameter zeros.


def _samples_kernel(xp, *parameters, samples, parameter_shapes):
    return samples


def _zero_gradients(ctx, grad):
    from ember.native.factory import zeros

    return tuple(zeros(shape, dtype=grad.dtype, device=grad.device) for shape in ctx.attrs["parameter_shapes"])


BERNOULLI = Op("aten::bernoulli", _samples_kernel, _zero_gradients)
NORMAL = Op("aten::normal", _samples_kernel, _zero_gradients)


def _sampled(op, samples, *parameters):
    """``samples`` recorded as ``op`` of ``parameters`` (NOTE [ The gradient of a sample ])."""
    return op(*parameters, samples=samples._data, parameter_shapes=tuple(tuple(p.shape) for p in parameters))


# --- multinomial ---------------------------------------------------------------------------


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from the categories of each row of ``input`` (non-negative weights,
    not necessarily summing to one), PyTorch's numbers for the same generator state.

    Without replacement (or for one sample) PyTorch divides the weights by exponential
    noise and takes the top ``num_samples`` (the "Gumbel top-k" trick); with
    replacement it inverts the cumulative distribution with one 53-bit uniform per draw.
    Zero-weight categories, drawn last once the others are used up, come in index order
    (PyTorch's order among them is its partial sort's, not specified).

    >>> import ember
    >>> g = ember.Generator().manual_seed(0)
    >>> ember.multinomial(ember.tensor([0.1, 0.0, 0.9]), 4, replacement=True, generator=g)
    tensor([2, 2, 2, 2])
    """
    from ember.native.factory import _finish

    _check_multinomial(input, num_samples, replacement)
    g = _generator(generator)
    rows = input._host().reshape(-1, input.shape[-1])
    out_shape = (num_samples,) if input.ndim == 1 else (input.shape[0], num_samples)
    if rows.shape[0] == 0:
        return _finish(np.zeros(out_shape, dtype=np.int64), dtypes.int64, input.device, False)
    if not replacement or num_samples == 1:
        samples = _multinomial_top_k(g, rows, num_samples)
    else:
        samples = np.stack([_multinomial_with_replacement(g, row, num_samples) for row in rows])
    return _finish(samples.reshape(out_shape), dtypes.int64, input.device, False)


def _check_multinomial(input, num_samples, replacement):
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        from ember.native.support._inplace import _type_name

        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_type_name(input.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if input.shape[-1] > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")


def _multinomial_top_k(g, rows, num_samples):
    if rows.size and not (np.isfinite(rows).all() and (rows >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(axis=1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    noise = transformations.exponential(g, rows.size, 1.0).astype(rows.dtype).reshape(rows.shape)
    with np.errstate(divide="ignore"):
        keys = rows / noise
    # The largest keys first; among equal keys the lower index (torch's topk and argmax).
    return np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]


def _multinomial_with_replacement(g, row, num_samples):
    if not np.isfinite(row).all():
        raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    if (row < 0).any():
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    accumulate = np.float32 if row.dtype == np.float16 else row.dtype  # half accumulates in float32
    cumulative = np.cumsum(row.astype(accumulate), dtype=accumulate)
    total = cumulative[-1]
    if not total > 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    cumulative = cumulative / total
    cumulative[-1] = 1
    u = transformations.uniform(g, num_samples, np.dtype(np.float64))
    # The first slot whose cumulative probability reaches u (a left binary search).
    return np.searchsorted(cumulative.astype(np.float64), u, side="left").astype(np.int64)
