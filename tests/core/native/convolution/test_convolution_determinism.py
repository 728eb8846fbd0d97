"""Eager convolutions give the same bits in every process and round as torch's do
(NOTE [ Choosing a convolution algorithm ] in ember/native/convolution/algorithm.py):
the fixed rule by shape never times anything, so three fresh processes running the
same convolutions (NCHW and channels_last, 3x3 at stride 1 where Winograd used to be
measured and chosen, strided, 1x1, transposed; the output and both gradients) print
the same digests; and on ResNet-style shapes ember's float32 error against a float64
reference stays within a few times torch's own."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember
from ember.native.convolution import algorithm as algorithms

# Each case: (input shape, weight shape, kwargs, channels_last, transposed, dtype). The
# first ones are large enough (over algorithm.SMALL multiplies) that a measurement
# would have been taken.
CASES = [
    ((8, 32, 16, 16), (32, 32, 3, 3), {"padding": 1}, True, False, "float32"),
    ((8, 32, 16, 16), (32, 32, 3, 3), {"padding": 1}, False, False, "float32"),
    ((8, 32, 16, 16), (64, 32, 3, 3), {"stride": 2, "padding": 1}, False, False, "float32"),
    ((8, 32, 16, 16), (64, 32, 3, 3), {"stride": 2, "padding": 1}, True, False, "float32"),
    ((8, 32, 16, 16), (64, 32, 1, 1), {}, False, False, "float32"),
    ((8, 32, 8, 8), (32, 16, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}, False, True, "float32"),
    ((8, 32, 8, 8), (32, 16, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}, True, True, "float32"),
    ((4, 16, 16, 16), (16, 16, 3, 3), {"padding": 1}, True, False, "float64"),
    # channels_last a few images at a time (on one BLAS thread): col2im (O > C), the full correlation
    ((4, 16, 32, 32), (32, 16, 3, 3), {"padding": 1}, True, False, "float32"),
    ((4, 16, 32, 32), (16, 16, 3, 3), {"padding": 1}, True, False, "float32"),
    # NCHW's direct kernel (on one BLAS thread): channels off its block, rows off its segment
    ((3, 11, 9, 21), (13, 11, 3, 3), {"padding": 1}, False, False, "float32"),
]

CHILD = """
import hashlib, json, sys
import numpy as np
import ember
from ember.native.convolution import algorithm
cases = json.loads(sys.argv[1])
digests = []
for index, (x_shape, w_shape, kwargs, channels_last, transposed, dtype) in enumerate(cases):
    rng = np.random.default_rng(index)
    x = ember.tensor(rng.standard_normal(x_shape).astype(dtype))
    if channels_last:
        x = x.contiguous(memory_format=ember.channels_last)
    x.requires_grad_()
    w = ember.tensor(rng.standard_normal(w_shape).astype(dtype)).requires_grad_()
    conv = ember.nn.functional.conv_transpose2d if transposed else ember.nn.functional.conv2d
    y = conv(x, w, **kwargs)
    y.backward(ember.tensor(rng.standard_normal(tuple(y.shape)).astype(dtype)))
    digests.append([hashlib.sha256(np.ascontiguousarray(t.detach().numpy()).tobytes()).hexdigest()
                    for t in (y, x.grad, w.grad)])
print(json.dumps({"digests": digests, "measured": len(algorithm.eager_algorithm_cache())}))
"""


@pytest.mark.slow  # three fresh processes, a few seconds each
def test_the_same_convolutions_give_the_same_bits_in_every_process():
    runs = []
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(CASES)], env=dict(os.environ),
                              check=True, capture_output=True, text=True)
        runs.append(json.loads(done.stdout))
    assert runs[0]["measured"] == 0  # the default times nothing
    assert len(runs[0]["digests"]) == len(CASES)
    assert runs[1] == runs[0] and runs[2] == runs[0]


# ResNet-style layers: a stem, 3x3 at stride 1 (64 and 128 channels), the strided 3x3
# and the 1x1 shortcut of a downsampling block.
RESNET_CASES = [
    ((8, 3, 32, 32), (16, 3, 3, 3), {"padding": 1}),
    ((8, 16, 32, 32), (16, 16, 3, 3), {"padding": 1}),
    ((8, 64, 16, 16), (64, 64, 3, 3), {"padding": 1}),
    ((8, 64, 16, 16), (128, 64, 3, 3), {"stride": 2, "padding": 1}),
    ((8, 64, 16, 16), (128, 64, 1, 1), {"stride": 2}),
    ((8, 128, 8, 8), (128, 128, 3, 3), {"padding": 1}),
]


def _results(lib, x, w, grad, kwargs, channels_last, dtype):
    """The output and the (input, weight) gradients of conv2d in ``lib``, as float64 arrays."""
    X, W = lib.tensor(x.astype(dtype)), lib.tensor(w.astype(dtype))
    if channels_last:
        X = X.contiguous(memory_format=lib.channels_last)
    X.requires_grad_()
    W.requires_grad_()
    y = lib.nn.functional.conv2d(X, W, **kwargs)
    y.backward(lib.tensor(grad.astype(dtype)))
    return [t.detach().numpy().astype(np.float64) for t in (y, X.grad, W.grad)]


def _relative(got, expected):
    return np.abs(got - expected).max() / np.abs(expected).max()


def _errors(x_shape, w_shape, kwargs, channels_last):
    """(ember's, torch's) float32 relative errors against torch's float64, per result."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:]))
    grad = rng.standard_normal(torch.conv2d(torch.tensor(x), torch.tensor(w), **kwargs).shape)
    reference = _results(torch, x, w, grad, kwargs, channels_last, "float64")
    ours = _results(ember, x, w, grad, kwargs, channels_last, "float32")
    theirs = _results(torch, x, w, grad, kwargs, channels_last, "float32")
    return [(_relative(a, r), _relative(b, r)) for a, b, r in zip(ours, theirs, reference)]


def _bound(torch_error):
    # a few times torch's own rounding (a float32 sum of K terms by BLAS rounds within
    # about sqrt(K) ulps either way); never below one ulp of 1.0
    return 4 * max(torch_error, float(np.finfo(np.float32).eps))


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("case", RESNET_CASES, ids=lambda c: "x".join(map(str, c[0] + c[1][:1])) + str(c[2]))
def test_default_results_round_as_torchs(case, channels_last):
    for ours, theirs in _errors(*case, channels_last):
        assert ours <= _bound(theirs), (ours, theirs)


def test_the_bound_tells_winograd_apart(monkeypatch):
    """What the bound above is for: Winograd F(4x4), chosen by a benchmark, exceeds it."""
    monkeypatch.setattr(ember.backends.cpu, "benchmark", True)
    monkeypatch.setattr(algorithms, "EAGER_LAYOUTS", ("channels_last", "contiguous"))
    monkeypatch.setattr(algorithms, "measure_fastest", lambda runs, **kw: {"algorithm": "winograd_4x4",
                                                                          "seconds": {}})
    algorithms.eager_algorithm_cache().clear()
    try:
        errors = _errors(*RESNET_CASES[2], False)
    finally:
        algorithms.eager_algorithm_cache().clear()
    assert any(ours > _bound(theirs) for ours, theirs in errors), errors
