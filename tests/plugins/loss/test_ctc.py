"""ctc_loss and CTCLoss (ember_loss/ctc.py) against PyTorch: every reduction and
zero_infinity, float32/float64, padded and concatenated targets, tensor and tuple
lengths, unbatched input, repeated labels, impossible alignments, empty targets and
inputs, a non-contiguous input, PyTorch's gradient (NOTE [ The gradient of ctc_loss ]),
and its argument errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity

FLOATS = ["float32", "float64"]
REDUCTIONS = ["none", "mean", "sum"]
TOLERANCE = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def log_probs(steps, batch, classes, dtype, seed=0):
    logits = np.random.default_rng(seed).standard_normal((steps, batch, classes))
    shifted = logits - logits.max(-1, keepdims=True)
    return (shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))).astype(dtype)


def padded_targets(batch, length, classes, blank=0, seed=1):
    labels = np.random.default_rng(seed).integers(1, classes, size=(batch, length))
    return np.where(labels == blank, classes - 1, labels)


def ctc(targets, input_lengths, target_lengths, as_tensors=True, **kwargs):
    def call(lib, lp):
        lengths = (lib.tensor(input_lengths), lib.tensor(target_lengths)) if as_tensors else (
            tuple(input_lengths), tuple(target_lengths))
        return lib.nn.functional.ctc_loss(lp, lib.tensor(targets), *lengths, **kwargs)
    return call


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("as_tensors", [True, False])
def test_padded_targets(dtype, reduction, zero_infinity, as_tensors):
    lp = log_probs(12, 4, 6, dtype)
    targets = padded_targets(4, 5, 6)
    targets[1, :3] = [2, 2, 2]  # repeated labels need a blank between them
    fn = ctc(targets, [12, 10, 6, 12], [5, 3, 4, 0], as_tensors, reduction=reduction, zero_infinity=zero_infinity)
    assert_parity(fn, lp, **TOLERANCE[dtype])
    assert_parity(fn, lp, noncontiguous=True, **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_concatenated_targets_and_blank(dtype, reduction):
    lp = log_probs(9, 3, 5, dtype, seed=2)
    lengths = [4, 2, 3]
    targets = np.random.default_rng(3).integers(0, 4, size=sum(lengths))  # blank is class 4 here
    assert_parity(ctc(targets, [9, 9, 7], lengths, reduction=reduction, blank=4), lp, **TOLERANCE[dtype])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignments(reduction, zero_infinity):
    # three frames cannot hold four labels, nor 1 1 1 (which needs five)
    lp = log_probs(3, 2, 4, "float64")
    targets = np.array([[1, 2, 3, 1], [1, 1, 1, 0]])
    assert_parity(ctc(targets, [3, 3], [4, 3], reduction=reduction, zero_infinity=zero_infinity), lp)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_unbatched(reduction):
    lp = log_probs(8, 1, 5, "float64")[:, 0]
    assert_parity(ctc(np.array([1, 3, 3]), 8, 3, reduction=reduction), lp)


def test_empty_input_lengths_and_batch_as_torch():
    lp = log_probs(5, 2, 4, "float64")
    assert_parity(ctc(np.array([[1, 2], [1, 1]]), [0, 5], [0, 0], reduction="none"), lp)
    # an empty batch: PyTorch refuses it ("log_probs tensor must not be empty"), as ember
    assert_parity(ctc(np.zeros((0, 2), np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), reduction="sum"),
                  log_probs(5, 0, 4, "float64"))


def test_module_matches_functional_and_torch():
    lp = log_probs(10, 3, 6, "float32")
    targets, lengths = padded_targets(3, 4, 6), ([10, 9, 8], [4, 3, 2])
    for reduction in REDUCTIONS:
        assert_parity(lambda lib, x: lib.nn.CTCLoss(blank=0, reduction=reduction, zero_infinity=True)(
            x, lib.tensor(targets), lib.tensor(lengths[0]), lib.tensor(lengths[1])), lp, **TOLERANCE["float32"])
    assert repr(ember.nn.CTCLoss()) == repr(torch.nn.CTCLoss())


def test_gradient_is_torchs_through_log_softmax():
    # PyTorch's gradient folds in log_softmax's Jacobian: through log_softmax it is the
    # true gradient, which gradcheck confirms
    from ember.autograd import gradcheck

    logits = ember.tensor(np.random.default_rng(4).standard_normal((6, 2, 4)), requires_grad=True)
    targets, lengths = ember.tensor([[1, 2], [3, 3]]), (ember.tensor([6, 5]), ember.tensor([2, 2]))
    assert gradcheck(lambda x: ember.nn.functional.ctc_loss(x.log_softmax(2), targets, *lengths), [logits])


@pytest.mark.parametrize("case", [
    dict(input_lengths=[5, 6]), dict(target_lengths=[2, 3]), dict(input_lengths=[5, 5, 5]),
    dict(blank=4), dict(blank=-1), dict(input_lengths=[5, -1]), dict(target_lengths=[2, -1]),
    dict(targets=[1, 2, 1]), dict(reduction="bad")])
def test_errors_match_torch(case):
    arguments = dict(targets=[[1, 2], [1, 1]], input_lengths=[5, 5], target_lengths=[2, 2], blank=0,
                     reduction="mean")
    arguments.update(case)
    lp = log_probs(5, 2, 4, "float32")
    messages = []
    for lib in (torch, ember):
        with pytest.raises((RuntimeError, ValueError)) as error:
            lib.nn.functional.ctc_loss(lib.tensor(lp), lib.tensor(arguments["targets"]), arguments["input_lengths"],
                                       arguments["target_lengths"], blank=arguments["blank"],
                                       reduction=arguments["reduction"])
        messages.append((type(error.value), str(error.value)))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("lengths", [(ember.tensor([5, 5]), [2, 2]), ([5, 5], ember.tensor([2, 2])), (5, 2)])
def test_lengths_of_mixed_or_scalar_kinds_are_a_type_error_as_torch(lengths):
    lp = log_probs(5, 2, 4, "float32")
    for lib in (torch, ember):
        mixed = [lib.tensor(x.tolist()) if isinstance(x, ember.Tensor) else x for x in lengths]
        with pytest.raises(TypeError):
            lib.nn.functional.ctc_loss(lib.tensor(lp), lib.tensor([[1, 2], [1, 1]]), *mixed)
