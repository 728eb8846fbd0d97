"""The small helpers of torch's top-level namespace (torch/__init__.py) that programs
call: typename, is_floating_point, is_nonzero, is_storage, set_default_tensor_type,
set_flush_denormal, set_float32_matmul_precision — each against torch."""

import warnings

import pytest
import torch

import ember


def test_typename_names_tensors_by_legacy_type_and_others_by_class():
    assert ember.typename(ember.ones(2)) == "ember.FloatTensor" and torch.typename(torch.ones(2)) == "torch.FloatTensor"
    assert ember.typename(3) == torch.typename(3) == "int"
    assert ember.typename(ember.nn.Linear(1, 1)).endswith(".Linear")


@pytest.mark.parametrize("values", [[1.0], [0.0], [[2]], [True], [1.0, 2.0], []])
def test_is_nonzero_as_torch(values):
    outcomes = []
    for lib in (torch, ember):
        try:
            outcomes.append(lib.is_nonzero(lib.tensor(values)))
        except RuntimeError as error:
            outcomes.append(str(error))
    assert outcomes[0] == outcomes[1]


def test_is_floating_point_and_is_storage():
    for lib in (torch, ember):
        assert lib.is_floating_point(lib.ones(1)) and not lib.is_floating_point(lib.ones(1, dtype=lib.int64))
        assert lib.is_storage(lib.ones(2).untyped_storage()) and not lib.is_storage(lib.ones(2))


def test_set_default_tensor_type_is_deprecated_and_sets_the_dtype():
    try:
        for lib in (torch, ember):
            with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
                lib.set_default_tensor_type(lib.DoubleTensor)
            assert lib.ones(1).dtype == lib.float64
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lib.set_default_tensor_type("torch.FloatTensor")
            assert lib.ones(1).dtype == lib.float32
    finally:
        torch.set_default_dtype(torch.float32)
        ember.set_default_dtype(ember.float32)


def test_set_flush_denormal_reports_unsupported():
    assert ember.set_flush_denormal(True) is False
    assert ember.tensor([1e-40]).item() != 0.0  # denormals kept


def test_float32_matmul_precision_is_recorded_as_torch():
    before = torch.get_float32_matmul_precision()
    try:
        for lib in (torch, ember):
            assert lib.get_float32_matmul_precision() == "highest"
            lib.set_float32_matmul_precision("medium")
            assert lib.get_float32_matmul_precision() == "medium"
            with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
                lib.set_float32_matmul_precision("fast")
            assert lib.get_float32_matmul_precision() == "medium"
    finally:
        torch.set_float32_matmul_precision(before)
        ember.set_float32_matmul_precision("highest")
