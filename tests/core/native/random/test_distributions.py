"""Random fills and samplers against torch, bit for bit after the same seed
(ember/native/random/distributions.py, transformations.py, avx_mathfun.py, dropout.py, and
ember/nn/init.py, whose fills are these)."""

import platform

import numpy as np
import pytest
import torch

import ember


def same_draws(seed, fn):
    """Run ``fn(lib)`` after seeding both libraries; assert equal results and states."""
    outputs = []
    for lib in (ember, torch):
        lib.manual_seed(seed)
        result = fn(lib)
        result = result if isinstance(result, (list, tuple)) else [result]
        outputs.append(([np.asarray(r.numpy()) for r in result], lib.get_rng_state().numpy()))
    (ours, our_state), (theirs, their_state) = outputs
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b, equal_nan=True), (a, b)
    assert np.array_equal(our_state, their_state)


LAYOUTS = {
    "contiguous": lambda lib, shape, dtype: lib.zeros(*shape, dtype=dtype),
    "transposed": lambda lib, shape, dtype: lib.zeros(*shape, dtype=dtype).transpose(0, -1),
    "sliced": lambda lib, shape, dtype: lib.zeros(*shape, dtype=dtype)[..., ::2],
}
SHAPES = [(1,), (3, 5), (4, 8), (5, 7), (2, 3, 6), (20, 20)]


def _target(lib, layout, shape, dtype):
    return LAYOUTS[layout](lib, shape, getattr(lib, dtype))


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_fills_follow_torchs_kernels_and_memory_order(layout, shape, dtype):
    def fills(lib):
        return [_target(lib, layout, shape, dtype).normal_(0.5, 2.0).contiguous(),
                _target(lib, layout, shape, dtype).uniform_(-3, 1.5).contiguous(),
                _target(lib, layout, shape, dtype).exponential_(2.5).contiguous(),
                _target(lib, layout, shape, dtype).bernoulli_(0.3).contiguous(),
                _target(lib, layout, shape, dtype).cauchy_(1.0, 2.0).contiguous(),
                _target(lib, layout, shape, dtype).log_normal_(0.5, 0.7).contiguous(),
                _target(lib, layout, shape, dtype).geometric_(0.3).contiguous()]
    same_draws(7, fills)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64"])
@pytest.mark.parametrize("args", [(), (10,), (-3, 7), (1, None), (0, 2)])
def test_random_in_place_forms_equal_torch(dtype, args):
    def draw(lib):
        return lib.zeros(5, 7, dtype=getattr(lib, dtype)).random_(*args)

    try:
        draw(torch)
    except RuntimeError as theirs:  # a range the dtype cannot hold: the same error
        with pytest.raises(RuntimeError) as ours:
            draw(ember)
        assert str(ours.value) == str(theirs)
        return
    same_draws(2, draw)


def test_random_full_int64_range_equals_torch():
    same_draws(4, lambda lib: lib.zeros(9, dtype=lib.int64).random_(-(2 ** 63), None))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bernoulli_of_probabilities_equals_torch(dtype):
    probabilities = np.linspace(0, 1, 30).reshape(5, 6)

    def draw(lib):
        p = lib.tensor(probabilities, dtype=getattr(lib, dtype))
        return [lib.bernoulli(p), p.bernoulli(), lib.zeros(5, 6).bernoulli_(p[0]), lib.bernoulli(p, 0.5)]
    same_draws(1, draw)


