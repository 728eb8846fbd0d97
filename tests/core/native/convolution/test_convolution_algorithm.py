"""Eager convolution's algorithm per shape (ember/native/convolution/algorithm.py and its
seam in ember/native/convolution/convolution.py): by default a fixed rule that never
times anything; with ``ember.backends.cpu.benchmark`` each algorithm forced on the three
products of a convolution, against torch and against im2col (the path it replaces), in
float32 and float64, NCHW and channels_last, odd shapes, bias or none, non-contiguous
inputs; gradcheck; which convolutions may leave im2col; the cache, the
``ember.backends.mkldnn.enabled`` switch and ``ember.use_deterministic_algorithms``."""

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.native.convolution import algorithm as algorithms
from ember.native.convolution import columns as kept_columns
from ember.native.convolution import winograd

ALGORITHMS = ["im2col", "winograd_4x4"]  # what eager may choose
# Relative to the largest magnitude (NOTE [ Winograd F(4x4, 3x3) ]).
TOLERANCE = {"float64": {name: 1e-11 for name in ALGORITHMS}, "float32": {"im2col": 5e-6, "winograd_4x4": 5e-5}}
CASES = [  # (N, C, O, H, W, padding, bias)
    (1, 1, 1, 3, 3, 0, True),
    (2, 3, 5, 7, 9, 1, True),
    (1, 4, 6, 10, 5, 0, False),
    (2, 2, 4, 5, 11, 2, True),
    (3, 5, 3, 8, 8, 1, False),
]


@pytest.fixture
def forced(monkeypatch):
    """Measure nothing: every eligible product takes the algorithm set on the returned
    dict where it is offered (im2col where not), and each measurement's options are
    recorded there too."""
    state = {"algorithm": "im2col", "measured": []}

    def pick(runs, **kwargs):
        state["measured"].append(tuple(runs))
        return {"algorithm": state["algorithm"] if state["algorithm"] in runs else "im2col", "seconds": {}}

    monkeypatch.setattr(algorithms, "measure_fastest", pick)
    monkeypatch.setattr(ember.backends.cpu, "benchmark", True)
    monkeypatch.setattr(algorithms, "SMALL", 0)  # the tiny test shapes are eligible too
    monkeypatch.setattr(algorithms, "EAGER_LAYOUTS", ("channels_last", "contiguous"))  # NCHW is opt-in
    algorithms.eager_algorithm_cache().clear()
    yield state
    algorithms.eager_algorithm_cache().clear()


def _relative(got, expected):
    return np.abs(got - expected).max() / max(np.abs(expected).max(), 1e-30)


def _run(lib, x, w, b, padding, channels_last, seed, slice_input=False):
    """Output and (input, weight, bias) gradients of conv2d in ``lib``."""
    X, W = lib.tensor(x), lib.tensor(w)
    if channels_last:
        X = X.contiguous(memory_format=lib.channels_last)
    B = None if b is None else lib.tensor(b).requires_grad_()
    X.requires_grad_()
    W.requires_grad_()
    source = X[:, :, 1:] if slice_input else X  # a non-contiguous view
    y = lib.nn.functional.conv2d(source, W, B, padding=padding)
    wanted = (X, W) if B is None else (X, W, B)
    grads = lib.autograd.grad(y, wanted, lib.tensor(seed[tuple(slice(0, s) for s in y.shape)]))
    return [y.detach().numpy()] + [g.numpy() for g in grads], y.stride(), grads[0].stride()


