"""Convolution algorithms chosen by measurement, cached per shape: the timing rule that
eager convolutions (ember/native/convolution/convolution.py) and ``ember.compile``
(ember/compiler/passes/conv_algorithm.py) share, and eager's own cache.

PyTorch counterpart: torch/backends/cudnn/__init__.py (``benchmark``: cuDNN times its
algorithms per shape and caches the winner) and aten/src/ATen/native/cudnn/Conv_v7.cpp
(the per-shape cache) (v2.13). torch's CPU convolutions do not measure: they call
oneDNN's direct kernel (or, with ``torch.backends.mkldnn.enabled = False``, im2col and
GEMM). ember measures on the CPU too, where its fastest algorithm depends on the shape.

# NOTE [ Choosing a convolution algorithm by measurement ]
# Which algorithm wins depends on the shape, the BLAS and the machine: Winograd saves
# multiplies but its products are smaller ((tiles, C) @ (C, O), 16 or 36 of them, where
# the direct convolution does one with nine times the columns), its transforms cost
# passes over memory, and F(4x4)'s weights are 4x larger than the direct ones. Small
# BLAS products run far below peak, so the count of multiplies alone mispredicts. So,
# like cuDNN's benchmark mode and TensorRT's builder, ember times every algorithm that
# applies (one untimed warm-up call, then one timed call after which one more than
# twice the fastest is dropped, then the best of three calls, of up to six while the
# two fastest are within 10% of each other, taken in turns so that a burst of load
# hits every algorithm alike),
# keeps the fastest (eager ember: only if 10% faster than im2col, whose rounding is
# torch's), and caches the choice under the shape, so a
# model of many equal layers is measured once per distinct layer. Convolutions of
# fewer than 2^20 multiplies are not measured: there is nothing to win, and timing
# microsecond kernels measures the timer. Eager ember measures on the first call of a
# shape, for each of the convolution's three products (the output, the input's
# gradient and the weight's) apart, in channels_last, and in NCHW where compiled
# transforms serve it (EAGER_LAYOUTS says why);
# ``ember.compile`` measures at compile time on the example input (conv_algorithm.py
# there). ``ember.backends.mkldnn.enabled = False`` turns eager's choice off (im2col
# everywhere), as the same flag sends torch's CPU
# convolutions from oneDNN to im2col.
"""

import time

from ember.native.convolution import winograd

# Convolutions of fewer multiplies than this are not measured: they keep im2col.
SMALL = 1 << 20

# Eager convolutions leave im2col (torch-like rounding) only for an algorithm measured
# at least this much faster. The first-call timing flatters Winograd: on the 32->64
# NCHW layer of bench/conv_layer.py it measured F(4x4)'s forward 10% faster, and the
# training step then ran 6% slower with it (interleaved A/B, loaded machine).
MARGIN = 0.10

# (role, shapes, layout, dtype, ...) -> {"algorithm": name, "seconds": {algorithm: best time}}
_EAGER_CHOICES = {}


# The algorithms eager convolutions choose from, besides im2col, per dtype. F(2x2) is
# left out: measured on conv_layer's 32->64 and ResNet-18's 3x3 layers, NCHW and
# channels_last, it never beat both im2col and F(4x4), and timing it made a first
# training step longer (ember.compile still measures it).
EAGER_WINOGRAD = {"float32": ("winograd_4x4",), "float64": ("winograd_4x4",)}

# The layouts whose eager convolutions may choose Winograd with NumPy's transforms.
# NCHW is left out, by interleaved A/B in one process on a loaded 2-core machine: in
# channels_last every run gained 14-25% (conv_layer 1.18-1.51x torch against
# 1.51-1.90x), in NCHW the results split (conv_layer slower in 5 of 6 runs; the
# ResNet-18 step 2.6% slower over 15 rounds at load 5, 8% faster over 9 at load 4):
# NumPy's NCHW transforms transpose what channels_last copies in whole runs of
# channels. Compiled transforms (ember-numba, NOTE [ Compiled Winograd transforms ])
# fold those transposes into their loops, and with them NCHW is measured too
# (``_measured_layout``): conv_layer 1.05x torch against 1.50x with im2col, the
# ResNet-18 step 0.89x against 1.39x, in one process each at load 3.5-5; against
# the NCHW im2col of a few images at a time (convolution_images.py) that came
# after, the two are close and the measurement picks either: conv_layer 1.07-1.09x
# (im2col alone 1.07-1.24x), ResNet-18 0.98x (im2col alone 1.00x), load 3-4. Add
# "contiguous" to measure NCHW convolutions with NumPy's transforms as well.
EAGER_LAYOUTS = ("channels_last",)


def eager_options(xp, dtype, weight_shape, geometry, groups, winograd_applies=True, channels_last=False):
    """The algorithms an eager convolution chooses from: im2col alone, unless
    ``ember.backends.mkldnn.enabled``, the convolution's layout is in ``EAGER_LAYOUTS``,
    the array is a NumPy float32/float64 one, Winograd applies (3x3, stride 1, dilation
    1, one group) and the convolution makes at least ``SMALL`` multiplies."""
    g = geometry
    if g.N * g.OH * g.OW * weight_shape[0] * weight_shape[1] * 9 < SMALL:
        return ("im2col",)  # first: the cheapest test, and the one every tiny convolution stops at
    from ember.backends import mkldnn

    layout = "channels_last" if channels_last else "contiguous"
    if not (mkldnn.enabled and _measured_layout(xp, layout) and winograd_applies and xp.__name__ == "numpy"
            and str(dtype) in EAGER_WINOGRAD and winograd.applies(weight_shape, (g.sh, g.sw), (g.dh, g.dw), groups)):
        return ("im2col",)
    return ("im2col",) + EAGER_WINOGRAD[str(dtype)]