@pytest.mark.parametrize("replacement, n", [(False, 1), (False, 4), (False, 10), (True, 1), (True, 25)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial_equals_torch(replacement, n, dtype):
    weights = np.random.default_rng(0).random((3, 10))
    weights[1, 2] = 0.0

    def draw(lib):
        w = lib.tensor(weights, dtype=getattr(lib, dtype))
        return [lib.multinomial(w, n, replacement), w[0].multinomial(n, replacement)]
    same_draws(3, draw)


def test_normal_functional_forms_equal_torch():
    same_draws(8, lambda lib: [lib.normal(2.0, 3.0, (20,)), lib.normal(2.0, 0.5, size=(3,)),
                               lib.normal(lib.arange(5.0), lib.ones(5) * 2), lib.normal(lib.zeros(17), 0.1),
                               lib.normal(1.0, lib.ones(4, dtype=lib.float64)),
                               lib.normal(lib.tensor(1.0), lib.tensor(2.0)), lib.normal(lib.tensor(1.0), 0.5)])


@pytest.mark.parametrize("fn, shape", [("dropout", (7, 9)), ("dropout", (40,)), ("dropout2d", (2, 3, 4, 4)),
                                       ("dropout1d", (2, 3, 5))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_dropout_masks_are_torchs_portable_kernel(fn, shape, dtype):
    # torch's CPU dropout is bernoulli_(1 - p) with a scalar p: on Intel CPUs its MKL
    # build uses MKL's own stream; everywhere else it is the portable kernel, whose
    # draws torch.bernoulli of a float64 probability tensor reproduces on any CPU.
    p = 0.3

    def dropped(lib):
        x = lib.arange(1.0, float(np.prod(shape)) + 1, dtype=getattr(lib, dtype)).reshape(shape)
        return getattr(lib.nn.functional, fn)(x, p)

    ember.manual_seed(5)
    ours = dropped(ember)
    torch.manual_seed(5)
    x = torch.arange(1.0, float(np.prod(shape)) + 1, dtype=getattr(torch, dtype)).reshape(shape)
    noise_shape = shape if fn == "dropout" else shape[:2] + (1,) * (len(shape) - 2)
    keep = torch.bernoulli(torch.full(noise_shape, 1 - p, dtype=torch.float64)).to(x.dtype)
    portable = x * keep.div_(1 - p)
    assert np.array_equal(ours.numpy(), portable.numpy())
    if not _torch_uses_mkl_bernoulli():
        torch.manual_seed(5)
        assert np.array_equal(ours.numpy(), dropped(torch).numpy())


def _torch_uses_mkl_bernoulli():
    if not torch.backends.mkl.is_available():
        return False
    try:
        with open("/proc/cpuinfo") as info:
            return "GenuineIntel" in info.read()
    except OSError:
        return platform.processor().startswith("Intel")


def test_dropout_of_a_transposed_input_draws_in_its_memory_order():
    if _torch_uses_mkl_bernoulli():
        return  # the portable-kernel comparison above covers this machine
    same_draws(6, lambda lib: lib.nn.functional.dropout(lib.ones(6, 9).t(), 0.5).contiguous())


@pytest.mark.parametrize("name, args", [("uniform_", (-1, 2)), ("normal_", (0.5, 2)), ("xavier_uniform_", ()),
                                        ("xavier_normal_", ()), ("kaiming_uniform_", ()), ("kaiming_normal_", ()),
                                        ("trunc_normal_", ()), ("trunc_normal_", (0.0, 1.0, 1.5, 3.0))])
def test_init_functions_equal_torch(name, args):
    same_draws(0, lambda lib: getattr(lib.nn.init, name)(lib.empty(30, 20), *args))


def test_orthogonal_init_equals_torch_to_rounding():
    # The same normals; the QR is NumPy's LAPACK call, not the one torch links.
    ember.manual_seed(1)
    torch.manual_seed(1)
    ours = ember.nn.init.orthogonal_(ember.empty(6, 9))
    theirs = torch.nn.init.orthogonal_(torch.empty(6, 9))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-6)
    assert np.array_equal(ember.get_rng_state().numpy(), torch.get_rng_state().numpy())


@pytest.mark.parametrize("module, args", [("Linear", (20, 30)), ("Conv2d", (3, 8, 3)), ("Embedding", (10, 4)),
                                          ("Conv1d", (2, 4, 5))])
def test_modules_start_from_torchs_weights_after_the_same_seed(module, args):
    same_draws(11, lambda lib: list(getattr(lib.nn, module)(*args).state_dict().values()))


BAD_CALLS = {
    "uniform_reversed": lambda lib: lib.zeros(3).uniform_(2, 1),
    "uniform_integer": lambda lib: lib.zeros(3, dtype=lib.int64).uniform_(),
    "normal_negative_std": lambda lib: lib.zeros(3).normal_(0, -1),
    "normal_integer": lambda lib: lib.zeros(3, dtype=lib.int32).normal_(),
    "exponential_zero_rate": lambda lib: lib.zeros(3).exponential_(0),
    "exponential_integer": lambda lib: lib.zeros(3, dtype=lib.int64).exponential_(),
    "cauchy_integer": lambda lib: lib.zeros(3, dtype=lib.int32).cauchy_(),
    "cauchy_negative_sigma": lambda lib: lib.zeros(3).cauchy_(0, -1),
    "log_normal_integer": lambda lib: lib.zeros(3, dtype=lib.int64).log_normal_(),
    "log_normal_zero_std": lambda lib: lib.zeros(3).log_normal_(0, 0),
    "geometric_p_above_one": lambda lib: lib.zeros(3).geometric_(1.5),
    "geometric_bool": lambda lib: lib.zeros(3, dtype=lib.bool).geometric_(0.5),
    "bernoulli_p_above_one": lambda lib: lib.zeros(3).bernoulli_(1.5),
    "random_empty_range": lambda lib: lib.zeros(3, dtype=lib.int64).random_(5, 5),
    "random_out_of_uint8": lambda lib: lib.zeros(3, dtype=lib.uint8).random_(-3, 7),
    "random_from_past_bool": lambda lib: lib.zeros(3, dtype=lib.bool).random_(5, None),
    "multinomial_3d": lambda lib: lib.ones(2, 2, 2).multinomial(1),
    "multinomial_too_many": lambda lib: lib.ones(3).multinomial(4),
    "multinomial_zero_samples": lambda lib: lib.ones(3).multinomial(0),
    "multinomial_negative": lambda lib: lib.tensor([1.0, -1.0]).multinomial(2, True),
    "multinomial_all_zero": lambda lib: lib.zeros(3).multinomial(1),
    "multinomial_integer": lambda lib: lib.ones(3, dtype=lib.int64).multinomial(1),
    "leaf_requiring_grad": lambda lib: lib.zeros(3, requires_grad=True).normal_(),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_calls_raise_like_torch(name):
    with pytest.raises(Exception) as theirs:
        BAD_CALLS[name](torch)
    with pytest.raises(theirs.type) as ours:
        BAD_CALLS[name](ember)
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_geometric_of_integers_equals_torch(dtype):
    same_draws(9, lambda lib: lib.zeros(40, dtype=getattr(lib, dtype)).geometric_(0.2))


def test_a_fill_cuts_the_gradient_of_a_non_leaf_like_torch():
    grads = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        leaf = lib.ones(3, 20, requires_grad=True)
        y = leaf * 2
        y[0].normal_()
        y[1].uniform_()
        (y * y).sum().backward()
        grads.append(leaf.grad.numpy())
    np.testing.assert_array_equal(*grads)


def test_empty_tensors_draw_nothing():
    same_draws(0, lambda lib: [lib.zeros(0).normal_(), lib.zeros(0, 3).uniform_(), lib.zeros(0).bernoulli_(0.5),
                               lib.zeros(0, dtype=lib.int64).random_(4), lib.randn(0)])


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("shape", [(3,), (4, 5), (8, 8)])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_fills_draw_the_real_view_like_torch(layout, shape, dtype):
    # torch fills a complex tensor through view_as_real: parts interleaved, normal's std / sqrt(2) each
    same_draws(4, lambda lib: [_target(lib, layout, shape, dtype).normal_(0.5, 2.0).contiguous(),
                               _target(lib, layout, shape, dtype).uniform_(-1, 3).contiguous(),
                               _target(lib, layout, shape, dtype).normal_().contiguous()])


def test_normal_accepts_layout_and_pin_memory_like_torch():
    same_draws(2, lambda lib: lib.normal(1.5, 0.3, (2, 3), dtype=lib.float64, layout=lib.strided if lib is torch
                                         else None, pin_memory=False))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("form", ["both", "mean", "std", "bernoulli"])
def test_samples_require_grad_and_give_zero_gradients_like_torch(dtype, form):
    # torch records normal(mean, std) and bernoulli(p) with a zero gradient for each parameter
    results = []
    for lib in (ember, torch):
        lib.manual_seed(5)
        mean = lib.linspace(-1, 1, 6, dtype=getattr(lib, dtype)).reshape(2, 3)[:, ::2].requires_grad_()
        std = lib.linspace(0.5, 1, 2, dtype=getattr(lib, dtype)).reshape(2, 1).requires_grad_()
        p = (mean.detach().abs() * 0.5).requires_grad_()
        out, leaves = {"both": (lambda: (lib.normal(mean, std), [mean, std])),
                       "mean": (lambda: (lib.normal(mean, 2.0), [mean])),
                       "std": (lambda: (lib.normal(0.5, std), [std])),
                       "bernoulli": (lambda: (lib.bernoulli(p), [p]))}[form]()
        assert out.requires_grad
        grads = lib.autograd.grad((out * out).sum(), leaves)
        results.append([out.detach().numpy()] + [g.numpy() for g in grads])
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


def test_samples_of_parameters_that_need_no_grad_do_not_require_grad():
    assert not ember.normal(ember.zeros(3), ember.ones(3)).requires_grad
    assert not ember.bernoulli(ember.full((3,), 0.5)).requires_grad
    with ember.no_grad():
        assert not ember.normal(ember.zeros(3, requires_grad=True), 1.0).requires_grad
