"""``ember.Generator``, ``ember.manual_seed`` and the random factories (ember/generator.py,
ember/random.py, ember/native/factory.py).

ember's generator is PyTorch's Mersenne Twister and its factories transform the words
as ATen's CPU kernels do, so the same seed must give exactly torch's numbers: the
parity tests below compare bit for bit (``torch.equal``), over many seeds and sizes
around the 16-element boundary of the vectorised normal kernel. The statistics tests
further down check the distributions themselves.
"""

import math

import numpy as np
import pytest

import ember

N = 20_000

SEEDS = [0, 1, 7, 2024, 2 ** 32 + 3, 2 ** 63, -5]
SIZES = [0, 1, 2, 15, 16, 17, 31, 33, 1000, 4099]
FLOAT_DTYPES = ["float32", "float64", "float16"]


def both(seed, fn):
    """``fn(lib)`` after ``lib.manual_seed(seed)`` for ember and torch; the results and
    the generators' states afterwards."""
    import torch

    results = []
    for lib in (ember, torch):
        lib.manual_seed(seed)
        results.append((fn(lib), lib.get_rng_state().numpy()))
    return results


def assert_same_draws(seed, fn):
    (ours, our_state), (theirs, their_state) = both(seed, fn)
    ours = ours if isinstance(ours, (tuple, list)) else [ours]
    theirs = theirs if isinstance(theirs, (tuple, list)) else [theirs]
    for a, b in zip(ours, theirs):
        assert a.dtype.__repr__().split(".")[-1] == str(b.dtype).split(".")[-1]
        assert tuple(a.shape) == tuple(b.shape)
        assert np.array_equal(a.numpy(), b.numpy(), equal_nan=True), (a, b)
    assert np.array_equal(our_state, their_state)  # the same number of words drawn, the same cache


# --- the same numbers as torch ------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_seeded_state_is_torchs_byte_for_byte(seed):
    import torch

    ours = ember.Generator().manual_seed(seed).get_state().numpy()
    assert np.array_equal(ours, torch.Generator().manual_seed(seed).get_state().numpy())


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("seed", SEEDS[:4])
def test_rand_and_randn_equal_torch(seed, n, dtype):
    assert_same_draws(seed, lambda lib: [lib.rand(n, dtype=getattr(lib, dtype)),
                                         lib.randn(n, dtype=getattr(lib, dtype)),
                                         lib.randn(2, n // 2 + 1, dtype=getattr(lib, dtype))])


@pytest.mark.parametrize("seed", SEEDS)
def test_a_training_script_prologue_equals_torch(seed):
    # Weights, a batch, a permutation and labels, in the order a script draws them.
    assert_same_draws(seed, lambda lib: [lib.randn(64, 32), lib.rand(3, dtype=lib.float64), lib.randperm(100),
                                         lib.randint(0, 10, (17,)), lib.randn(5, dtype=lib.float64),
                                         lib.randn(3)])


@pytest.mark.parametrize("low, high", [(0, 10), (-5, 5), (0, 2), (0, 2 ** 28), (-(2 ** 40), 2 ** 40),
                                       (3, 2 ** 62)])
@pytest.mark.parametrize("n", [0, 1, 16, 1000])
def test_randint_equals_torch(low, high, n):
    assert_same_draws(11, lambda lib: lib.randint(low, high, (n,)))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "bool", "float32", "float64"])
def test_randint_of_other_dtypes_equals_torch(dtype):
    high = 2 if dtype == "bool" else 100
    assert_same_draws(3, lambda lib: lib.randint(0, high, (50,), dtype=getattr(lib, dtype)))


def test_randint_with_high_and_size_keyword_equals_torch():
    assert_same_draws(5, lambda lib: [lib.randint(10, size=(4,)), lib.randint(10, (3,)), lib.randint(2, 9, size=(5,))])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 100, 5000])
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_randperm_equals_torch(seed, n):
    assert_same_draws(seed, lambda lib: lib.randperm(n))


@pytest.mark.parametrize("n", [2 ** 16 - 1, 2 ** 16, 200_003])
def test_large_randperm_equals_torch(n):
    # From 2**16 elements ember resolves the shuffle's swaps without a Python loop
    # (NOTE [ The front-to-back shuffle without a Python loop ]).
    assert_same_draws(21, lambda lib: lib.randperm(n))


def test_the_vectorised_shuffle_is_the_loop():
    from ember.native.random.transformations import _swap_in_order, _swap_vectorised

    rng = np.random.default_rng(0)
    for n in [2, 3, 4, 7, 50, 999]:
        for _ in range(20):
            offsets = rng.integers(0, 2 ** 32, n - 1, dtype=np.uint64) % np.arange(n, 1, -1, dtype=np.uint64)
            assert np.array_equal(_swap_in_order(offsets), _swap_vectorised(offsets))


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "uint8"])
def test_randperm_of_other_dtypes_equals_torch(dtype):
    assert_same_draws(0, lambda lib: lib.randperm(20, dtype=getattr(lib, dtype)))


