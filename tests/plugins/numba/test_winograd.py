"""ember-numba's compiled Winograd F(4x4, 3x3) transforms: registered for the cpu on
ember's three transform ops, equal to the NumPy kernels they replace (to rounding: the
additions run in another order) on odd shapes, both layouts, float32 and float64; the
NumPy kernels for what they do not take; and eager convolutions through them against
torch, values and gradients.

Tests for plugins/numba/src/ember_numba/winograd.py (PyTorch counterpart:
aten/src/ATen/native/DispatchStub.h, v2.13).
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember
from ember.native.convolution import algorithm as algorithms
from ember.native.convolution import winograd
from ember_numba import winograd as compiled
from tests.plugins.numba.kernel_bits import no_fallback

CASES = [  # (N, C, O, H, W, padding): sizes off the 4x4 blocks, padding 0 to 2, one channel
    (1, 1, 1, 3, 3, (0, 0)),
    (2, 3, 5, 7, 9, (1, 1)),
    (1, 4, 6, 10, 5, (0, 0)),
    (3, 2, 4, 5, 11, (2, 2)),
    (2, 5, 3, 8, 8, (1, 0)),
    (1, 1, 2, 1, 2, (2, 2)),
]
# relative to the largest magnitude: the transforms' additions in another order
BOUND = {"float32": 1e-6, "float64": 1e-14}


def _relative(got, expected):
    return np.abs(got - expected).max() / max(np.abs(expected).max(), 1e-30)


def _image(rng, shape, dtype, layout):
    x = rng.standard_normal(shape).astype(dtype)
    if layout == "channels_last":
        return np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    if layout == "sliced":  # neither layout: the compiled loop reads a contiguous copy
        return np.concatenate([x, x], axis=3)[:, :, :, ::2]
    return x


def test_it_serves_the_three_transform_ops_on_the_cpu():
    ember.nn.functional.conv2d  # builds the catalogues, which runs ember-numba's hook
    assert winograd.input_tiles_op.kernel_for("cpu") is compiled.input_tiles
    assert winograd.output_tiles_op.kernel_for("cpu") is compiled.output_tiles
    assert winograd.gradient_tiles_op.kernel_for("cpu") is compiled.gradient_tiles
    assert winograd.compiled_transforms(np)


@pytest.mark.parametrize("layout", ["nchw", "channels_last", "sliced"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[:5])) + f"p{c[5][0]}{c[5][1]}")
def test_each_transform_equals_the_numpy_kernel(case, dtype, layout, monkeypatch):
    N, C, O, H, W, padding = case
    OH, OW = H + 2 * padding[0] - 2, W + 2 * padding[1] - 2
    tiles = winograd.tile_counts(OH, OW, 4)
    rng = np.random.default_rng(0)
    x, grad = _image(rng, (N, C, H, W), dtype, layout), _image(rng, (N, O, OH, OW), dtype, layout)
    products = rng.standard_normal((36, N * tiles[0] * tiles[1], O)).astype(dtype)
    monkeypatch.setattr(winograd.input_tiles_op, "generic", no_fallback)  # the compiled loops run
    monkeypatch.setattr(winograd.output_tiles_op, "generic", no_fallback)
    monkeypatch.setattr(winograd.gradient_tiles_op, "generic", no_fallback)
    got = [compiled.input_tiles(np, x, padding=padding, m=4, tiles=tiles),
           compiled.gradient_tiles(np, grad, m=4, tiles=tiles)]
    got += [compiled.output_tiles(np, products, m=4, shape=(N, O, OH, OW), channels_last=cl) for cl in (False, True)]
    monkeypatch.undo()
    expected = [winograd._input_tiles(np, x, padding=padding, m=4, tiles=tiles),
                winograd._gradient_blocks(np, grad, m=4, tiles=tiles)]
    expected += [winograd._output_tiles(np, products, m=4, shape=(N, O, OH, OW), channels_last=cl)
                 for cl in (False, True)]
    for ours, numpy in zip(got, expected, strict=True):
        assert ours.shape == numpy.shape and ours.strides == numpy.strides and ours.dtype == numpy.dtype
        assert _relative(ours, numpy) < BOUND[dtype]


def test_what_the_loops_do_not_take_goes_to_the_numpy_kernels(monkeypatch):
    calls = []
    for op in (winograd.input_tiles_op, winograd.output_tiles_op, winograd.gradient_tiles_op):
        generic = op.generic
        monkeypatch.setattr(op, "generic", lambda *a, generic=generic, **k: calls.append(a[1]) or generic(*a, **k))
    rng = np.random.default_rng(0)
    half = rng.standard_normal((2, 3, 6, 6)).astype(np.float16)
    x = rng.standard_normal((2, 3, 6, 6))
    empty = np.zeros((0, 3, 6, 6))
    compiled.input_tiles(np, half, padding=(1, 1), m=4, tiles=(2, 2))  # float16
    compiled.input_tiles(np, x, padding=(1, 1), m=2, tiles=(3, 3))  # F(2x2)
    compiled.input_tiles(np, empty, padding=(1, 1), m=4, tiles=(2, 2))  # empty
    compiled.gradient_tiles(np, half, m=4, tiles=(2, 2))
    compiled.output_tiles(np, rng.standard_normal((36, 4, 3))[:, ::2], m=4, shape=(2, 3, 4, 4),
                           channels_last=False)  # products not laid out whole
    compiled.output_tiles(np, rng.standard_normal((16, 18, 3)), m=2, shape=(2, 3, 6, 6), channels_last=True)
    assert len(calls) == 6 and calls[0] is half and calls[2] is empty


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES[1:5], ids=lambda c: "x".join(map(str, c[:5])))
def test_eager_convolutions_through_the_compiled_transforms_match_torch(case, dtype, channels_last,
                                                                         monkeypatch):
    N, C, O, H, W, padding = case
    monkeypatch.setattr(ember.backends.cpu, "benchmark", True)  # eager Winograd is opt-in
    monkeypatch.setattr(algorithms, "measure_fastest", lambda runs, **kw: {"algorithm": "winograd_4x4",
                                                                          "seconds": {}})
    monkeypatch.setattr(algorithms, "SMALL", 0)
    for op in (winograd.input_tiles_op, winograd.output_tiles_op, winograd.gradient_tiles_op):
        monkeypatch.setattr(op, "generic", no_fallback)  # every transform runs compiled
    algorithms.eager_algorithm_cache().clear()
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in ((N, C, H, W), (O, C, 3, 3), (O,)))
    seed = rng.standard_normal((N, O, H + 2 * padding[0] - 2, W + 2 * padding[1] - 2)).astype(dtype)
    results = []
    for lib in (ember, torch):
        X, Wt, B = (lib.tensor(a) for a in (x, w, b))
        if channels_last:
            X = X.contiguous(memory_format=lib.channels_last)
        for t in (X, Wt, B):
            t.requires_grad_()
        y = lib.nn.functional.conv2d(X, Wt, B, padding=padding)
        grads = lib.autograd.grad(y, (X, Wt, B), lib.tensor(seed))
        results.append(([y.detach().numpy()] + [g.numpy() for g in grads], y.stride(), grads[0].stride()))
    chosen = {entry["algorithm"] for entry in algorithms.eager_algorithm_cache().values()}
    algorithms.eager_algorithm_cache().clear()
    assert chosen == {"winograd_4x4"}
    (ours, *our_strides), (theirs, *their_strides) = results
    assert our_strides == their_strides
    for got, expected in zip(ours, theirs, strict=True):
        assert _relative(got, expected) < {"float32": 5e-5, "float64": 1e-11}[dtype]


def test_disabling_the_plugin_gives_back_the_numpy_transforms():
    check = ("import ember, numpy\nfrom ember.native.convolution import winograd\n"
             "ember.nn.functional.conv2d(ember.randn(1, 1, 3, 3), ember.randn(1, 1, 3, 3))\n"
             "print(winograd.compiled_transforms(numpy))")
    for disabled, served in (("ember-numba", "False"), ("", "True")):
        result = subprocess.run([sys.executable, "-c", check], env={**os.environ, "EMBER_DISABLE_PLUGINS": disabled},
                                capture_output=True, text=True, check=True)
        assert result.stdout.strip() == served