@pytest.mark.parametrize("slice_input", [False, True], ids=["contiguous", "sliced"])
@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_each_algorithm_matches_torch_and_im2col(forced, winograd_transforms, case, algorithm, dtype, channels_last,
                                                 slice_input):
    N, C, O, H, W, padding, bias = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, C, H + slice_input, W)).astype(dtype)
    w = rng.standard_normal((O, C, 3, 3)).astype(dtype)
    b = rng.standard_normal(O).astype(dtype) if bias else None
    seed = rng.standard_normal((N, O, H + 2 * padding, W + 2 * padding)).astype(dtype)
    forced["algorithm"] = algorithm
    got, y_stride, gx_stride = _run(ember, x, w, b, padding, channels_last, seed, slice_input)
    expected, t_stride, tgx_stride = _run(torch, x, w, b, padding, channels_last, seed, slice_input)
    with ember.backends.mkldnn.flags(enabled=False):
        replaced = _run(ember, x, w, b, padding, channels_last, seed, slice_input)[0]
    offered = ("im2col",) + algorithms.EAGER_WINOGRAD[dtype]
    assert forced["measured"] == [offered] * 2  # output and input's gradient; the weight's follows
    assert {key[0]: entry["algorithm"] for key, entry in algorithms.eager_algorithm_cache().items()} == \
        dict.fromkeys(("forward", "input_adjoint", "weight_adjoint"), algorithm)
    assert (y_stride, gx_stride) == (t_stride, tgx_stride)
    for ours, theirs, im2col in zip(got, expected, replaced):
        assert ours.dtype == theirs.dtype
        assert _relative(ours, theirs) < TOLERANCE[dtype][algorithm]
        assert _relative(ours, im2col) < TOLERANCE[dtype][algorithm]


def test_gradcheck_and_gradgradcheck_through_winograd(forced):
    algorithm = forced["algorithm"] = "winograd_4x4"
    x = ember.randn(2, 3, 6, 5, dtype=ember.float64, requires_grad=True)
    w = ember.randn(4, 3, 3, 3, dtype=ember.float64, requires_grad=True)
    b = ember.randn(4, dtype=ember.float64, requires_grad=True)

    def conv(x, w, b):
        return ember.nn.functional.conv2d(x, w, b, padding=1)

    assert gradcheck(conv, (x, w, b))
    assert gradgradcheck(conv, (x, w, b))
    assert {entry["algorithm"] for entry in algorithms.eager_algorithm_cache().values()} == {algorithm}


@pytest.mark.parametrize("kwargs, weight_shape", [
    (dict(stride=2, padding=1), (4, 4, 3, 3)),
    (dict(dilation=2, padding=2), (4, 4, 3, 3)),
    (dict(groups=2, padding=1), (4, 2, 3, 3)),
    (dict(padding=1), (4, 4, 5, 5)),
    (dict(padding=0), (4, 4, 1, 1)),
])
def test_convolutions_winograd_cannot_run_keep_im2col_unmeasured(forced, kwargs, weight_shape):
    forced["algorithm"] = "winograd_4x4"  # would be taken if anything were measured
    x = ember.randn(2, 4, 9, 9, requires_grad=True)
    w = ember.randn(*weight_shape, requires_grad=True)
    ember.nn.functional.conv2d(x, w, **kwargs).sum().backward()
    assert forced["measured"] == []


def test_input_gradient_past_the_kernels_reach_keeps_im2col(forced):
    # padding 3 > k - 1: no stride-1 "full" correlation, so only the output and the
    # weight's gradient may use Winograd (the input's is not even measured)
    forced["algorithm"] = "winograd_4x4"
    x = ember.randn(2, 3, 5, 5, dtype=ember.float64, requires_grad=True)
    w = ember.randn(2, 3, 3, 3, dtype=ember.float64, requires_grad=True)
    ember.nn.functional.conv2d(x, w, padding=3).sum().backward()
    roles = sorted(key[0] for key in algorithms.eager_algorithm_cache())
    assert roles == ["forward", "weight_adjoint"]
    xt, wt = torch.tensor(x.detach().numpy(), requires_grad=True), torch.tensor(w.detach().numpy(), requires_grad=True)
    torch.nn.functional.conv2d(xt, wt, padding=3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-11, atol=1e-11)