def test_generator_objects_equal_torchs():
    import torch

    ours = ember.Generator().manual_seed(99)
    theirs = torch.Generator().manual_seed(99)
    for _ in range(3):
        a = [ember.randn(20, generator=ours), ember.randperm(7, generator=ours), ember.rand(3, generator=ours)]
        b = [torch.randn(20, generator=theirs), torch.randperm(7, generator=theirs), torch.rand(3, generator=theirs)]
        for x, y in zip(a, b):
            assert np.array_equal(x.numpy(), y.numpy())


def test_an_odd_number_of_scalar_normals_leaves_one_cached_like_torch():
    # Fewer than 16 normals come from the scalar kernel, two per Box-Muller step: the
    # second of the last pair waits in the generator (and in its state) for the next call.
    assert_same_draws(1, lambda lib: [lib.randn(3, dtype=lib.float64), lib.randn(1), lib.randn(5)])
    (_, ours), (_, theirs) = both(1, lambda lib: lib.randn(1, dtype=lib.float64))
    assert np.array_equal(ours, theirs)


def test_states_move_between_torch_and_ember():
    import torch

    theirs = torch.Generator().manual_seed(4)
    torch.randn(7, generator=theirs)  # mid-block, with a cached normal
    ours = ember.Generator().set_state(ember.tensor(theirs.get_state().numpy()))
    assert np.array_equal(ember.randn(9, generator=ours).numpy(), torch.randn(9, generator=theirs).numpy())
    ember.rand(1000, generator=ours)
    theirs.set_state(torch.from_numpy(ours.get_state().numpy()))
    assert np.array_equal(ember.rand(5, generator=ours).numpy(), torch.rand(5, generator=theirs).numpy())


def test_a_corrupt_state_is_refused_like_torch():
    import torch

    state = torch.Generator().get_state()
    state[8:12] = 0  # left = 0 is impossible
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        torch.Generator().set_state(state)
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        ember.Generator().set_state(ember.tensor(state.numpy()))


@pytest.fixture(autouse=True)
def restore_default_generator():
    state = ember.get_rng_state()
    yield
    ember.set_rng_state(state)


def test_manual_seed_repeats_the_stream():
    ember.manual_seed(123)
    first = [ember.rand(5), ember.randn(5), ember.randint(0, 100, (5,)), ember.randperm(5)]
    ember.manual_seed(123)
    second = [ember.rand(5), ember.randn(5), ember.randint(0, 100, (5,)), ember.randperm(5)]
    for a, b in zip(first, second):
        assert ember.equal(a, b)


def test_different_seeds_give_different_numbers():
    ember.manual_seed(1)
    a = ember.rand(10)
    ember.manual_seed(2)
    assert not ember.equal(a, ember.rand(10))


def test_manual_seed_returns_the_default_generator():
    assert ember.manual_seed(0) is ember.default_generator
    assert ember.initial_seed() == 0


def test_generators_are_independent():
    g1 = ember.Generator().manual_seed(7)
    g2 = ember.Generator().manual_seed(7)
    a = ember.randn(4, generator=g1)
    ember.randn(100)  # the default generator moving on does not disturb g1 or g2
    ember.rand(3, generator=g1)  # nor does g1 disturb g2
    assert ember.equal(a, ember.randn(4, generator=g2))


def test_generator_is_not_the_default_one():
    ember.manual_seed(5)
    expected = ember.rand(3)
    ember.manual_seed(5)
    ember.rand(3, generator=ember.Generator().manual_seed(99))
    assert ember.equal(ember.rand(3), expected)


def test_get_state_set_state_round_trip():
    g = ember.Generator().manual_seed(3)
    ember.rand(7, generator=g)
    state = g.get_state()
    assert state.dtype is ember.uint8 and state.ndim == 1
    a = ember.randn(5, generator=g)
    g.set_state(state)
    assert ember.equal(ember.randn(5, generator=g), a)


def test_rng_state_of_the_default_generator_round_trips():
    state = ember.get_rng_state()
    a = ember.rand(4)
    ember.set_rng_state(state)
    assert ember.equal(ember.rand(4), a)


def test_state_moves_between_generators():
    g1 = ember.Generator().manual_seed(11)
    ember.rand(3, generator=g1)
    g2 = ember.Generator().set_state(g1.get_state())
    assert ember.equal(ember.rand(6, generator=g1), ember.rand(6, generator=g2))


def test_negative_seed_is_accepted_like_torch():
    a = ember.rand(3, generator=ember.Generator().manual_seed(-1))
    b = ember.rand(3, generator=ember.Generator().manual_seed(2 ** 64 - 1))
    assert ember.equal(a, b)


