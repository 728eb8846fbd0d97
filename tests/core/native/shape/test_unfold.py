"""``Tensor.unfold`` and ``unfold_copy`` against torch (ember/native/shape/unfold.py):
windows that overlap, touch or leave gaps, every dim, strides of the view, gradients
(overlapping windows add up) and double gradients, 0-d inputs, errors."""

import pytest
import torch
from autograd_parity import assert_same_error

import ember
from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("size,step", [(2, 1), (3, 3), (2, 3), (5, 2), (0, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_and_gradients_match_torch(size, step, dtype):
    x = make_tensor((3, 5, 6), dtype)
    for dim in (0, 1, -1):
        if size <= x.shape[dim]:
            assert_parity(lambda lib, t: t.unfold(dim, size, step), x)
    assert_parity(lambda lib, t: t.unfold(-1, min(size, 3), step) * 2, x, noncontiguous=True)
    assert_parity(lambda lib, t: lib.unfold_copy(t, 1, size, step), x)


def test_unfold_is_a_view_with_torchs_strides():
    data = make_tensor((4, 6), "float64")
    e, t = ember.from_numpy(data).unfold(1, 3, 2), torch.from_numpy(data).unfold(1, 3, 2)
    assert e._is_view() and e.stride() == t.stride() and tuple(e.shape) == tuple(t.shape)
    assert not ember.unfold_copy(ember.from_numpy(data), 1, 3, 2)._is_view()


def test_zero_dim_and_int_inputs_match_torch():
    assert_parity(lambda lib, t: t.unfold(0, 1, 1), make_tensor((), "float64"))
    assert_parity(lambda lib, t: t.unfold(0, 2, 1), make_tensor((5,), "int64"))


def test_double_backward_matches_torch():
    def program(lib):
        x = lib.tensor([[1.0, 2.0, 3.0, 4.0, 5.0]], dtype=lib.float64, requires_grad=True)
        y = (x.unfold(1, 3, 1) ** 2).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return g.detach().numpy().tolist(), gg.numpy().tolist()

    assert program(ember) == program(torch)


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.ones(2, 5).unfold(1, 6, 1))
    assert_same_error(lambda lib: lib.ones(2, 5).unfold(1, 2, 0))
    assert_same_error(lambda lib: lib.ones(2, 5).unfold(3, 2, 1))
    assert_same_error(lambda lib: lib.ones(2, 5).unfold(1, -1, 1))
    assert_same_error(lambda lib: lib.tensor(1.0).unfold(0, 2, 1))