def test_a_shape_is_measured_once_and_an_input_without_grad_skips_its_gradient(forced):
    x = ember.randn(2, 3, 8, 8)  # a stem: the image needs no gradient
    w = ember.randn(4, 3, 3, 3, requires_grad=True)
    for _ in range(3):
        ember.nn.functional.conv2d(x, w, padding=1).sum().backward()
    roles = sorted(key[0] for key in algorithms.eager_algorithm_cache())
    assert roles == ["forward", "weight_adjoint"] and len(forced["measured"]) == 1  # the weight's follows


def test_nchw_convolutions_are_measured_where_compiled_transforms_serve_them(monkeypatch, winograd_transforms):
    monkeypatch.setattr(ember.backends.cpu, "benchmark", True)
    calls = []
    monkeypatch.setattr(algorithms, "measure_fastest", lambda runs, **kw: calls.append(tuple(runs)) or
                        {"algorithm": "im2col", "seconds": {}})
    algorithms.eager_algorithm_cache().clear()
    x = ember.randn(4, 16, 16, 16, requires_grad=True)  # 9.4 million multiplies: over SMALL
    w = ember.randn(16, 16, 3, 3, requires_grad=True)
    ember.nn.functional.conv2d(x, w, padding=1).sum().backward()
    compiled = winograd.compiled_transforms(np)
    assert compiled == (winograd_transforms == "installed")  # the test env has ember-numba
    # NCHW: measured only with compiled transforms, or when EAGER_LAYOUTS enables it
    assert calls == ([("im2col", "winograd_4x4")] * 2 if compiled else [])  # the weight's follows
    x_cl = x.detach().contiguous(memory_format=ember.channels_last).requires_grad_()
    ember.nn.functional.conv2d(x_cl, w, padding=1).sum().backward()
    assert calls[-2:] == [("im2col", "winograd_4x4")] * 2
    measured = len(calls)
    monkeypatch.setattr(algorithms, "EAGER_LAYOUTS", ("channels_last", "contiguous"))
    algorithms.eager_algorithm_cache().clear()
    ember.nn.functional.conv2d(x, w, padding=1)
    assert len(calls) == measured + 1
    algorithms.eager_algorithm_cache().clear()


def test_small_convolutions_float16_and_the_switch_keep_im2col(monkeypatch):
    monkeypatch.setattr(ember.backends.cpu, "benchmark", True)
    calls = []
    monkeypatch.setattr(algorithms, "measure_fastest", lambda runs, **kw: calls.append(runs) or
                        {"algorithm": "im2col", "seconds": {}})
    monkeypatch.setattr(algorithms, "EAGER_LAYOUTS", ("channels_last", "contiguous"))
    algorithms.eager_algorithm_cache().clear()
    x = ember.randn(2, 8, 8, 8)
    w = ember.randn(8, 8, 3, 3)
    ember.nn.functional.conv2d(x, w, padding=1)  # 73,728 multiplies: under SMALL
    monkeypatch.setattr(algorithms, "SMALL", 0)
    ember.nn.functional.conv2d(x.to(ember.float16), w.to(ember.float16), padding=1)
    with ember.backends.mkldnn.flags(enabled=False):
        assert not ember.backends.mkldnn.enabled
        ember.nn.functional.conv2d(x, w, padding=1)
    assert ember.backends.mkldnn.enabled and calls == []
    ember.nn.functional.conv2d(x, w, padding=1)
    assert len(calls) == 1
    algorithms.eager_algorithm_cache().clear()


def timed_by_cost(monkeypatch):
    """Let each candidate return what it costs in seconds, and time it by that, so the
    rule is tested without a clock (sleeps overshoot on a loaded machine)."""
    monkeypatch.setattr(algorithms, "_seconds", lambda run: run())


def test_measure_fastest_keeps_the_fastest_and_drops_the_far_slower_after_warm_up(monkeypatch):
    timed_by_cost(monkeypatch)
    calls = {"slow": 0, "fast": 0, "close": 0}

    def costing(name, seconds):
        def run():
            calls[name] += 1
            return seconds
        return run

    runs = {"slow": costing("slow", 0.02), "fast": costing("fast", 0.002), "close": costing("close", 0.003)}
    result = algorithms.measure_fastest(runs)
    assert result == {"algorithm": "fast", "seconds": {"slow": 0.02, "fast": 0.002, "close": 0.003}}
    # slow: the untimed warm-up and the first timed call; the others three turns more
    # (close is 50% slower than fast, outside the 10% margin that asks for more turns)
    assert calls == {"slow": 2, "fast": 5, "close": 5}
    assert algorithms.measure_fastest({"only": costing("fast", 0)}) == {"algorithm": "only", "seconds": {}}


