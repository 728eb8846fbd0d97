"""softmax, log_softmax and softmin with ``torch.nn.functional``'s signature.

PyTorch counterpart: ``softmax``, ``log_softmax``, ``softmin`` and
``_get_softmax_dim`` in torch/nn/functional.py (v2.13). The ops themselves are the
core's fused ``aten::softmax`` and ``aten::log_softmax`` (ember/native/softmax.py).
"""

import warnings

import ember


def _implicit_dim(name, ndim, stacklevel):
    # The legacy choice for dim=None, kept with a deprecation warning as PyTorch does.
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x), dim)``; each slice along ``dim`` sums to 1.

    Args:
        dim: the dim to normalise over (None: the legacy implicit choice, with a warning).
        dtype: cast ``input`` to this dtype first.

    >>> import ember
    >>> softmax(ember.tensor([1., 2., 3.]), dim=0)
    tensor([0.0900, 0.2447, 0.6652])
    """
    if dim is None:
        dim = _implicit_dim("softmax", input.ndim, _stacklevel)
    return ember.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x - logsumexp(x, dim)``, the log of :func:`softmax` without its underflow.

    >>> import ember
    >>> log_softmax(ember.tensor([1., 2., 3.]), dim=0)
    tensor([-2.4076, -1.4076, -0.4076])
    """
    if dim is None:
        dim = _implicit_dim("log_softmax", input.ndim, _stacklevel)
    return ember.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-x, dim)``: the smallest entries get the largest weights.

    >>> import ember
    >>> softmin(ember.tensor([1., 2., 3.]), dim=0)
    tensor([0.6652, 0.2447, 0.0900])
    """
    if dim is None:
        dim = _implicit_dim("softmin", input.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return ember.softmax(-input, dim)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """A differentiable sample from the categorical distribution ``softmax(logits)``: the
    softmax of ``(logits + g) / tau`` with Gumbel noise ``g = -log(Exp(1))`` (ember's default
    generator). ``hard=True`` returns the one-hot of the sample's argmax, with the soft
    sample's gradient (the straight-through estimator). ``eps`` is unused, as in torch.

    >>> import ember
    >>> gumbel_softmax(ember.zeros(2, 5), hard=True).sum(-1).tolist()
    [1.0, 1.0]
    """
    gumbels = -ember.empty_like(logits).exponential_().log()
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.max(dim, keepdim=True)[1]
    one_hot = ember.zeros_like(logits).scatter(dim, index, 1.0)
    return one_hot - soft.detach() + soft
