"""Forward-mode AD (``ember.autograd.forward_ad``) against torch.autograd.forward_ad on
the same inputs and tangents: primals and tangents of every rule, views and in-place
writes, custom Functions' ``jvp``, ``ember.func.jvp``/``jacfwd`` and the errors.

PyTorch counterpart: test/autograd/test_forward_ad.py ideas, torch 2.13 as the oracle.
"""

import numpy as np
import pytest
import torch

import ember
from tests.core.autograd.autograd_parity import assert_same_error

RNG = np.random.default_rng(0)
POS = {"log", "sqrt", "rsqrt", "pow", "div", "norm"}


def _arrays(shape, dtype, positive=False):
    a = RNG.standard_normal(shape).astype(dtype)
    return np.abs(a) + 0.5 if positive else a


def _run(lib, fn, primals, tangents, dtype):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(p), lib.tensor(t)) for p, t in zip(primals, tangents)]
        out = fn(lib, *duals)
        out = out[0] if isinstance(out, tuple) else out
        primal, tangent = fw.unpack_dual(out)
        return primal.detach().numpy().copy(), None if tangent is None else tangent.detach().numpy().copy()


def _compare(fn, shapes, dtype, positive=False, transpose=False):
    primals = [_arrays(s, dtype, positive) for s in shapes]
    if transpose:  # non-contiguous duals: the transposes of row-major arrays
        primals = [p.T for p in primals]
    tangents = [_arrays(p.shape, dtype) for p in primals]
    e_primal, e_tangent = _run(ember, fn, primals, tangents, dtype)
    t_primal, t_tangent = _run(torch, fn, primals, tangents, dtype)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(e_primal, t_primal, rtol=tol, atol=tol)
    assert (e_tangent is None) == (t_tangent is None)
    if t_tangent is not None:
        assert e_tangent.shape == t_tangent.shape
        np.testing.assert_allclose(e_tangent, t_tangent, rtol=tol, atol=tol)


def F(lib):
    return lib.nn.functional


