"""The ``*_copy`` ops against torch (ember/native/shape/view_copies.py): values and
gradients for float32 and float64, non-contiguous inputs, empty and 0-d tensors; the
result owns contiguous memory; errors are the view op's."""

import pytest
import torch
from autograd_parity import assert_same_error

import ember
from ember.testing import assert_parity, make_tensor

COPIES = {
    "alias_copy": lambda lib, t: lib.alias_copy(t),
    "as_strided_copy": lambda lib, t: lib.as_strided_copy(t, (2, 2), (1, 2), 1),
    "diagonal_copy": lambda lib, t: lib.diagonal_copy(t, 1, 0, 2),
    "expand_copy": lambda lib, t: lib.expand_copy(t[:, :1], (3, 4, 5)),
    "narrow_copy": lambda lib, t: lib.narrow_copy(t, 1, 1, 2),
    "narrow_copy_method": lambda lib, t: t.narrow_copy(-1, 0, 3),
    "permute_copy": lambda lib, t: lib.permute_copy(t, (2, 0, 1)),
    "squeeze_copy": lambda lib, t: lib.squeeze_copy(t[:, :1], 1),
    "t_copy": lambda lib, t: lib.t_copy(t[0]),
    "transpose_copy": lambda lib, t: lib.transpose_copy(t, 0, 2),
    "unbind_copy": lambda lib, t: lib.unbind_copy(t, 1),
    "unsqueeze_copy": lambda lib, t: lib.unsqueeze_copy(t, -1),
    "view_copy": lambda lib, t: lib.view_copy(t.contiguous(), (5, -1)),
    "view_copy_dtype": lambda lib, t: lib.view_copy(t.contiguous(), lib.int32 if t.dtype == lib.float32
                                                    else lib.int64),
    "split_with_sizes_copy": lambda lib, t: lib.split_with_sizes_copy(t, [1, 3], 1),
}


@pytest.mark.parametrize("name", list(COPIES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_copies_match_torch(name, dtype, noncontiguous):
    grad = name != "view_copy_dtype"
    assert_parity(COPIES[name], make_tensor((3, 4, 5), dtype), grad=grad, noncontiguous=noncontiguous)


@pytest.mark.parametrize("name", ["alias_copy", "permute_copy", "transpose_copy", "expand_copy", "narrow_copy"])
def test_the_result_owns_contiguous_memory(name):
    x = ember.arange(60.0).reshape(3, 4, 5)
    out = COPIES[name](ember, x)
    assert out.is_contiguous() and not out._is_view()
    out.add_(1)  # writing the copy leaves the input alone
    assert bool((x == ember.arange(60.0).reshape(3, 4, 5)).all())


def test_empty_and_zero_dim_inputs_match_torch():
    assert_parity(lambda lib, t: lib.permute_copy(t, (1, 0)), make_tensor((0, 3), "float64"))
    assert_parity(lambda lib, t: lib.unbind_copy(t, 0), make_tensor((0, 3), "float64"))
    assert_parity(lambda lib, t: lib.alias_copy(t), make_tensor((), "float64"))
    assert_parity(lambda lib, t: lib.unsqueeze_copy(t, 0), make_tensor((), "float32"))
    assert_parity(lambda lib, t: lib.expand_copy(t, ()), make_tensor((), "float64"))
    assert_parity(lambda lib, t: lib.view_copy(t, (2, 3)), make_tensor((6,), "int64"), grad=False)


def test_copies_return_what_torch_returns():
    x = ember.arange(6.0).reshape(2, 3)
    assert type(ember.unbind_copy(x)) is type(torch.unbind_copy(torch.arange(6.0).reshape(2, 3))) is tuple
    assert type(ember.split_with_sizes_copy(x, [1, 1])) is tuple


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.permute_copy(lib.ones(2, 3), (0, 0)))
    assert_same_error(lambda lib: lib.view_copy(lib.ones(2, 3), (4, 2)))
    assert_same_error(lambda lib: lib.narrow_copy(lib.ones(2, 3), 1, 2, 2))
    assert_same_error(lambda lib: lib.split_with_sizes_copy(lib.ones(2, 3), [1, 1], 1))
