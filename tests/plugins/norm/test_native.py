"""torch's ``native_*`` normalization functions against torch (ember_norm/native.py):
the output, the saved statistics and the running statistics, training and evaluation,
gradients (the output's; group norm's statistics too), float32 and float64,
non-contiguous and empty inputs, errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("form,training", [("native", True), ("native", False), ("legit", True), ("legit", False),
                                           ("legit_without_stats", True), ("with_update", True)])
def test_batch_norm_forms_match_torch(dtype, form, training):
    stats = {}

    def program(lib, x, w, b):
        mean = lib.tensor(np.linspace(-1, 1, 3).astype(dtype))
        var = lib.tensor(np.linspace(0.5, 2, 3).astype(dtype))
        if form == "native":
            out = lib.native_batch_norm(x, w, b, mean, var, training, 0.2, 1e-4)
        elif form == "legit":
            out = lib._native_batch_norm_legit(x, w, b, mean, var, training, 0.2, 1e-4)
        elif form == "legit_without_stats":
            out = lib._native_batch_norm_legit(x, w, b, training, 0.2, 1e-4)
        else:
            op = lib._batch_norm_with_update if lib is ember else torch.ops.aten._batch_norm_with_update
            out = op(x, w, b, mean, var, 0.2, 1e-4)
        stats[lib.__name__] = (mean.numpy().copy(), var.numpy().copy())
        return out

    x = make_tensor((4, 3, 5), dtype)
    w, b = make_tensor((3,), dtype, seed=2), make_tensor((3,), dtype, seed=3)
    assert_parity(program, x, w, b, noncontiguous=True)
    for ours, theirs in zip(stats["ember"], stats["torch"]):  # the running statistics moved alike
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("normalized_shape", [(5,), (4, 5)])
def test_layer_norm_matches_torch(dtype, normalized_shape):
    x = make_tensor((3, 4, 5), dtype)
    assert_parity(lambda lib, t, w, b: lib.native_layer_norm(t, normalized_shape, w, b, 1e-5), x,
                  make_tensor(normalized_shape, dtype, seed=2), make_tensor(normalized_shape, dtype, seed=3),
                  noncontiguous=True)
    assert_parity(lambda lib, t: lib.native_layer_norm(t, normalized_shape, None, None, 1e-3), x)
    assert_parity(lambda lib, t: lib.native_layer_norm(t, (5,), None, None, 1e-5), make_tensor((0, 5), dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_norm_matches_torch_with_the_statistics_gradients(dtype, groups):
    x = make_tensor((2, 4, 3, 2), dtype)
    assert_parity(lambda lib, t, w, b: lib.native_group_norm(t, w, b, 2, 4, 6, groups, 1e-5), x,
                  make_tensor((4,), dtype, seed=2), make_tensor((4,), dtype, seed=3))  # (torch refuses non-contiguous)
    assert_parity(lambda lib, t: lib.native_group_norm(t, None, None, 0, 4, 6, groups, 1e-5),
                  make_tensor((0, 4, 3, 2), dtype))


def test_errors_match_torch():
    # (torch's native_batch_norm checks less than batch_norm, and crashes on some bad calls: not compared)
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\]"):
            lib.native_layer_norm(lib.ones(2, 3), (4,), None, None, 1e-5)