# name -> (fn(lib, *duals), shapes of the dual inputs, positive inputs)
CASES = {
    "add": (lambda L, x, y: x + y, [(3, 4), (4,)], False),
    "add_scalar_alpha": (lambda L, x, y: L.add(x, y, alpha=2.5) + 1, [(3, 4), (3, 4)], False),
    "sub": (lambda L, x, y: 2 - x - y, [(3, 4), (1, 4)], False),
    "mul": (lambda L, x, y: x * y * 3, [(3, 4), (3, 1)], False),
    "div": (lambda L, x, y: x / y + 1 / y, [(3, 4), (4,)], True),
    "pow": (lambda L, x, y: x ** 2.5 + x ** y + 2 ** y, [(3, 4), (3, 4)], True),
    "exp_log": (lambda L, x: x.exp() + x.log(), [(3, 4)], True),
    "trig": (lambda L, x: x.sin() * x.cos() + x.tanh() + x.sigmoid(), [(3, 4)], False),
    "activations": (lambda L, x: F(L).relu(x) + F(L).gelu(x) + F(L).gelu(x, approximate="tanh") + F(L).silu(x)
                    + F(L).softplus(x) + F(L).elu(x) + F(L).leaky_relu(x) + F(L).mish(x), [(3, 4)], False),
    "abs_sqrt_rsqrt": (lambda L, x: x.abs() + x.sqrt() + x.rsqrt(), [(3, 4)], True),
    "clamp": (lambda L, x, y: x.clamp(-0.5, 0.5) + x.clamp(min=y), [(3, 4), (3, 4)], False),
    "where": (lambda L, x, y: L.where(x > 0, x, y) + L.where(y > 0, x, 2.0), [(3, 4), (3, 4)], False),
    "maximum_minimum": (lambda L, x, y: L.maximum(x, y) + L.minimum(x, y), [(3, 4), (4,)], False),
    "matmul": (lambda L, x, w: x @ w, [(3, 4), (4, 5)], False),
    "matmul_batched": (lambda L, x, w: x @ w, [(2, 3, 4), (4, 5)], False),
    "mm_mv": (lambda L, x, w: x.mm(w).sum(1) + x.mv(w[:, 0]) * 0 + x.mv(w[:, 1])[:, None].sum(1), [(3, 4), (4, 5)],
              False),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 3, 4), (2, 4, 5)], False),
    "linear": (lambda L, x, w, b: F(L).linear(x, w, b), [(3, 4), (5, 4), (5,)], False),
    "linear_no_bias": (lambda L, x, w: F(L).linear(x, w), [(2, 3, 4), (5, 4)], False),
    "addmm": (lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2.0), [(3, 5), (3, 4), (4, 5)], False),
    "einsum": (lambda L, a, b: L.einsum("ij,jk->ik", a, b), [(3, 4), (4, 5)], False),
    "sum_mean": (lambda L, x: x.sum() + x.mean() + x.sum(1).sum() + x.mean(0, keepdim=True).sum(), [(3, 4)], False),
    "amax_max_min": (lambda L, x: x.amax(1) + x.max(1)[0] + x.min(1).values + x.max() + x.min(), [(3, 4)], False),
    "logsumexp_var_std": (lambda L, x: x.logsumexp(1) + x.var(1) + x.std(1, correction=0) + x.var(), [(3, 4)], False),
    "norm_prod": (lambda L, x: x.norm() + L.linalg.vector_norm(x, dim=1).sum() + x.prod(1).sum() + x.prod(),
                  [(3, 4)], True),
    "views": (lambda L, x: x.view(12)[2:9].reshape(7, 1).permute(1, 0).transpose(0, 1).expand(7, 3).unsqueeze(0)
              .squeeze(0).t(), [(3, 4)], False),
    "cat_stack": (lambda L, x, y: L.cat([x, y]) + 0 * L.stack([x, y]).sum(0).repeat(2, 1), [(3, 4), (3, 4)], False),
    "select_slice_index": (lambda L, x: x[1] + x[:, 1:3].sum(1).sum() + x[L.tensor([0, 2])].sum(0), [(3, 4)], False),
    "gather_index_select": (lambda L, x: x.gather(1, L.tensor([[0], [1], [3]])).sum(1)
                            + x.index_select(1, L.tensor([0, 3])).sum(1), [(3, 4)], False),
    "softmax": (lambda L, x: F(L).softmax(x, 1) + F(L).log_softmax(x, 0), [(3, 4)], False),
    "cross_entropy": (lambda L, x: F(L).cross_entropy(x, L.tensor([0, 1, 3])), [(3, 4)], False),
    "cross_entropy_none": (lambda L, x: F(L).cross_entropy(x, L.tensor([0, 1, 3]), reduction="none",
                                                           label_smoothing=0.1), [(3, 4)], False),
    "nll_mse": (lambda L, x, y: F(L).nll_loss(x, L.tensor([0, 1, 3])) + F(L).mse_loss(x, y), [(3, 4), (3, 4)], False),
    "conv2d": (lambda L, x, w, b: F(L).conv2d(x, w, b, padding=1), [(2, 3, 5, 5), (4, 3, 3, 3), (4,)], False),
    "layer_norm": (lambda L, x, w, b: F(L).layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)], False),
    "batch_norm": (lambda L, x, w, b: F(L).batch_norm(x, None, None, w, b, training=True), [(5, 4), (4,), (4,)],
                   False),
    "batch_norm_eval": (lambda L, x: F(L).batch_norm(x, L.zeros(4, dtype=x.dtype), L.ones(4, dtype=x.dtype) * 2),
                        [(5, 4)], False),
    "dropout_eval": (lambda L, x: F(L).dropout(x, 0.5, training=False), [(3, 4)], False),
    "embedding": (lambda L, w: F(L).embedding(L.tensor([[0, 2], [1, 0]]), w), [(3, 4)], False),
    "pad_cumsum": (lambda L, x: F(L).pad(x, (1, 2), value=3.0).cumsum(1), [(3, 4)], False),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_torch(name, dtype):
    fn, shapes, positive = CASES[name]
    _compare(fn, shapes, dtype, positive)


@pytest.mark.parametrize("name", ["add", "mul", "trig", "matmul", "sum_mean", "softmax", "select_slice_index",
                                  "amax_max_min"])
def test_rule_matches_torch_on_non_contiguous_duals(name):
    fn, shapes, positive = CASES[name]
    _compare(fn, [tuple(reversed(s)) for s in shapes], np.float64, positive, transpose=True)


def test_zero_dim_duals():
    _compare(lambda L, x, y: (x * y).exp() + x.sin() / y, [(), ()], np.float64, positive=True)


def test_dropout_tangent_uses_the_same_mask():
    fw = ember.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(ember.ones(100, dtype=ember.float64), ember.full((100,), 3.0, dtype=ember.float64))
        y = ember.nn.functional.dropout(x, 0.5)
        primal, tangent = fw.unpack_dual(y)
        assert ember.equal(tangent, primal * 3)


