"""The ``foreach`` and ``fused`` implementations of SGD and Adam/AdamW: the same update as
the single-tensor loop, computed on the parameters' arrays without a Tensor op per line.

PyTorch counterpart: torch/optim/sgd.py ``_multi_tensor_sgd`` / ``_fused_sgd`` and
torch/optim/adam.py ``_multi_tensor_adam`` / ``_fused_adam`` (v2.13), whose kernels are
aten/src/ATen/native/ForeachOpsKernels.cpp, aten/src/ATen/native/cpu/FusedSGDKernel.cpp
and aten/src/ATen/native/cpu/FusedAdamKernel.cpp.

# NOTE [ foreach and fused, on NumPy ]
# The single-tensor loop (sgd.py, adam.py) runs each line of the algorithm as an ember
# op on one parameter: a dispatch, a version bump and a temporary per line, and one
# pass over the parameter's memory per line (Adam: about eight). PyTorch offers two
# faster paths, and ember mirrors both:
# - foreach: each line runs over *every* parameter of the group before the next line,
#   as torch's `_foreach_*` list ops do; here a line is a NumPy call on the raw array,
#   so no dispatch, no autograd bookkeeping and no temporaries beyond NumPy's own. The
#   memory traffic is the single-tensor loop's.
# - fused: all lines of the update run on one block of a parameter while that block is
#   in cache (BLOCK elements of each array: for Adam six float32 blocks of 64 KiB, inside
#   a core's L2), then the next block. Memory is read and written about once, where the
#   line-by-line paths stream it several times; torch's fused CPU kernels do the same
#   with SIMD registers instead of cache blocks. Scratch blocks are reused, so a step
#   allocates nothing.
# Both compute the single-tensor formulas in the same order (results agree to float
# rounding; tests/plugins/optim/test_fused.py), bump each parameter's version counter
# once, and run on any backend's array namespace (on CuPy a block is the whole array).
"""

import numpy as np

BLOCK = 16384


def _arrays(tensors):
    return [t._data for t in tensors]


def _bump_versions(tensors):
    for t in tensors:
        t._version_counter[0] += 1


def _blocks(xp, *arrays):
    """Flat views of ``arrays`` (same size, contiguous) cut into blocks of BLOCK
    elements; a non-NumPy namespace gets one block (its kernels are launched per call)."""
    flat = [a.reshape(-1) for a in arrays]
    n = flat[0].size
    step = BLOCK if xp is np else max(n, 1)
    for start in range(0, n, step):
        yield [f[start:start + step] for f in flat]


def _contiguous(xp, arrays):
    return all(a.flags.c_contiguous for a in arrays)


def _namespace(tensors):
    return tensors[0]._device.backend.xp


# --- SGD ---------------------------------------------------------------------------


def _sgd_block(xp, p, g, buf, s, t, *, lr, momentum, dampening, weight_decay, nesterov, maximize, first):
    """One block of SGD's update; ``s`` and ``t`` are scratch blocks of ``p``'s size."""
    d = g
    if maximize:
        xp.negative(g, out=s)
        d = s
    if weight_decay != 0:
        xp.multiply(p, weight_decay, out=t)
        xp.add(d, t, out=s)
        d = s
    if momentum != 0:
        if first:
            buf[...] = d
        else:
            buf *= momentum
            if dampening != 0:
                xp.multiply(d, 1 - dampening, out=t)
                buf += t
            else:
                buf += d
        if nesterov:
            xp.multiply(buf, momentum, out=t)
            xp.add(d, t, out=s)
            d = s
        else:
            d = buf
    xp.multiply(d, lr, out=t)
    p -= t


def fused_sgd(params, grads, momentum_buffers, *, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """SGD's update, one block at a time (NOTE [ foreach and fused, on NumPy ]);
    ``momentum_buffers[i]`` is None on the first step and replaced by the new buffer."""
    if not params:
        return
    _check_fused_params(params)
    xp = _namespace(params)
    options = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                   maximize=maximize)
    scratch = _scratch(xp, params, 2)
    for i, param in enumerate(params):
        first = momentum != 0 and momentum_buffers[i] is None
        if first:
            momentum_buffers[i] = _empty_like(param)
        arrays = [param._data, grads[i]._data, momentum_buffers[i]._data if momentum != 0 else param._data]
        for blocks, (s, t) in _blocked(xp, arrays, scratch):
            _sgd_block(xp, *blocks, s, t, first=first, **options)
    _bump_versions(params)
    if momentum != 0:
        _bump_versions(momentum_buffers)