def _measured_layout(xp, layout):
    """Whether eager convolutions in ``layout`` choose by measurement: the layouts of
    ``EAGER_LAYOUTS``, and NCHW too where compiled transforms fold its transposes."""
    return layout in EAGER_LAYOUTS or (layout == "contiguous" and winograd.compiled_transforms(xp))


def measure_fastest(runs, repeats=3, most=6, margin=0.1, prune=2.0):
    """``{"algorithm": fastest name, "seconds": {name: best time}}`` for ``runs``, a dict
    of name -> callable: one untimed warm-up call each (it makes any scratch buffers),
    one timed call each (a candidate ``prune`` times slower than the fastest is timed no
    further), then the best of ``repeats`` calls, taken in turns; while the two fastest
    are within ``margin`` of each other, more turns, up to ``most``."""
    if len(runs) == 1:
        return {"algorithm": next(iter(runs)), "seconds": {}}
    # The warm-up is not compared: its page faults on fresh scratch made the compiler's
    # F(4x4) on 64->64 at 32x32 look 5x slower than im2col (204 ms against 40 steady).
    for run in runs.values():
        run()
    best = {name: _seconds(run) for name, run in runs.items()}
    fastest = min(best.values())
    timed = {name: run for name, run in runs.items() if best[name] <= prune * fastest}
    for turn in range(most):
        for name, run in timed.items():
            best[name] = min(best[name], _seconds(run))
        if len(timed) == 1:
            break
        first, second = sorted(best[name] for name in timed)[:2]
        if turn + 1 >= repeats and second > first * (1 + margin):
            break
    return {"algorithm": min(best, key=best.get), "seconds": best}


def _seconds(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def eager_algorithm_cache():
    """Eager convolutions' per-shape choices so far in this process (a dict; ``clear()``
    it to measure again)."""
    return _EAGER_CHOICES


# NOTE [ The weight's gradient follows the forward ]
# Each forward keeps, for the weight's gradient, what its own algorithm will need
# again: im2col its columns (convolution_columns.py), Winograd its input tiles (NOTE
# [ The forward's tiles, kept for the weight's gradient ] in winograd.py). A weight
# gradient by the other algorithm builds its operand again, a cost the three products'
# separate measurements do not see: on bench/conv_layer.py's NCHW layer, where the two
# measured within 1-15% of each other product by product, the mixes they chose (a
# Winograd forward with an im2col weight gradient, or the reverse) ran the step 12-30%
# slower than either algorithm throughout (1.34 and 1.61x torch against 1.20 and
# 1.24x for im2col alone, same processes, load 3.6-4). So the weight's gradient takes
# the algorithm its forward was measured to, where that forward was measured; the
# input's gradient, which reads nothing kept, is measured on its own.


def choose(key, make_runs):
    """The cached algorithm for ``key``, measured on first use over ``make_runs()``
    (name -> callable, im2col among them): the fastest, if ``MARGIN`` faster than
    im2col, else im2col; a weight's gradient takes its forward's algorithm where that
    was measured (NOTE [ The weight's gradient follows the forward ])."""
    entry = _EAGER_CHOICES.get(key)
    forward = _EAGER_CHOICES.get(("forward",) + key[1:]) if entry is None and key[0] == "weight_adjoint" else None
    if forward is not None:
        entry = _EAGER_CHOICES[key] = {"algorithm": forward["algorithm"], "seconds": {}}
    if entry is None:
        entry = measure_fastest(make_runs())
        seconds = entry["seconds"]
        if seconds and seconds[entry["algorithm"]] > (1 - MARGIN) * seconds["im2col"]:
            entry["algorithm"] = "im2col"
        _EAGER_CHOICES[key] = entry
    return entry["algorithm"]


# NOTE [ Loops of products only on one BLAS thread ]
# A kernel may split one large product into a few smaller ones (a few images at a
# time) to keep its intermediate in cache. With one BLAS thread that only pays. With
# more, every product wakes BLAS's threads and waits for all of them: on the loaded
# 2-core machine the 32->64 input adjoint done 11 chunks at a time took 347 ms on two
# threads against 102 ms in one product (and 74 against 86 on one thread). So such
# loops run only where NumPy's BLAS has one thread, read through threadpoolctl (the
# pools are looked up once; reading the count costs about a microsecond).
_BLAS_POOLS = []


def one_blas_thread():
    """Whether the BLAS pools NumPy's products run on have one thread each (NOTE [ Loops
    of products only on one BLAS thread ])."""
    if not _BLAS_POOLS:
        from threadpoolctl import ThreadpoolController

        _BLAS_POOLS.append(ThreadpoolController().select(user_api="blas").lib_controllers)
    return all(pool.num_threads == 1 for pool in _BLAS_POOLS[0])