# --- the API: levels, make_dual, unpack_dual ------------------------------------------
def test_unpack_dual_result_and_exit_drop_the_tangent():
    def program(lib):
        fw = lib.autograd.forward_ad
        x, v = lib.tensor([1.0, 2.0]), lib.tensor([0.5, -1.0])
        with fw.dual_level() as level:
            y = fw.make_dual(x, v) * 2
            unpacked = fw.unpack_dual(y)
            inside = (level, type(unpacked).__name__, unpacked._fields, unpacked.tangent.tolist(),
                      fw.unpack_dual(x).tangent, fw.make_dual(x, v)._base is x)
        return inside, fw.unpack_dual(y).tangent
    e, t = program(ember), program(torch)
    assert e == t


def test_make_dual_keeps_a_tangent_of_the_same_layout_and_copies_another():
    def program(lib):
        fw = lib.autograd.forward_ad
        x = lib.zeros(3, 2)
        same = lib.ones(3, 2)
        other = lib.ones(2, 3).t()
        with fw.dual_level():
            return (fw.unpack_dual(fw.make_dual(x, same)).tangent is same,
                    fw.unpack_dual(fw.make_dual(x, other)).tangent is other,
                    fw.unpack_dual(fw.make_dual(x, other)).tangent.stride())
    assert program(ember) == program(torch)


def test_make_dual_is_differentiable_in_reverse_mode():
    def program(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with fw.dual_level():
            y = fw.make_dual(x, lib.ones(2)) ** 2
            y.sum().backward()
        return x.grad.tolist()
    assert program(ember) == program(torch)


@pytest.mark.parametrize("case", ["no_level", "nested", "size", "int_primal", "int_tangent", "twice", "exit_other",
                                  "exit_none"])
def test_errors_match_torch(case):
    def program(lib):
        fw = lib.autograd.forward_ad
        x = lib.zeros(3)
        if case == "no_level":
            fw.make_dual(x, x)
        if case == "exit_none":
            fw.exit_dual_level()
        with fw.dual_level():
            if case == "nested":
                fw.enter_dual_level()
            if case == "size":
                fw.make_dual(x, lib.zeros(4))
            if case == "int_primal":
                fw.make_dual(x.long(), x)
            if case == "int_tangent":
                fw.make_dual(x, x.long())
            if case == "twice":
                fw.make_dual(fw.make_dual(x, x), x)
            if case == "exit_other":
                fw.exit_dual_level(level=3)
    assert_same_error(program)


def test_an_op_without_a_rule_raises_torchs_error():
    fw = ember.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(ember.randn(1, 1, 4, 4), ember.randn(1, 1, 4, 4))
        with pytest.raises(NotImplementedError) as ember_error:
            ember.nn.functional.max_pool2d(x, 2)
    with torch.autograd.forward_ad.dual_level():
        x = torch.autograd.forward_ad.make_dual(torch.randn(3), torch.randn(3))
        with pytest.raises(NotImplementedError) as torch_error:
            torch.segment_reduce(x, "sum", lengths=torch.tensor([3]))
    first = str(torch_error.value).splitlines()[0].replace("segment_reduce", "max_pool2d")
    assert str(ember_error.value).splitlines()[0] == first


def test_non_differentiable_outputs_get_no_tangent():
    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([1.0, 3.0]), lib.ones(2))
            return fw.unpack_dual(x.argmax()).tangent, fw.unpack_dual(x > 1).tangent, \
                fw.unpack_dual(x.detach()).tangent
    assert program(ember) == program(torch)


# --- views and in-place writes --------------------------------------------------------
def _inplace_program(case):
    def program(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64)
        v = lib.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], dtype=lib.float64)
        w = lib.tensor([2.0, -1.0, 0.5], dtype=lib.float64)
        with fw.dual_level():
            if case == "view_of_dual":
                d = fw.make_dual(x.clone(), v.clone())
                row = d[1]
                shares = fw.unpack_dual(row).tangent._base is fw.unpack_dual(d).tangent
                row.mul_(3)  # through the view: the base's tangent changes too
                return shares, fw.unpack_dual(d).tangent.tolist()
            if case == "dual_into_view_of_plain":
                base = x.clone()
                base[0].mul_(fw.make_dual(w, w * 0 + 1))
                return fw.unpack_dual(base).tangent.tolist()
            if case == "dual_into_plain":
                base = x.clone()
                base.add_(fw.make_dual(x, v))
                return fw.unpack_dual(base).tangent.tolist()
            d = fw.make_dual(x.clone(), v.clone())
            if case == "copy_":
                d.copy_(x)
            if case == "fill_":
                d.fill_(1.0)
            if case == "zero_":
                d.zero_()
            if case == "setitem":
                d[0] = fw.make_dual(w, w)
            return fw.unpack_dual(d).tangent.tolist()
    return program