def test_two_close_candidates_get_more_turns(monkeypatch):
    timed_by_cost(monkeypatch)
    calls = {"a": 0, "b": 0}

    def costing(name, seconds):
        def run():
            calls[name] += 1
            return seconds
        return run

    result = algorithms.measure_fastest({"a": costing("a", 0.0100), "b": costing("b", 0.0105)})
    assert result["algorithm"] == "a"
    assert calls == {"a": 8, "b": 8}  # warm-up, first timed call, then all six turns (within 10%)


def test_a_slow_warm_up_is_not_compared(monkeypatch):
    """Only the warm-up is slow (scratch buffers faulted in): the candidate is still timed."""
    timed_by_cost(monkeypatch)
    first = [True]

    def cold_then_fast():
        cost = 0.05 if first[0] else 0.001
        first[0] = False
        return cost

    result = algorithms.measure_fastest({"cold": cold_then_fast, "steady": lambda: 0.004})
    assert result["algorithm"] == "cold" and result["seconds"] == {"cold": 0.001, "steady": 0.004}


def test_a_winner_within_the_margin_of_im2col_leaves_im2col(monkeypatch):
    times = {"im2col": 1.0, "winograd_2x2": 0.93, "winograd_4x4": 0.99}
    monkeypatch.setattr(algorithms, "measure_fastest", lambda runs, **kw: {
        "algorithm": "winograd_2x2", "seconds": dict(times)})
    algorithms.eager_algorithm_cache().clear()
    assert algorithms.measured_choice("tie", lambda: dict.fromkeys(times)) == "im2col"
    times["winograd_2x2"] = 0.85
    assert algorithms.measured_choice("win", lambda: dict.fromkeys(times)) == "winograd_2x2"
    assert algorithms.measured_choice("tie", lambda: {}) == "im2col"  # cached: measured once
    algorithms.eager_algorithm_cache().clear()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_weights_gradient_reuses_the_forwards_tiles(forced, winograd_transforms, monkeypatch, dtype):
    forced["algorithm"] = "winograd_4x4"
    transformed = []
    transform = winograd.kernel_of
    monkeypatch.setattr(winograd, "kernel_of", lambda op, xp: transformed.append(op.name) or transform(op, xp))
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 9, 7)).astype(dtype), rng.standard_normal((4, 3, 3, 3)).astype(dtype)
    seed = rng.standard_normal((2, 4, 9, 7)).astype(dtype)
    got = _run(ember, x, w, None, 1, True, seed)[0]
    expected = _run(torch, x, w, None, 1, True, seed)[0]
    # forward: input and output tiles; input's gradient: the same two; weight's gradient:
    # only the output gradient's blocks, the input's tiles are the forward's
    assert transformed.count("winograd_input_tiles") == 2 and transformed.count("winograd_gradient_tiles") == 1
    for ours, theirs in zip(got, expected):
        assert _relative(ours, theirs) < TOLERANCE[dtype]["winograd_4x4"]
    assert kept_columns.kept_bytes() == 0  # taken by the backward, not left behind


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_the_weights_gradient_follows_its_forwards_measured_algorithm(forced, algorithm):
    forced["algorithm"] = algorithm
    x = ember.randn(2, 3, 8, 8, requires_grad=True)
    w = ember.randn(4, 3, 3, 3, requires_grad=True)
    y = ember.nn.functional.conv2d(x, w, padding=1)
    forced["algorithm"] = "winograd_4x4" if algorithm == "im2col" else "im2col"  # what a measurement would pick
    y.sum().backward()
    chosen = {key[0]: entry["algorithm"] for key, entry in algorithms.eager_algorithm_cache().items()}
    assert chosen["weight_adjoint"] == algorithm != chosen["input_adjoint"]
    assert len(forced["measured"]) == 2  # the forward and the input's gradient
    y = ember.nn.functional.conv2d(x.detach(), w, padding=1)  # cached: nothing measured
    algorithms.eager_algorithm_cache().clear()  # no forward on record: the weight's gradient is measured
    y.sum().backward()
    assert [key[0] for key in algorithms.eager_algorithm_cache()] == ["weight_adjoint"]
    assert len(forced["measured"]) == 3


