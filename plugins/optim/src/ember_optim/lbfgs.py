"""L-BFGS: a quasi-Newton method that builds its step from the last ``history_size``
steps and gradient changes, with an optional strong-Wolfe line search.

PyTorch counterpart: torch/optim/lbfgs.py (v2.13). The iterations, stopping tests,
history handling and the line search (bracketing, then zoom with cubic
interpolation, Nocedal & Wright algorithms 3.5 and 3.6) follow PyTorch's step for step,
with the scalars kept as 0-d tensors of the parameters' dtype as PyTorch keeps them,
so a run gives PyTorch's iterates. ember has no complex or sparse parameters.
"""

from ember_optim.optimizer import Optimizer, optimizer_step

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to
    ``bounds`` (default: between x1 and x2); the midpoint when the cubic has none."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(position, low), high)


class _Bracket:
    """An interval of step sizes with the loss, gradient and slope at each end."""

    def __init__(self, points):
        self.t, self.f, self.g, self.gtd = (list(column) for column in zip(*points))

    def ends(self):
        """(low, high): the end with the lower loss first."""
        return (0, 1) if self.f[0] <= self.f[-1] else (1, 0)

    def set(self, index, t, f, g, gtd):
        self.t[index], self.f[index], self.g[index], self.gtd[index] = t, f, g, gtd


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step size ``t`` along ``d`` meeting the strong Wolfe conditions (sufficient
    decrease ``c1``, curvature ``c2``). ``evaluate(t)`` returns the loss and flat gradient
    at ``x + t d``. Returns ``(loss, gradient, t, evaluations)``."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = evaluate(t)
    evaluations = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    bracket = None
    iteration = 0
    # 1. bracketing: grow t until an interval holds a point meeting the conditions
    while iteration < max_ls:
        # (the order of the tests matters: a point meeting the conditions with an
        # ascending slope ends the search, it does not start a bracket)
        if f_new > (f + c1 * t * gtd) or (iteration > 1 and f_new >= f_prev):
            bracket = _Bracket([(t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new.clone(), gtd_new)])
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = _Bracket([(t, f_new, g_new, gtd_new)])
            done = True
            break
        if gtd_new >= 0:
            bracket = _Bracket([(t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new.clone(), gtd_new)])
            break
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        f_prev, g_prev, gtd_prev = f_new, g_new.clone(), gtd_new
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = g_new.dot(d)
        iteration += 1
    if iteration == max_ls:  # ran out of evaluations: the interval [0, t]
        bracket = _Bracket([(0, f, g, None), (t, f_new, g_new, None)])
    # 2. zoom: shrink the bracket by cubic interpolation until a point meets the conditions
    low, high = bracket.ends()
    insufficient_progress = False
    while not done and iteration < max_ls:
        if abs(bracket.t[1] - bracket.t[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket.t[0], bracket.f[0], bracket.gtd[0], bracket.t[1], bracket.f[1], bracket.gtd[1])
        # Keep t away from the ends: if it lands within 10% of the interval of one, move
        # it there (at once if the last step already made too little progress).
        top, bottom = max(bracket.t), min(bracket.t)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient_progress or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = g_new.dot(d)
        iteration += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket.f[low]:
            bracket.set(high, t, f_new, g_new.clone(), gtd_new)
            low, high = bracket.ends()
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket.t[high] - bracket.t[low]) >= 0:
                bracket.set(high, bracket.t[low], bracket.f[low], bracket.g[low], bracket.gtd[low])
            bracket.set(low, t, f_new, g_new.clone(), gtd_new)
    return bracket.f[low], bracket.g[low], bracket.t[low], evaluations


