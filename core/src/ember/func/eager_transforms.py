"""``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``.

PyTorch counterpart: torch/_functorch/eager_transforms.py (v2.13).

Each transform returns a function. Called, it makes the differentiated arguments
tracked leaves (a tensor that already requires grad is viewed instead, so an enclosing
``grad`` or ordinary autograd still sees through it), runs the function under grad mode,
and differentiates with ``ember.autograd.grad``. The graph is kept (``create_graph``)
exactly when an input already required grad: then the result is differentiable again,
which is how ``grad(grad(f))`` and ``hessian`` compose, and otherwise the result is a
plain tensor, as torch's is.

``jvp`` and ``jacfwd`` run in forward mode, through ``ember.autograd.forward_ad``'s
dual tensors, as torch's do (``ember.autograd.functional.jvp`` keeps the
double-backward trick, as torch's does). Where ember differs: torch batches
``jacfwd``'s columns with vmap; ember runs one ``jvp`` per column.
"""

from ember.autograd.engine import grad as _autograd_grad
from ember.autograd.forward_grad import keep_tangents
from ember.autograd.grad_mode import enable_grad
from ember.func import batching
from ember.func.batched_tensor import BatchedTensor, is_batched_at, wrap
from ember.utils._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


# --- the arguments a transform differentiates ------------------------------------------
def _is_tensor(value):
    from ember.tensor import Tensor

    return isinstance(value, Tensor)


def _tracked(leaf):
    if not _is_tensor(leaf):
        raise ValueError("Thing passed to transform API must be Tensor, "
                         f"got {type(leaf)}")
    if batching.running():  # a leaf per sample (NOTE [ Autograd inside vmap ])
        return batching.batched_leaf(leaf)[0]
    if leaf.requires_grad:  # an enclosing transform's leaf: keep its history
        return leaf.view_as(leaf)
    # an enclosing jacfwd's tangents stay (forward over reverse: hessian)
    return keep_tangents(leaf, leaf.detach()).requires_grad_(True)


def _track(args, argnums):
    """``(args, leaves, spec, keep_graph)``: ``args`` with the differentiated ones made
    tracked leaves, those leaves flat, the tree they form, and whether to keep the graph."""
    if isinstance(argnums, int):
        chosen = args[_checked_argnum(argnums, len(args))]
    elif isinstance(argnums, tuple) and argnums and all(isinstance(a, int) for a in argnums):
        chosen = tuple(args[_checked_argnum(a, len(args))] for a in argnums)
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    leaves, spec = tree_flatten(chosen)
    keep = any(_is_tensor(leaf) and leaf.requires_grad for leaf in leaves)
    tracked = [_tracked(leaf) for leaf in leaves]
    chosen = tree_unflatten(tracked, spec)
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = chosen
    else:
        for a, value in zip(argnums, chosen):
            args[a] = value
    return tuple(args), tracked, spec, keep


def _checked_argnum(argnum, count):
    if not -count <= argnum < count:
        raise RuntimeError(f"Got argnums={argnum}, but only {count} positional inputs")
    return argnum


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}(f, ...): output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _grads_or_zeros(outputs, leaves, grad_outputs, keep):
    from ember.native.factory import zeros_like

    if batching.running() and any(isinstance(t, BatchedTensor)
                                  for t in [*outputs, *leaves, *(grad_outputs or ())]):
        return _batched_grads(outputs, leaves, grad_outputs, keep)
    grads = _autograd_grad(outputs, leaves, grad_outputs, retain_graph=True, create_graph=keep, allow_unused=True)
    return [zeros_like(leaf) if g is None else g for g, leaf in zip(grads, leaves)]


def _batched_grads(outputs, leaves, grad_outputs, keep):
    """The gradients inside vmap, from the physical graph (NOTE [ Autograd inside vmap ]
    in ember/func/batching.py): every output's physical tensor, with ones (or the
    cotangent, expanded over the levels it is not batched at) as its gradient, against
    the leaves' physical tensors; the gradients wrapped as the leaves are. A cotangent
    batched at a level its output is not (``vmap(vjp_fn)``) takes a loop over that
    level's samples."""
    from ember.native.factory import ones_like, zeros_like

    sizes = batching.level_sizes()
    physical_outputs, physical_grads = [], []
    for i, out in enumerate(outputs):
        physical, levels = batching.peel(out)
        cotangent = None if grad_outputs is None else grad_outputs[i]
        if cotangent is None:
            physical_grads.append(ones_like(physical))
        else:
            aligned = batching.physical_like(cotangent, levels, sizes)
            if aligned is None:
                return _grads_per_cotangent_sample(outputs, leaves, grad_outputs, keep, levels, cotangent)
            physical_grads.append(aligned)
        physical_outputs.append(physical)
    physical_leaves = [batching.peel(leaf)[0] for leaf in leaves]
    grads = _autograd_grad(physical_outputs, physical_leaves, physical_grads, retain_graph=True, create_graph=keep,
                           allow_unused=True)
    return [zeros_like(leaf) if g is None else batching.rewrap(g, batching.peel(leaf)[1])
            for g, leaf in zip(grads, leaves)]