def foreach_sgd(params, grads, momentum_buffers, *, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """SGD's update line by line over the whole list (torch's ``_multi_tensor_sgd``)."""
    if not params:
        return
    ps, gs = _arrays(params), _arrays(grads)
    ds = [-g for g in gs] if maximize else list(gs)
    if weight_decay != 0:
        ds = [d + weight_decay * p for d, p in zip(ds, ps)]
    if momentum != 0:
        for i, d in enumerate(ds):
            if momentum_buffers[i] is None:
                momentum_buffers[i] = _empty_like(params[i])
                momentum_buffers[i]._data[...] = d
            else:
                buf = momentum_buffers[i]._data
                buf *= momentum
                buf += (1 - dampening) * d if dampening != 0 else d
        bufs = _arrays(momentum_buffers)
        ds = [d + momentum * b for d, b in zip(ds, bufs)] if nesterov else bufs
        _bump_versions(momentum_buffers)
    for p, d in zip(ps, ds):
        p -= lr * d
    _bump_versions(params)


def _empty_like(tensor):
    import ember

    return ember.empty(tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)


def _scratch(xp, params, count):
    """``count`` flat scratch arrays, each one block (NumPy) or the largest parameter."""
    largest = max(p._data.size for p in params)
    size = min(largest, BLOCK) if xp is np else largest
    return [xp.empty(size, params[0]._data.dtype) for _ in range(count)]


def _blocked(xp, arrays, scratch):
    """``(blocks, scratch_blocks)`` pairs covering ``arrays``. Arrays that are not all
    C-contiguous (a parameter made from a transpose, say) go whole, with whole scratch."""
    if not _contiguous(xp, arrays):
        yield arrays, [xp.empty_like(arrays[0]) for _ in scratch]
        return
    for blocks in _blocks(xp, *arrays):
        yield blocks, [s[:blocks[0].size] for s in scratch]


# --- Adam / AdamW --------------------------------------------------------------------


def _adam_block(xp, p, g, m, v, vmax, scratch, *, beta1, beta2, lr, weight_decay, eps,
                maximize, decoupled_weight_decay, step_size, bias_correction2_sqrt):
    """One block of Adam's update; ``step_size`` comes negated, ``scratch`` is two
    blocks."""
    s, t = scratch
    d = g
    if maximize:
        xp.negative(g, out=s)
        d = s
    if weight_decay != 0:
        if decoupled_weight_decay:
            p *= 1 - lr * weight_decay
        else:
            xp.multiply(p, weight_decay, out=t)
            xp.add(d, t, out=s)
            d = s
    # exp_avg.lerp_(d, 1 - beta1): m + w * (d - m), PyTorch's lerp for weights below 0.5
    xp.subtract(d, m, out=t)
    t *= 1 - beta1
    m += t
    # exp_avg_sq.mul_(beta2).addcmul_(d, d, value=1 - beta2)
    v *= beta2
    xp.multiply(d, d, out=t)
    t *= 1 - beta2
    v += t
    if vmax is not None:
        xp.maximum(vmax, v, out=vmax)
    # denom = sqrt(v) / bias_correction2_sqrt + eps; p -= step_size * m / denom
    xp.sqrt(vmax if vmax is not None else v, out=t)
    t /= bias_correction2_sqrt
    t += eps
    xp.divide(m, t, out=t)
    t *= step_size
    p += t


def _adam_scalars(step, beta1, beta2, lr):
    return lr / (1 - beta1 ** step), (1 - beta2 ** step) ** 0.5


def fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, amsgrad, beta1, beta2, lr,
               weight_decay, eps, maximize, decoupled_weight_decay=False):
    """Adam's update, one block at a time (NOTE [ foreach and fused, on NumPy ])."""
    if not params:
        return
    from ember_optim._state import value

    _check_fused_params(params)
    xp = _namespace(params)
    scratch = _scratch(xp, params, 2)
    for i, param in enumerate(params):
        steps[i] += 1
        step_size, bc2 = _adam_scalars(value(steps[i]), beta1, beta2, lr)
        arrays = [param._data, grads[i]._data, exp_avgs[i]._data, exp_avg_sqs[i]._data]
        if amsgrad:
            arrays.append(max_exp_avg_sqs[i]._data)
        for blocks, block_scratch in _blocked(xp, arrays, scratch):
            _adam_block(xp, *blocks[:4], blocks[4] if amsgrad else None, block_scratch, beta1=beta1, beta2=beta2,
                        lr=lr, weight_decay=weight_decay, eps=eps, maximize=maximize,
                        decoupled_weight_decay=decoupled_weight_decay, step_size=-step_size,
                        bias_correction2_sqrt=bc2)
    _bump_versions(params)
    _bump_versions(exp_avgs + exp_avg_sqs + (max_exp_avg_sqs if amsgrad else []))


def foreach_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, amsgrad, beta1, beta2, lr,
                 weight_decay, eps, maximize, decoupled_weight_decay=False):
    """Adam's update line by line over the whole list (torch's ``_multi_tensor_adam``)."""
    if not params:
        return
    from ember_optim._state import value

    xp = _namespace(params)
    ps, ms, vs = _arrays(params), _arrays(exp_avgs), _arrays(exp_avg_sqs)
    ds = [-g for g in _arrays(grads)] if maximize else _arrays(grads)
    for i in range(len(steps)):
        steps[i] += 1
    if weight_decay != 0:
        if decoupled_weight_decay:
            for p in ps:
                p *= 1 - lr * weight_decay
        else:
            ds = [d + weight_decay * p for d, p in zip(ds, ps)]
    for m, d in zip(ms, ds):
        m += (d - m) * (1 - beta1)
    for v, d in zip(vs, ds):
        v *= beta2
        v += d * d * (1 - beta2)
    used = vs
    if amsgrad:
        used = _arrays(max_exp_avg_sqs)
        for vmax, v in zip(used, vs):
            xp.maximum(vmax, v, out=vmax)
    for i, (p, m, v) in enumerate(zip(ps, ms, used)):
        step_size, bc2 = _adam_scalars(value(steps[i]), beta1, beta2, lr)
        denom = xp.sqrt(v) / bc2 + eps
        p -= step_size * (m / denom)
    _bump_versions(params)
    _bump_versions(exp_avgs + exp_avg_sqs + (max_exp_avg_sqs if amsgrad else []))


def check_flags(foreach, fused, param_groups):
    """PyTorch's construction-time check (torch/optim/optimizer.py)."""
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _check_fused_params(params):
    """PyTorch's step-time check of ``fused=True`` (``_init_group``)."""
    for p in params:
        if not p.is_floating_point():
            raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of "
                               f"supported devices: ['cpu', 'cuda'] but {p.dtype} and {p.device.type}")