def test_seed_reseeds_from_the_os():
    g = ember.Generator()
    s = g.seed()
    assert g.initial_seed() == s
    assert ember.equal(ember.rand(3, generator=g), ember.rand(3, generator=ember.Generator().manual_seed(s)))


def test_generator_device():
    assert ember.Generator().device == ember.device("cpu")


def test_wrong_generator_type_is_rejected():
    with pytest.raises(TypeError, match="Generator"):
        ember.rand(2, generator=np.random.default_rng(0))


# --- statistics --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16])
def test_randn_mean_and_std(dtype):
    x = ember.randn(N, generator=ember.Generator().manual_seed(0), dtype=dtype).double()
    assert abs(x.mean().item()) < 5 / math.sqrt(N)
    assert abs(x.std().item() - 1) < 0.03


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16])
def test_rand_is_uniform_on_unit_interval(dtype):
    x = ember.rand(N, generator=ember.Generator().manual_seed(0), dtype=dtype).double()
    assert 0 <= x.min().item() and x.max().item() < 1
    assert abs(x.mean().item() - 0.5) < 0.01
    assert abs(x.var().item() - 1 / 12) < 0.005
    counts = np.histogram(x.numpy(), bins=10, range=(0, 1))[0]
    assert counts.min() > 0.9 * N / 10 and counts.max() < 1.1 * N / 10


@pytest.mark.parametrize("low, high", [(0, 2), (-5, 5), (3, 10), (0, 1)])
def test_randint_covers_its_range(low, high):
    x = ember.randint(low, high, (N,), generator=ember.Generator().manual_seed(0))
    assert x.dtype is ember.int64
    values = set(x.tolist())
    assert values == set(range(low, high))
    assert abs(x.double().mean().item() - (low + high - 1) / 2) < 0.05 * (high - low)


def test_randint_bool_and_uint8_extremes():
    assert set(ember.randint(0, 2, (500,), dtype=ember.bool).tolist()) == {False, True}
    x = ember.randint(0, 256, (5000,), dtype=ember.uint8)
    assert x.max().item() == 255 and x.min().item() == 0


@pytest.mark.parametrize("n", [0, 1, 7, 100])
def test_randperm_is_a_permutation(n):
    p = ember.randperm(n)
    assert p.dtype is ember.int64
    assert sorted(p.tolist()) == list(range(n))


def test_randperm_shuffles():
    assert ember.randperm(50, generator=ember.Generator().manual_seed(0)).tolist() != list(range(50))


def test_like_forms_use_the_generator():
    x = ember.ones(3, 2, dtype=ember.float64)
    a = ember.rand_like(x, generator=ember.Generator().manual_seed(4))
    b = ember.rand_like(x, generator=ember.Generator().manual_seed(4))
    assert ember.equal(a, b) and a.dtype is ember.float64 and a.shape == (3, 2)


def test_uniform_and_normal_in_place():
    x = ember.empty(N, dtype=ember.float64)
    x.uniform_(-2, 3, generator=ember.Generator().manual_seed(0))
    assert -2 <= x.min().item() and x.max().item() < 3 and abs(x.mean().item() - 0.5) < 0.05
    x.normal_(10, 2, generator=ember.Generator().manual_seed(0))
    assert abs(x.mean().item() - 10) < 0.1 and abs(x.std().item() - 2) < 0.1


BAD_GENERATOR_CALLS = {
    "set_state_float_tensor": lambda lib, g: g.set_state(lib.ones(3)),
    "set_state_wrong_bytes": lambda lib, g: g.set_state(lib.ones(3, dtype=lib.uint8)),
    "set_state_list": lambda lib, g: g.set_state([1, 2]),
    "seed_past_uint64": lambda lib, g: g.manual_seed(2 ** 64),
    "seed_below_int64": lambda lib, g: g.manual_seed(-(2 ** 63) - 1),
    "seed_float": lambda lib, g: g.manual_seed(1.5),
    "seed_string": lambda lib, g: g.manual_seed("3"),
}


@pytest.mark.parametrize("name", list(BAD_GENERATOR_CALLS))
def test_bad_generator_calls_raise_like_torch(name):
    import torch

    call = BAD_GENERATOR_CALLS[name]
    with pytest.raises(Exception) as expected:
        call(torch, torch.Generator())
    with pytest.raises(expected.type):
        call(ember, ember.Generator())


@pytest.mark.parametrize("seed", [0, 1, -1, 2 ** 63, 2 ** 64 - 1])
def test_initial_seed_like_torch(seed):
    import torch

    assert ember.Generator().manual_seed(seed).initial_seed() == torch.Generator().manual_seed(seed).initial_seed()