def _grads_per_cotangent_sample(outputs, leaves, grad_outputs, keep, levels, cotangent):
    from ember.native.shape.shape import stack

    level = max(set(batching.peel(cotangent)[1]) - set(levels))
    size = batching.level_sizes()[level]
    per_sample = []
    for i in range(size):
        sliced = [g if not is_batched_at(g, level) else g.value.select(0, i) for g in grad_outputs]
        per_sample.append(_grads_or_zeros(outputs, leaves, sliced, keep))
    return [wrap(stack(list(column)), level) for column in zip(*per_sample)]


def _plain(tree, keep):
    return tree if keep else tree_map(lambda t: keep_tangents(t, t.detach()) if _is_tensor(t) else t, tree)


# --- the transforms -----------------------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """``f -> (x -> (df/dx, f(x)))`` for a scalar-valued ``f`` (``(grad, (value, aux))``
    with ``has_aux``).

    >>> import ember
    >>> ember.func.grad_and_value(lambda x: (x ** 2).sum())(ember.tensor([1.0, 2.0]))
    (tensor([2., 4.]), tensor(5.))
    """
    def wrapper(*args, **kwargs):
        with enable_grad():
            args, leaves, spec, keep = _track(args, argnums)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value")
            if not _is_tensor(output):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                                   f"got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                                   "APIs instead?")
            grads = tree_unflatten(_grads_or_zeros([output], leaves, None, keep), spec)
        value = _plain(output, keep)
        return (grads, (value, _plain(aux, keep))) if has_aux else (grads, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``f -> df/dx`` for a scalar-valued ``f`` (``(grad, aux)`` with ``has_aux``).

    >>> import ember
    >>> ember.func.grad(lambda x: (x ** 3).sum())(ember.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    """
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        grads, value = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(f(primals), vjp_fn)``: ``vjp_fn(cotangents)`` is the tuple of ``cotangents^T J``
    per primal (and ``aux`` third with ``has_aux``).

    >>> import ember
    >>> out, vjp_fn = ember.func.vjp(lambda x: x ** 2, ember.tensor([1.0, 2.0]))
    >>> vjp_fn(ember.ones(2))
    (tensor([2., 4.]),)
    """
    with enable_grad():
        args, leaves, spec, keep = _track(primals, tuple(range(len(primals))))
        output, aux = _split_aux(func(*args), has_aux, "vjp")
    out_leaves, out_spec = tree_flatten(output)

    def vjp_fn(cotangents):
        cot_leaves, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               "outputs to the function.")
        for o, c in zip(out_leaves, cot_leaves):
            if o.shape != c.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has "
                                   f"a shape of {o.shape}.")
        with enable_grad():
            grads = _grads_or_zeros(out_leaves, leaves, cot_leaves, keep or any(c.requires_grad for c in cot_leaves))
        return tree_unflatten(grads, spec)

    result = (_plain(output, keep), vjp_fn)
    return (*result, _plain(aux, keep)) if has_aux else result


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(f(primals), J tangents)`` in forward mode: ``f`` runs once on dual tensors, in a
    dual level of its own (inside any open one, so ``jvp`` of ``jvp`` nests), and the
    outputs' tangents are read back (ember/autograd/forward_ad.py).

    >>> import ember
    >>> ember.func.jvp(lambda x: x ** 2, (ember.tensor([1.0, 2.0]),), (ember.tensor([1.0, 0.0]),))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    from ember.autograd import forward_ad
    from ember.native.factory import zeros_like

    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples. E.g. it should "
                           "be valid to call f(*primals).")
    primal_leaves, spec = tree_flatten(primals)
    tangent_leaves, tangent_spec = tree_flatten(tangents)
    if tangent_spec != spec:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure.")
    for p, t in zip(primal_leaves, tangent_leaves):
        if _is_tensor(p) and _is_tensor(t) and p.shape != t.shape:
            raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same "
                               f"shape. Got primal of shape {tuple(p.shape)} and tangent of shape {tuple(t.shape)}")
    level = forward_ad.push_level()
    try:
        duals = [forward_ad.make_dual(p, t, level=level) for p, t in zip(primal_leaves, tangent_leaves)]
        output, aux = _split_aux(func(*tree_unflatten(duals, spec)), has_aux, "jvp")
        out_leaves, out_spec = tree_flatten(output)
        unpacked = [forward_ad.unpack_dual(o, level=level) for o in out_leaves]
        values = [u.primal for u in unpacked]
        jvps = [zeros_like(o) if u.tangent is None else u.tangent for o, u in zip(out_leaves, unpacked)]
        aux = tree_map(lambda a: forward_ad.unpack_dual(a, level=level).primal if _is_tensor(a) else a, aux)
    finally:
        forward_ad.pop_level()
    result = (tree_unflatten(values, out_spec), tree_unflatten(jvps, out_spec))
    return (*result, aux) if has_aux else result


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """``f -> (x -> J)``: one vector-Jacobian product per output element. For each output
    leaf of shape ``S`` and differentiated input of shape ``T``, a tensor of shape ``S + T``,
    nested as the output, then as ``argnums`` (``chunk_size`` changes nothing here).

    >>> import ember
    >>> ember.func.jacrev(lambda x: x ** 2)(ember.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    from ember.native.shape.shape import stack

    def wrapper(*args, **kwargs):
        with enable_grad():
            args, leaves, spec, keep = _track(args, argnums)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "jacrev")
            out_leaves, out_spec = tree_flatten(output)
            per_output = []
            for out in out_leaves:
                flat = out.reshape(-1)
                rows = [_grads_or_zeros([flat[k]], leaves, None, keep) for k in range(out.numel())]
                columns = [stack([row[j] for row in rows]).view(*out.shape, *leaf.shape) if rows
                           else leaf.new_zeros(*out.shape, *leaf.shape) for j, leaf in enumerate(leaves)]
                per_output.append(tree_unflatten(_plain(columns, keep), spec))
        jacobian = tree_unflatten(per_output, out_spec)
        return (jacobian, _plain(aux, keep)) if has_aux else jacobian
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """``f -> (x -> J)`` in forward mode, column by column: one ``jvp`` per element of
    each differentiated input, with that element's basis vector as the tangent. Shaped
    as ``jacrev``'s: ``S + T`` per output leaf of shape ``S`` and input of shape ``T``.

    >>> import ember
    >>> ember.func.jacfwd(lambda x: x.sin())(ember.tensor([0.0]))
    tensor([[1.]])
    """
    from ember.native.factory import zeros_like
    from ember.native.shape.shape import stack

    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")

    def wrapper(*args, **kwargs):
        chosen_nums = (argnums,) if isinstance(argnums, int) else argnums
        if not (isinstance(chosen_nums, tuple) and chosen_nums and all(isinstance(a, int) for a in chosen_nums)):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        chosen = tuple(args[_checked_argnum(a, len(args))] for a in chosen_nums)
        leaves, spec = tree_flatten(chosen)
        for leaf in leaves:
            if not _is_tensor(leaf):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")

        def restricted(*values):
            full = list(args)
            for a, v in zip(chosen_nums, tree_unflatten(list(values), spec)):
                full[a] = v
            return func(*full, **kwargs)

        columns, output, aux = [], None, None
        for j, leaf in enumerate(leaves):
            per_leaf = []
            for k in range(leaf.numel()):
                basis = [zeros_like(x) for x in leaves]
                basis[j] = zeros_like(leaf).reshape(-1).index_fill(0, _index(k, leaf), 1.0).reshape(leaf.shape)
                output, tangent, *rest = jvp(restricted, tuple(leaves), tuple(basis), has_aux=has_aux)
                aux = rest[0] if rest else None
                per_leaf.append(tree_flatten(tangent)[0])
            columns.append(per_leaf)
        if output is None:  # every input empty: one call for the output's structure
            output = restricted(*leaves)
            output, aux = _split_aux(output, has_aux, "jacfwd")
        out_leaves, out_spec = tree_flatten(output)
        per_output = []
        for i, out in enumerate(out_leaves):
            blocks = []
            for j, leaf in enumerate(leaves):
                if columns[j]:
                    block = stack([col[i] for col in columns[j]], -1).reshape(*out.shape, *leaf.shape)
                else:
                    block = out.new_zeros(*out.shape, *leaf.shape)
                blocks.append(block)
            per_output.append(tree_unflatten(blocks, spec) if not isinstance(argnums, int) else blocks[0])
        jacobian = tree_unflatten(per_output, out_spec)
        return (jacobian, aux) if has_aux else jacobian
    return wrapper


def _index(k, like):
    from ember import tensor

    return tensor([k], device=like.device)


def hessian(func, argnums=0):
    """``f -> (x -> d2f/dx2)``: the Jacobian of the Jacobian.

    >>> import ember
    >>> ember.func.hessian(lambda x: (x ** 3).sum())(ember.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