@pytest.mark.parametrize("case", ["view_of_dual", "dual_into_view_of_plain", "dual_into_plain", "copy_", "fill_",
                                  "zero_", "setitem"])
def test_in_place_writes_carry_tangents_as_torch(case):
    program = _inplace_program(case)
    assert program(ember) == program(torch)


# --- custom Functions ----------------------------------------------------------------
def _function_program(lib, wrong_count=False):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_forward(x)
            ctx.scale = scale
            return x ** 3 * scale

        @staticmethod
        def backward(ctx, grad):
            raise AssertionError("not called")

        @staticmethod
        def jvp(ctx, x_t, scale_t):
            (x,) = ctx.saved_tensors
            tangent = 3 * x ** 2 * x_t * ctx.scale
            return (tangent, tangent) if wrong_count else tangent

    fw = lib.autograd.forward_ad
    with fw.dual_level():
        y = Cube.apply(fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 0.5])), 2.0)
        return fw.unpack_dual(y).tangent.tolist()


def test_custom_function_jvp_with_save_for_forward():
    assert _function_program(ember) == _function_program(torch)


def test_custom_function_jvp_errors():
    assert_same_error(lambda lib: _function_program(lib, wrong_count=True))

    def wrong_size(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad

            @staticmethod
            def jvp(ctx, tangent):
                return tangent[:1]
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            Double.apply(fw.make_dual(lib.ones(2), lib.ones(2)))
    assert_same_error(wrong_size)

    def no_jvp(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * x

            @staticmethod
            def backward(ctx, grad):
                return grad
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            Square.apply(fw.make_dual(lib.ones(2), lib.ones(2)))
    assert_same_error(no_jvp)


# --- ember.func through forward mode ---------------------------------------------------
def _func_program(lib):
    x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64)
    v = lib.tensor([1.0, -1.0, 0.5], dtype=lib.float64)

    def f(x):
        return (x.sin() * x).cumsum(0)

    value, jvp = lib.func.jvp(f, (x,), (v,))
    return (value.tolist(), jvp.tolist(), lib.func.jacfwd(f)(x).tolist(),
            lib.func.jacfwd(lib.func.jacfwd(lambda x: f(x).sum()))(x).tolist(),
            lib.func.hessian(lambda x: f(x).sum())(x).tolist())


def test_func_jvp_and_jacfwd_match_torch():
    e, t = _func_program(ember), _func_program(torch)
    for a, b in zip(e, t):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-12, atol=1e-12)


def test_func_jvp_inside_a_dual_level_is_refused_as_torch():
    # func.jvp's levels nest in each other (jacfwd of jacfwd), not inside dual_level's
    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 1.0]))
            lib.func.jvp(lambda x: x * d, (lib.tensor([3.0, 4.0]),), (lib.ones(2),))
    assert_same_error(program)


def test_dual_level_inside_func_jvp_is_refused_as_torch():
    def program(lib):
        def f(x):
            with lib.autograd.forward_ad.dual_level():
                return x * 2
        lib.func.jvp(f, (lib.ones(2),), (lib.ones(2),))
    assert_same_error(program)


# --- ember.library: a custom op's rule ---------------------------------------------------
def test_custom_op_rule_from_register_jvp_matches_torch_composite():
    from ember import library

    @library.custom_op("fwtest::softclamp", promote="int_to_float", save="inputs")
    def softclamp(xp, x, *, limit=1.0):
        return limit * xp.tanh(x / limit)

    def backward(ctx, grad):
        (x,) = ctx.saved_inputs
        return (grad * (1 - (x / ctx.attrs["limit"]).tanh() ** 2),)

    library.register_autograd(softclamp, backward)
    x, v = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    with ember.autograd.forward_ad.dual_level():
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with softclamp that does not"):
            softclamp(ember.autograd.forward_ad.make_dual(ember.tensor(x), ember.tensor(v)), limit=2.0)
    library.register_jvp(softclamp, "auto_element_wise")
    with pytest.raises(ValueError, match="register_jvp: expected a function"):
        library.register_jvp(softclamp, "sideways")
    _, mine = _run(ember, lambda L, d: softclamp(d, limit=2.0), [x], [v], np.float64)
    _, theirs = _run(torch, lambda L, d: 2.0 * (d / 2.0).tanh(), [x], [v], np.float64)
    np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_a_dual_tensor_prints_its_tangent_as_torch():
    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            return repr(fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, 0.25])) * 2).replace("torch", "ember")
    assert program(ember) == program(torch)