# --- the default: a fixed rule, nothing timed ---------------------------------------


def _refuse_to_measure(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("an eager convolution measured by default")

    monkeypatch.setattr(algorithms, "measure_fastest", fail)
    monkeypatch.setattr(algorithms, "_seconds", fail)
    monkeypatch.setattr(algorithms, "SMALL", 0)  # every shape would be eligible
    algorithms.eager_algorithm_cache().clear()


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("kwargs, weight_shape", [
    (dict(padding=1), (16, 16, 3, 3)),  # where Winograd F(4x4) used to be measured, and picked
    (dict(stride=2, padding=1), (16, 16, 3, 3)),
    (dict(), (16, 16, 1, 1)),
    (dict(padding=2, dilation=2), (8, 16, 3, 3)),
])
def test_the_default_measures_nothing(monkeypatch, winograd_transforms, kwargs, weight_shape, channels_last):
    _refuse_to_measure(monkeypatch)
    assert ember.backends.cpu.benchmark is False  # the default, as torch.backends.cudnn.benchmark's
    x = ember.randn(4, 16, 16, 16)
    if channels_last:
        x = x.contiguous(memory_format=ember.channels_last)
    x.requires_grad_()
    w = ember.randn(*weight_shape, requires_grad=True)
    ember.nn.functional.conv2d(x, w, **kwargs).sum().backward()
    ember.nn.functional.conv_transpose2d(x, w.transpose(0, 1), **kwargs).sum().backward()
    assert algorithms.eager_algorithm_cache() == {}


@pytest.mark.parametrize("warn_only", [False, True])
def test_deterministic_algorithms_stop_the_benchmark(forced, winograd_transforms, warn_only):
    forced["algorithm"] = "winograd_4x4"  # what a measurement would pick
    x = ember.randn(2, 8, 8, 8, requires_grad=True).contiguous(memory_format=ember.channels_last)
    w = ember.randn(8, 8, 3, 3, requires_grad=True)
    before = ember.are_deterministic_algorithms_enabled(), ember.is_deterministic_algorithms_warn_only_enabled()
    ember.use_deterministic_algorithms(True, warn_only=warn_only)
    try:
        with ember.backends.mkldnn.flags(enabled=False):
            plain = ember.nn.functional.conv2d(x, w, padding=1)
        fixed = ember.nn.functional.conv2d(x, w, padding=1)
        fixed.sum().backward()
        assert forced["measured"] == [] and algorithms.eager_algorithm_cache() == {}
    finally:
        ember.use_deterministic_algorithms(before[0], warn_only=before[1])
    assert np.array_equal(fixed.detach().numpy(), plain.detach().numpy())  # channels_last rows either way
    measured = ember.nn.functional.conv2d(x, w, padding=1)  # the flag off again: benchmark measures
    assert forced["measured"] and not np.array_equal(measured.detach().numpy(), plain.detach().numpy())


def test_the_benchmark_may_choose_winograd(forced, winograd_transforms):
    forced["algorithm"] = "winograd_4x4"
    x = ember.randn(2, 8, 8, 8).contiguous(memory_format=ember.channels_last)
    w = ember.randn(8, 8, 3, 3)
    ember.nn.functional.conv2d(x, w, padding=1)
    assert [entry["algorithm"] for entry in algorithms.eager_algorithm_cache().values()] == ["winograd_4x4"]
