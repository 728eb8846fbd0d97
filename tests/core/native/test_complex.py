"""Complex tensors against torch: dtypes and promotion, the complex ops of
ember/native/complex.py, arithmetic and reductions on complex values, and gradients in
torch's convention (NOTE [ Complex gradients ] in ember/autograd/graph.py)."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

COMPLEX = ["complex64", "complex128"]
REAL = ["float32", "float64"]


def _both(array):
    return ember.from_numpy(np.array(array)), torch.from_numpy(np.array(array))


# --- dtypes and promotion -------------------------------------------------------------


def test_names_and_aliases_are_torch_s():
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128
    assert ember.complex64.is_complex and not ember.complex64.is_floating_point
    assert ember.complex64.to_real() is ember.float32 and ember.float64.to_complex() is ember.complex128
    assert ember.tensor([1 + 2j]).dtype is ember.complex64
    assert ember.tensor([1 + 2j]).is_complex() and not ember.tensor([1.0]).is_complex()


@pytest.mark.parametrize("first", ["bool", "uint8", "int8", "int64", "float16", "float32", "float64"] + COMPLEX)
@pytest.mark.parametrize("second", COMPLEX)
def test_promote_types_matches_torch(first, second):
    got = ember.promote_types(getattr(ember, first), getattr(ember, second))
    expected = torch.promote_types(getattr(torch, first), getattr(torch, second))
    if expected == torch.complex32:  # ember has no complex32 (NOTE [ Complex dtypes ])
        expected = torch.complex64
    assert got.name == str(expected).removeprefix("torch.")


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(2, dtype=lib.float64) + 1j,
    lambda lib: lib.ones(2, dtype=lib.int64) + 1j,
    lambda lib: lib.ones(2, dtype=lib.float32) + lib.ones((), dtype=lib.complex128),
    lambda lib: lib.ones((), dtype=lib.float64) + lib.ones(2, dtype=lib.complex64),
    lambda lib: lib.ones(2, dtype=lib.complex64) * 2.5,
    lambda lib: lib.ones(2, dtype=lib.float64) * lib.ones(2, dtype=lib.complex64),
    lambda lib: lib.ones(2, dtype=lib.int32).exp() + 0j,
])
def test_result_dtype_of_mixed_operands(make):
    assert make(ember).dtype.name == str(make(torch).dtype).removeprefix("torch.")


def test_default_complex_dtype_follows_the_default_float():
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert ember.tensor([1j]).dtype is ember.complex128
        assert (ember.ones(2, dtype=ember.int64) + 1j).dtype is ember.complex128
        assert str(torch.tensor([1j]).dtype) == "torch.complex128"
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


def test_requires_grad_takes_complex_refuses_integers():
    assert ember.zeros(2, dtype=ember.complex64).requires_grad_().requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        ember.zeros(2, dtype=ember.int64).requires_grad_()


# --- the complex ops --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("noncontiguous", [False, True])
@pytest.mark.parametrize("fn", [
    lambda lib, z: lib.real(z) * 2, lambda lib, z: lib.imag(z) * 2, lambda lib, z: lib.view_as_real(z).sin(),
    lambda lib, z: lib.angle(z), lambda lib, z: lib.abs(z), lambda lib, z: lib.sgn(z), lambda lib, z: lib.conj(z) * z,
    lambda lib, z: lib.conj_physical(z), lambda lib, z: lib.isreal(z), lambda lib, z: lib.resolve_conj(z.conj()),
    lambda lib, z: z.real.sum() + z.imag.mean(), lambda lib, z: z.mH @ z,
], ids=["real", "imag", "view_as_real", "angle", "abs", "sgn", "conj", "conj_physical", "isreal", "resolve_conj",
        "real_imag_properties", "mH"])
def test_complex_ops_values_and_gradients(fn, dtype, noncontiguous):
    assert_parity(fn, make_tensor((3, 4), dtype), noncontiguous=noncontiguous)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("fn", [
    lambda lib, a, b: lib.complex(a, b), lambda lib, a, b: lib.polar(a, b), lambda lib, a, b: lib.polar(a, b).log(),
    lambda lib, a, b: lib.view_as_complex(lib.stack([a, b], -1)).exp(),
    lambda lib, a, b: (lib.complex(a, b) * a).sum(), lambda lib, a, b: lib.angle(a),
    lambda lib, a, b: lib.real(a) + lib.conj(b), lambda lib, a, b: lib.isreal(a),
], ids=["complex", "polar", "polar_log", "view_as_complex", "mixed_mul", "angle_real", "real_conj_of_real",
        "isreal_real"])
def test_building_complex_from_real_parts(fn, dtype):
    assert_parity(fn, make_tensor((2, 3), dtype), make_tensor((1, 3), dtype, seed=1)
                  if fn.__code__.co_names[-1:] != ("stack",) else make_tensor((2, 3), dtype, seed=1))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("fn", [
    lambda lib, a, b: a * b, lambda lib, a, b: a / b, lambda lib, a, b: a + b - 2j, lambda lib, a, b: a @ b.mT,
    lambda lib, a, b: (a * b).sum(1), lambda lib, a, b: (a - b).mean(), lambda lib, a, b: a.exp() + b.log(),
    lambda lib, a, b: a.sqrt() * b ** 2, lambda lib, a, b: (a * b.conj()).real.sum() + a.abs().pow(3).sum(),
    lambda lib, a, b: a.sin() / b.tanh(), lambda lib, a, b: lib.vdot(a[0], b[0]),
], ids=["mul", "div", "add_scalar", "matmul", "sum", "mean", "exp_log", "sqrt_pow", "real_loss", "sin_tanh", "vdot"])
def test_arithmetic_on_complex_values_and_gradients(fn, dtype):
    assert_parity(fn, make_tensor((3, 4), dtype, exclude_zero=True), make_tensor((3, 4), dtype, seed=2,
                                                                                 exclude_zero=True))


def test_gradient_of_a_real_loss_is_torch_s_convention():
    # L = |z|^2 gives z.grad = 2 z: dL/dx + i dL/dy (twice dL/dz*)
    z = ember.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * z.detach().numpy())


def test_mixed_real_input_gets_the_real_part_of_its_gradient():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (x * (1 + 2j)).abs().sum().backward()
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    (t * (1 + 2j)).abs().sum().backward()
    assert x.grad.dtype is ember.float32
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_views_share_memory_and_writes_reach_the_base():
    z = ember.tensor([1 + 2j, 3 - 1j])
    z.real.add_(10)
    z.imag = ember.tensor([0.0, 5.0])
    ember.view_as_real(z)[0, 1] = 7.0
    np.testing.assert_array_equal(z.numpy(), np.array([11 + 7j, 13 + 5j], dtype=np.complex64))
    pairs = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    ember.view_as_complex(pairs).mul_(1j)
    np.testing.assert_array_equal(pairs.numpy(), [[-2.0, 1.0], [-4.0, 3.0]])
    z = ember.tensor([[1 + 2j, 3 - 1j]]).t()  # a non-contiguous complex tensor
    assert ember.view_as_real(z).stride() == torch.view_as_real(torch.tensor([[1 + 2j, 3 - 1j]]).t()).stride()


def test_conj_is_materialised_and_real_inputs_come_back_unchanged():
    z = ember.tensor([1 + 2j])
    assert not z.conj().is_conj() and ember.resolve_conj(z) is z
    x = ember.tensor([1.0])
    assert ember.conj(x) is x and ember.real(x) is x and ember.conj_physical(x) is x
    np.testing.assert_array_equal(z.conj_physical_().numpy(), np.array([1 - 2j], dtype=np.complex64))


@pytest.mark.parametrize("call, message", [
    (lambda lib: lib.imag(lib.ones(2)), "imag is not implemented for tensors with non-complex dtypes"),
    (lambda lib: lib.view_as_real(lib.ones(2)), "view_as_real is only supported for complex tensors"),
    (lambda lib: lib.view_as_complex(lib.ones(2, 3)), "Tensor must have a last dimension of size 2"),
    (lambda lib: lib.view_as_complex(lib.ones(2, 4)[:, ::2]), "Tensor must have a last dimension with stride 1"),
    (lambda lib: lib.view_as_complex(lib.ones(4, dtype=lib.int64).reshape(2, 2)),
     "only supported for half, float and double"),
    (lambda lib: lib.complex(lib.ones(2), lib.ones(2, dtype=lib.float64)), "Expected object of scalar type Float"),
    (lambda lib: lib.complex(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)), "Half, Float or Double"),
    (lambda lib: lib.sign(lib.ones(2, dtype=lib.complex64)), "Please use torch.sgn instead"),
])
def test_errors_match_torch(call, message):
    with pytest.raises((RuntimeError, NotImplementedError), match=message):
        call(torch)
    with pytest.raises((RuntimeError, NotImplementedError), match=message):
        call(ember)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0)])
def test_empty_and_zero_dim(dtype, shape):
    assert_parity(lambda lib, z: lib.view_as_real(z) * 2 + lib.angle(z).sum(), make_tensor(shape, dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape", [(3,), (8, 2), (17,), (0,)])
def test_randn_draws_torch_s_complex_stream(dtype, shape):
    ember.manual_seed(0)
    torch.manual_seed(0)
    got, expected = ember.randn(*shape, dtype=getattr(ember, dtype)), torch.randn(*shape, dtype=getattr(torch, dtype))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
