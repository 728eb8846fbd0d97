"""What the ``foreach`` and ``fused`` paths of every optimizer share: walking the
parameters whole or in cache blocks, reusable scratch memory, ember's in-place
``lerp_``/``addcmul_``/``addcdiv_`` written out on raw arrays, and torch's flag checks.

PyTorch counterpart: the ``_multi_tensor_*`` and ``_fused_*`` functions of
torch/optim/sgd.py, adam.py, rmsprop.py and adagrad.py (v2.13), whose kernels are
aten/src/ATen/native/ForeachOpsKernels.cpp, aten/src/ATen/native/cpu/FusedSGDKernel.cpp
and aten/src/ATen/native/cpu/FusedAdamKernel.cpp; each optimizer's own array kernel is
in fused_sgd.py, fused_adam.py, fused_rmsprop.py and fused_adagrad.py.

# NOTE [ foreach and fused, on NumPy ]
# The single-tensor loop (sgd.py, adam.py, ...) runs each line of the algorithm as an
# ember op on one parameter: a dispatch, a version bump and a fresh temporary per line.
# PyTorch offers two faster paths, and ember mirrors both on the parameters' raw arrays
# (no dispatch, no autograd bookkeeping), with one *array kernel* per optimizer that
# writes every line as a NumPy call into its target or into scratch memory:
# - foreach: the kernel runs on each whole parameter, one call per line: the memory
#   traffic of the loop without its overhead (torch's `_foreach_*` list ops);
# - fused: the kernel runs on one block of BLOCK elements of a parameter at a time, so
#   each block's lines reuse what the previous line left in cache (torch's fused CPU
#   kernels keep it in SIMD registers instead).
# The kernels compute the single-tensor loop's expressions in its order with the same
# roundings (each ufunc is correctly rounded, elementwise), so their results are
# bit-identical to the loop's: tests/plugins/optim/test_fused.py checks this with
# assert_array_equal. The scratch is one set of flat arrays per call, as large as the
# largest parameter (or one block), cut into views; with the cpu backend's caching
# allocator (ember_numpy/allocator.py) that costs no page faults. Each update bumps
# every parameter's and buffer's version counter once.
"""

import numpy as np

from ember.native.pointwise.unary import call_quietly

BLOCK = 262144  # elements per fused block, chosen by measurement (NOTE [ The fused block size ])

# NOTE [ The fused block size ]
# A block must be large enough that Python's per-call overhead (about a microsecond per
# NumPy call, ~13 calls per Adam block) is small against the call's arithmetic, and
# small enough that a block of every array stays in cache between lines. Adam's kernel
# on one float32 parameter of 11M elements (ResNet-18's size), one thread: whole arrays
# 46 ms; blocks of 16K 38 ms, 64K 32 ms, 256K 31 ms. On the MLP's 670K parameters
# (bench/optim_step.py) 16K and 32K blocks lost to whole arrays and 256K was level
# with them: the level-2 cache (512 KiB) is too small for a block of six arrays that
# is worth a call, the shared level-3 cache holds 256K blocks.


def choose_path(group, params, grads):
    """``"fused"``, ``"foreach"`` or ``"loop"``: the group's ``fused=True`` or
    ``foreach=True``, the loop for ``foreach=False``, and for the defaults (None) the
    fused path wherever it is bit-identical to the loop (NOTE [ ember's default is the
    fused path ])."""
    if group.get("fused"):
        return "fused"
    foreach = group.get("foreach")
    if foreach:
        return "foreach"
    if foreach is None and _bit_identical_to_the_loop(params, grads):
        return "fused"
    return "loop"


# NOTE [ ember's default is the fused path ]
# PyTorch picks the single-tensor loop when foreach and fused are None on the CPU (and
# foreach on CUDA). On NumPy the loop costs a dispatch, a version bump and a temporary
# per line per parameter, while the array kernels compute the same roundings in the
# same order on the raw arrays, so their parameters and state are bit-identical to the
# loop's (tests/plugins/optim/test_fused.py). So with the defaults, SGD, Adam, AdamW,
# RMSprop and Adagrad run the fused path, the fastest (NOTE [ The fused block size ]);
# the group options stay None, as torch's, and foreach=False still selects the loop.
# That holds (and is tested) for float32 and float64 parameters on the cpu backend with
# gradients of their dtype; other dtypes (float16 and bfloat16 compute in float32 in
# ember's ops) and other backends keep the loop.
# Neither path is bit-identical to torch's loop: torch's CPU kernels fuse a multiply
# and an add into one rounding (fma) in lerp_, addcmul_ and add(alpha=), and its float32
# sqrt is not correctly rounded, so the two differ by about an ulp per step.


def _bit_identical_to_the_loop(params, grads):
    device = None  # the last device found on NumPy: parameters usually share one
    for p, g in zip(params, grads):
        dtype = p._data.dtype
        if dtype != g._data.dtype or dtype not in _LOOP_IDENTICAL_DTYPES:
            return False
        if p._device is not device:
            if p._device.backend.xp is not np:
                return False
            device = p._device
    return True


_LOOP_IDENTICAL_DTYPES = (np.float32, np.float64)


def namespace(tensors):
    return tensors[0]._device.backend.xp


