"""The canonical mask, the identities and the canonical dims of ``ember.masked``
(ember/masked/mask.py) against torch/masked/_ops.py's own helpers on the same arguments."""

import numpy as np
import pytest
import torch
from torch.masked import _ops as torch_masked

import ember
from ember.masked import mask as ember_mask


@pytest.mark.parametrize("dim, ndim", [(None, 3), ((), 2), (1, 3), (-1, 3), ((2, 0), 3), (0, 0), ((-1,), 0),
                                       ([1, -3], 3), ((1, -2), 3)])
def test_canonical_dim_matches_torch(dim, ndim):
    assert ember_mask.canonical_dim(dim, ndim) == torch_masked._canonical_dim(dim, ndim)


@pytest.mark.parametrize("dim, ndim", [((1, 1), 3), (3, 3), (-4, 3), (1, 0)])
def test_canonical_dim_errors_match_torch(dim, ndim):
    with pytest.raises(Exception) as expected:
        torch_masked._canonical_dim(dim, ndim)
    with pytest.raises(type(expected.value)) as actual:
        ember_mask.canonical_dim(dim, ndim)
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("mask_shape", [(2, 3), (3,), (1, 3), (2, 1), ()])
@pytest.mark.parametrize("mask_dtype", ["bool", "int64", "float32"])
def test_input_mask_matches_torch(mask_shape, mask_dtype):
    values = np.random.default_rng(0).integers(0, 2, size=mask_shape).astype(mask_dtype)
    expected = torch_masked._input_mask(torch.zeros(2, 3), mask=torch.from_numpy(np.array(values)))
    actual = ember_mask.input_mask(ember.zeros(2, 3), ember.tensor(np.array(values)))
    assert actual.dtype is ember.bool and tuple(actual.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_input_mask_errors_match_torch():
    for mask, torch_mask in ((None, None), (ember.ones(1, 2, 3, dtype=ember.bool), torch.ones(1, 2, 3, dtype=bool))):
        with pytest.raises(Exception) as expected:
            torch_masked._input_mask(torch.zeros(2, 3), mask=torch_mask)
        with pytest.raises(type(expected.value), match=str(expected.value).replace("(", r"\(").replace(")", r"\)")):
            ember_mask.input_mask(ember.zeros(2, 3), mask)


NAMES = ["sum", "cumsum", "prod", "cumprod", "amax", "argmax", "logaddexp", "logsumexp", "amin", "argmin", "norm",
         "median", "mean", "var", "std"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "uint8", "complex64", "bool"])
@pytest.mark.parametrize("name", NAMES)
def test_reduction_identity_matches_torch(name, dtype):
    try:
        expected = torch_masked._reduction_identity(name, torch.zeros(2, dtype=getattr(torch, dtype)))
    except (NotImplementedError, TypeError) as error:
        message = str(error).replace("(", r"\(").replace(")", r"\)")
        if isinstance(error, TypeError):  # iinfo's message names its own library
            message = message.replace("torch", "ember")
        with pytest.raises(type(error), match=message):
            ember_mask.reduction_identity(name, ember.zeros(2, dtype=getattr(ember, dtype)))
        return
    actual = ember_mask.reduction_identity(name, ember.zeros(2, dtype=getattr(ember, dtype)))
    if expected is None:
        assert actual is None
        return
    assert actual.dtype.name == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


@pytest.mark.parametrize("ord", [float("-inf"), 1.0, float("inf")])
def test_norm_identity_follows_the_order_as_in_torch(ord):
    expected = torch_masked._reduction_identity("norm", torch.zeros(2), ord)
    np.testing.assert_array_equal(ember_mask.reduction_identity("norm", ember.zeros(2), ord).numpy(), expected.numpy())
