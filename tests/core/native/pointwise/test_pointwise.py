"""addcmul and addcdiv (ember/native/pointwise/ternary.py), functional and in place, against PyTorch."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close, assert_parity, make_tensor

SHAPES = [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((2, 1, 4), (3, 1), (1, 4)), ((), (), ())]
VALUES = [1, 0.5, -2.0]


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradients(name, shapes, value, dtype):
    a, b, c = (make_tensor(s, dtype, seed=i) for i, s in enumerate(shapes))
    if name == "addcdiv":
        c = make_tensor(shapes[2], dtype, low=0.5, high=2.0, seed=3)
    assert_parity(lambda lib, x, y, z: getattr(lib, name)(x, y, z, value=value), a, b, c)
    assert_parity(lambda lib, x, y, z: getattr(x, name)(y, z, value=value), a, b, c, noncontiguous=True)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_gradcheck_and_double_backward(name):
    a, b = (ember.tensor(make_tensor((2, 3), "float64", seed=i), requires_grad=True) for i in range(2))
    c = ember.tensor(make_tensor((3,), "float64", low=0.5, high=2.0, seed=5), requires_grad=True)
    fn = getattr(ember, name)
    assert ember.autograd.gradcheck(lambda x, y, z: fn(x, y, z, value=0.7), (a, b, c))
    assert ember.autograd.gradgradcheck(lambda x, y, z: fn(x, y, z, value=0.7), (a, b, c))


def test_dtype_promotion():
    assert_parity(lambda lib, x, y, z: lib.addcmul(x, y, z), make_tensor((3,)), make_tensor((3,), "float64"),
                  make_tensor((3,)))
    assert_parity(lambda lib, x, y, z: lib.addcmul(x, y, z, value=2), make_tensor((3,)),
                  make_tensor((3,), "int64"), make_tensor((3,), "int64"))
    # an integer result truncates a float value, as PyTorch does
    assert_parity(lambda lib, x, y, z: lib.addcmul(x, y, z, value=0.5), make_tensor((3,), "int64"),
                  make_tensor((3,), "int64"), make_tensor((3,), "int64"))


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("grad_mode", ["no_grad", "enabled"])
def test_inplace(name, grad_mode):
    """The in-place forms (fast path under no_grad, general path otherwise) equal torch's."""
    target, b = make_tensor((3, 4), seed=1), make_tensor((4,), seed=2)
    c = make_tensor((3, 1), low=0.5, high=2.0, seed=3)
    mine, theirs = ember.tensor(target), torch.tensor(target)
    context = ember.no_grad() if grad_mode == "no_grad" else ember.enable_grad()
    version = mine._version
    with context:
        out = getattr(mine, name + "_")(ember.tensor(b), ember.tensor(c), value=-0.3)
    getattr(theirs, name + "_")(torch.tensor(b), torch.tensor(c), value=-0.3)
    assert out is mine
    assert mine._version == version + 1
    assert_close(mine, theirs)


@pytest.mark.parametrize("name", ["addcmul_", "addcdiv_"])
def test_inplace_on_a_view_writes_the_base(name):
    base = ember.zeros(2, 4)
    with ember.no_grad():
        getattr(base[:, ::2], name)(ember.ones(2, 2), ember.full((2, 2), 2.0), value=3)
    expected = torch.zeros(2, 4)
    getattr(expected[:, ::2], name)(torch.ones(2, 2), torch.full((2, 2), 2.0), value=3)
    assert_close(base, expected)


def test_inplace_records_the_graph():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    t = ember.tensor([3.0, 4.0], requires_grad=True)
    y = x * 1
    y.addcmul_(t, t, value=2)
    y.sum().backward()
    xt, tt = torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0, 4.0], requires_grad=True)
    yt = xt * 1
    yt.addcmul_(tt, tt, value=2)
    yt.sum().backward()
    assert_close(x.grad, xt.grad)
    assert_close(t.grad, tt.grad)


@pytest.mark.parametrize("call", [
    lambda lib: lib.addcdiv(lib.tensor([1]), lib.tensor([1]), lib.tensor([1])),
    lambda lib: lib.addcmul(lib.ones(2), lib.ones(3), lib.ones(2)),
    lambda lib: lib.ones(2).addcmul_(lib.ones(2, 2), lib.ones(2)),
    lambda lib: lib.ones(2).addcdiv_(lib.ones(2, 2), lib.ones(2)),
    lambda lib: lib.ones(2, dtype=lib.int64).addcmul_(lib.ones(2), lib.ones(2)),
    lambda lib: lib.addcmul(lib.ones(2), 2.0, lib.ones(2)),
    lambda lib: lib.ones(2, requires_grad=True).addcmul_(lib.ones(2), lib.ones(2)),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)) as actual:
        call(ember)
    first_words = str(expected.value).split(",")[0].split(":")[0]
    assert first_words in str(actual.value)


def test_fast_path_equals_general_path_bitwise():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((64,)).astype(np.float32) for _ in range(3))
    fast = ember.tensor(a)
    with ember.no_grad():
        fast.addcmul_(ember.tensor(b), ember.tensor(c), value=0.1)
    general = ember.addcmul(ember.tensor(a), ember.tensor(b), ember.tensor(c), value=0.1)
    assert np.array_equal(fast.numpy(), general.numpy())


@pytest.mark.parametrize("weight", [0.1, 0.5, 0.999, -0.3, 1.7, 2])
@pytest.mark.parametrize("grad_mode", ["no_grad", "enabled"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lerp_inplace_matches_torch_and_the_out_of_place_op(weight, grad_mode, dtype):
    """lerp_ (fast path under no_grad, general path otherwise) gives torch's values (to
    rounding: torch fuses the multiply-add) and exactly ember.lerp's."""
    start, end = make_tensor((5, 7), dtype, seed=1), make_tensor((5, 7), dtype, seed=2)
    mine, theirs = ember.tensor(start), torch.tensor(start)
    context = ember.no_grad() if grad_mode == "no_grad" else ember.enable_grad()
    version = mine._version
    with context:
        assert mine.lerp_(ember.tensor(end), weight) is mine
    theirs.lerp_(torch.tensor(end), weight)
    assert mine._version == version + 1
    assert_close(mine, theirs)
    assert np.array_equal(mine.numpy(), ember.lerp(ember.tensor(start), ember.tensor(end), weight).numpy())


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(2, 3).lerp_(lib.ones(3), 0.3),           # broadcast end: general path
    lambda lib: lib.ones(3).lerp_(lib.ones(2, 3), 0.3),           # does not fit: error
    lambda lib: lib.ones(3).lerp_(lib.ones(3, dtype=lib.float64), 0.3),
    lambda lib: lib.ones(3).lerp_(lib.ones(3), lib.full((3,), 0.3)),
    lambda lib: lib.ones(3, requires_grad=True).lerp_(lib.ones(3), 0.3),
])
def test_lerp_inplace_outside_the_fast_path_matches_torch(call):
    try:
        expected = call(torch)
    except Exception as error:
        with pytest.raises(type(error)):
            call(ember)
        return
    assert_close(call(ember), expected)


def test_lerp_inplace_records_the_graph():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    e = ember.tensor([3.0, 5.0], requires_grad=True)
    y = x * 1
    y.lerp_(e, 0.25)
    y.sum().backward()
    xt, et = torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0, 5.0], requires_grad=True)
    yt = xt * 1
    yt.lerp_(et, 0.25)
    yt.sum().backward()
    assert_close(x.grad, xt.grad)
    assert_close(e.grad, et.grad)