def bump_versions(tensors):
    for t in tensors:
        t._version_counter[0] += 1


def run_kernel(xp, kernel, arrays, options, scratch_count, *, fused):
    """``kernel(xp, *arrays[i], *scratch, **options[i])`` for each parameter ``i``: on the
    whole arrays, or on blocks of BLOCK elements when ``fused`` (NumPy, all C-contiguous
    arrays; a transposed parameter goes whole; a kernel whose ``in_blocks`` is False, a
    compiled loop that makes one pass, gets whole parameters: blocks only keep a line's
    output in cache for the next line). ``arrays[i]`` starts with the
    parameter's array (None stands for a buffer an option turned off); ``scratch`` is
    ``scratch_count`` arrays of the parameter's shape (or the block's), views of flat
    memory that all parameters share."""
    if arrays:
        blocked = fused and xp is np and getattr(kernel, "in_blocks", True)
        call_quietly(xp, _run_kernel, xp, kernel, arrays, options, scratch_count, blocked)


def _run_kernel(xp, kernel, arrays, options, scratch_count, blocked):
    # a parameter goes whole when it fits in a block, or can't be cut into flat blocks
    # (not C-contiguous: a transposed or channels_last weight); the scratch fits the
    # largest whole one
    whole = [a[0].size <= BLOCK or not (blocked and all(b is None or b.flags.c_contiguous for b in a))
             for a in arrays]
    size = max(a[0].size if w else BLOCK for a, w in zip(arrays, whole))
    flat = {}  # silent on inf/NaN like PyTorch (call_quietly)
    for parameter_arrays, parameter_options, parameter_whole in zip(arrays, options, whole):
        p = parameter_arrays[0]
        if p.dtype not in flat:
            flat[p.dtype] = [xp.empty(size, p.dtype) for _ in range(scratch_count)]
        scratch = flat[p.dtype]
        if parameter_whole:
            shape, size = p.shape, p.size
            kernel(xp, *parameter_arrays, *[f[:size].reshape(shape) for f in scratch], **parameter_options)
            continue
        # a parameter in blocks: flat views of every array (all C-contiguous)
        flat_arrays = [a if a is None else a.reshape(-1) for a in parameter_arrays]
        for start in range(0, p.size, BLOCK):
            stop = min(start + BLOCK, p.size)
            kernel(xp, *[a if a is None else a[start:stop] for a in flat_arrays],
                   *[f[:stop - start] for f in scratch], **parameter_options)


# --- ember's in-place pointwise ops, written out on arrays ----------------------------
# Each is the arithmetic of the op's fast path in core/src/ember/native/pointwise/ternary.py
# (_lerp_into, _add_combined), with the temporary in `scratch`.


def lerp_into(xp, a, b, weight, scratch):
    """``a.lerp_(b, weight)``: ``a + weight * (b - a)``, from ``b``'s end for large weights."""
    xp.subtract(b, a, out=scratch)
    if abs(weight) < 0.5:
        xp.multiply(scratch, weight, out=scratch)
        xp.add(a, scratch, out=a)
    else:
        xp.multiply(scratch, 1 - weight, out=scratch)
        xp.subtract(b, scratch, out=a)


def addcmul_into(xp, a, b, c, value, scratch):
    """``a.addcmul_(b, c, value=value)``: ``a + (value * b) * c``."""
    _add_combined(xp, xp.multiply, a, b, c, value, scratch)


def addcdiv_into(xp, a, b, c, value, scratch):
    """``a.addcdiv_(b, c, value=value)``: ``a + (value * b) / c``."""
    _add_combined(xp, xp.divide, a, b, c, value, scratch)


def _add_combined(xp, combine, a, b, c, value, scratch):
    if value != 1:
        xp.multiply(b, value, out=scratch)
        combine(scratch, c, out=scratch)
    else:
        combine(b, c, out=scratch)
    xp.add(a, scratch, out=a)


def working_gradient(xp, p, g, s, t, *, maximize, weight_decay):
    """The gradient a kernel's update uses, as the loops compute it first: ``-g`` when
    maximizing, plus ``weight_decay * p`` (L2); in ``s`` unless it is ``g`` itself."""
    d = g
    if maximize:
        xp.negative(g, out=s)
        d = s
    if weight_decay != 0:
        add_scaled(xp, d, p, weight_decay, out=s, scratch=t)  # grad.add(param, alpha=weight_decay)
        d = s
    return d


def add_scaled(xp, a, b, alpha, out, scratch):
    """``out = a.add(b, alpha=alpha)``: ``a + b * alpha`` (ember's add with alpha)."""
    if alpha != 1:
        xp.multiply(b, alpha, out=scratch)
        b = scratch
    xp.add(a, b, out=out)


# --- torch's checks -------------------------------------------------------------------


def check_flags(foreach, fused, param_groups):
    """PyTorch's construction-time check (torch/optim/optimizer.py)."""
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def check_fused_params(params):
    """PyTorch's step-time check of ``fused=True`` (``_init_group``)."""
    for p in params:
        if not p.is_floating_point():
            raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of "
                               f"supported devices: ['cpu', 'cuda'] but {p.dtype} and {p.device.type}")