class LBFGS(Optimizer):
    r"""Limited-memory BFGS over all parameters as one flat vector.

    Each ``step(closure)`` runs up to ``max_iter`` iterations::

        d = -H g       H: the inverse-Hessian estimate from the last ``history_size``
                       pairs (s = step, y = change of gradient) by the two-loop recursion,
                       scaled by H_diag = y.s / y.y of the newest pair (d = -g at first)
        t = lr         (first iteration: min(1, 1 / |g|_1) * lr)
        t = strong-Wolfe line search along d, if line_search_fn="strong_wolfe"
        x = x + t d

    and stops early when ``|g|_max <= tolerance_grad``, when the step or the loss change
    is below ``tolerance_change``, when ``g.d > -tolerance_change`` (not a descent
    direction), or after ``max_eval`` closure calls.

    Args:
        params: the parameters (one group: LBFGS has no per-group options).
        lr: step length (default 1).
        max_iter: iterations per ``step`` (default 20).
        max_eval: closure calls per ``step`` (default ``max_iter * 5 // 4``).
        tolerance_grad, tolerance_change: the stopping thresholds above.
        history_size: pairs kept for the Hessian estimate (default 100).
        line_search_fn: None or ``"strong_wolfe"``.

    >>> import ember
    >>> from ember_optim import LBFGS
    >>> x = ember.tensor([1.5, -0.5], requires_grad=True)
    >>> opt = LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((x - ember.tensor([3.0, 2.0])) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 4) for v in x.tolist()]
    [3.0, 2.0]
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # --- the parameters as one flat vector --------------------------------------------
    def _flat_grad(self):
        import ember

        return ember.cat([p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1) for p in self._params])

    def _add_to_params(self, step_size, update):
        offset = 0
        for p in self._params:
            p.add_(update[offset:offset + p.numel()].view_as(p), alpha=float(step_size))
            offset += p.numel()

    def _evaluate_along(self, closure, x, d, t):
        """Loss and flat gradient at ``x + t d``; the parameters are put back to ``x``."""
        self._add_to_params(t, d)
        loss = float(closure())
        flat_grad = self._flat_grad()
        for p, value in zip(self._params, x):
            p.copy_(value)
        return loss, flat_grad

    # --- the step ---------------------------------------------------------------------
    def _direction(self, state, flat_grad, history_size):
        """Update the history with the last step, then the two-loop recursion's ``-H g``."""
        if state["n_iter"] == 1:
            state.update(old_dirs=[], old_stps=[], ro=[], H_diag=1)
            return flat_grad.neg()
        y = flat_grad.sub(state["prev_flat_grad"])
        s = state["d"].mul(state["t"])
        ys = y.dot(s)
        if ys > 1e-10:  # keep the pair only if the curvature is positive
            if len(state["old_dirs"]) == history_size:
                for key in ("old_dirs", "old_stps", "ro"):
                    state[key].pop(0)
            state["old_dirs"].append(y)
            state["old_stps"].append(s)
            state["ro"].append(1.0 / ys)
            state["H_diag"] = ys / y.dot(y)
        old_dirs, old_stps, ro = state["old_dirs"], state["old_stps"], state["ro"]
        al = state.setdefault("al", [None] * history_size)
        q = flat_grad.neg()
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-float(al[i]))
        r = q.mul(state["H_diag"])
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=float(al[i] - be_i))
        return r

    @optimizer_step
    def step(self, closure):
        """Run up to ``max_iter`` iterations; ``closure`` recomputes the loss and its
        gradients (zero them first) and returns the loss. Returns the first loss."""
        group = self.param_groups[0]
        lr = float(group["lr"])
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        def evaluate():
            return self._evaluate(closure)

        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            d = state["d"] = self._direction(state, flat_grad, group["history_size"])
            if state.get("prev_flat_grad") is None:
                state["prev_flat_grad"] = flat_grad.clone()
            else:
                state["prev_flat_grad"].copy_(flat_grad)
            state["prev_loss"] = prev_loss = loss
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                state["t"] = t
                break
            evaluations = 0
            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x = [p.clone() for p in self._params]
                loss, flat_grad, t, evaluations = _strong_wolfe(
                    lambda step: self._evaluate_along(evaluate, x, d, step), t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_to_params(t, d)
                optimal = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_to_params(t, d)
                optimal = False
                if n_iter != max_iter:  # re-evaluate, unless this was the last iteration
                    loss = float(evaluate())
                    flat_grad = self._flat_grad()
                    optimal = flat_grad.abs().max() <= tolerance_grad
                    evaluations = 1
            state["t"] = t
            current_evals += evaluations
            state["func_evals"] += evaluations
            if (n_iter == max_iter or current_evals >= max_eval or optimal
                    or d.mul(t).abs().max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change):
                break
        return orig_loss
