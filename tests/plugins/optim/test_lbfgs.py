"""LBFGS against torch, step for step: the same problem from the same start in both
libraries, parameters, returned losses and iteration counters compared after each
``step(closure)``; with and without the strong-Wolfe line search, a short history (so
old pairs are dropped), float32 and float64; the argument checks."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close


def _rosenbrock(lib, xy):
    x, y = xy[0], xy[1]
    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2


def _regression(lib, w, data):
    inputs, targets = data
    return ((lib.tanh(inputs @ w[0]) @ w[1] - targets) ** 2).mean()


def _run(lib, problem, start, steps, dtype, data=None, **options):
    params = [lib.tensor(s.astype(dtype), requires_grad=True) for s in start]
    data = None if data is None else tuple(lib.tensor(a.astype(dtype)) for a in data)
    opt = lib.optim.LBFGS(params, **options)

    def closure():
        opt.zero_grad()
        loss = problem(lib, params if len(params) > 1 else params[0], *([data] if data is not None else []))
        loss.backward()
        return loss

    trace = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[params[0]]
        trace.append(([p.detach().clone() for p in params], float(loss.detach()), state["n_iter"], state["func_evals"]))
    return trace


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("history_size", [100, 3])
def test_rosenbrock_step_for_step(line_search_fn, dtype, history_size):
    start = [np.array([-1.5, 2.0])]
    options = dict(line_search_fn=line_search_fn, history_size=history_size, max_iter=10,
                   lr=1 if line_search_fn else 0.1)
    # Rosenbrock's valley amplifies rounding differences (float64: 1e-15 after 18
    # iterations; float32: 2e-7 after 10) until a later line search takes another branch,
    # so the comparison stops at 20 (float64) or 10 (float32) iterations.
    steps = 2 if dtype == "float64" else 1
    ours = _run(ember, _rosenbrock, start, steps, dtype, **options)
    theirs = _run(torch, _rosenbrock, start, steps, dtype, **options)
    tol = 1e-9 if dtype == "float64" else 1e-4
    for step, ((e_params, e_loss, e_iter, e_evals), (t_params, t_loss, t_iter, t_evals)) in enumerate(
            zip(ours, theirs)):
        assert (e_iter, e_evals) == (t_iter, t_evals), f"step {step}"
        assert abs(e_loss - t_loss) <= tol * max(1.0, abs(t_loss)), f"step {step}"
        for a, b in zip(e_params, t_params):
            assert_close(a, b, rtol=tol, atol=tol, msg=f"step {step}: ")


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_small_network_fit_step_for_step(line_search_fn):
    rng = np.random.default_rng(0)
    data = (rng.standard_normal((32, 4)), rng.standard_normal((32, 1)))
    start = [rng.standard_normal((4, 8)) * 0.5, rng.standard_normal((8, 1)) * 0.5]
    ours = _run(ember, _regression, start, 3, "float64", data=data, line_search_fn=line_search_fn)
    theirs = _run(torch, _regression, start, 3, "float64", data=data, line_search_fn=line_search_fn)
    for (e_params, e_loss, e_iter, e_evals), (t_params, t_loss, t_iter, t_evals) in zip(ours, theirs):
        assert (e_iter, e_evals) == (t_iter, t_evals)
        assert abs(e_loss - t_loss) < 1e-10
        for a, b in zip(e_params, t_params):
            assert_close(a, b, rtol=1e-8, atol=1e-10)
    assert ours[-1][1] < ours[0][1]


def test_converged_start_returns_at_once():
    for lib in (torch, ember):
        x = lib.tensor([1.0, 1.0], requires_grad=True)
        opt = lib.optim.LBFGS([x])

        def closure():
            opt.zero_grad()
            loss = _rosenbrock(lib, x)
            loss.backward()
            return loss

        assert float(opt.step(closure).detach()) == 0.0
        assert opt.state[x]["func_evals"] == 1 and opt.state[x]["n_iter"] == 0


def test_argument_errors_like_torch():
    for lib in (torch, ember):
        w = lib.zeros(2, requires_grad=True)
        with pytest.raises(ValueError, match="Invalid learning rate: -1"):
            lib.optim.LBFGS([w], lr=-1)
        with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
            lib.optim.LBFGS([{"params": [w]}, {"params": [lib.zeros(1, requires_grad=True)]}])
        opt = lib.optim.LBFGS([w], line_search_fn="armijo")

        def closure():
            opt.zero_grad()
            loss = ((w - 1) ** 2).sum()
            loss.backward()
            return loss

        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(closure)
