"""Which outputs an op's backward reads: ops that return (values, indices) and whose
gradient needs only the indices leave the values free to change in place, as torch's do
(an in-place ReLU after max pooling is common in real models)."""

import numpy as np
import pytest
import torch

import ember

CASES = {
    "max_pool2d": lambda lib, x: (lib.nn.functional.max_pool2d(x.view(1, 2, 3, 4), 2), None),
    "max_pool1d_indices": lambda lib, x: lib.nn.functional.max_pool1d(x, 2, return_indices=True),
    "adaptive_max_pool2d": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x.unsqueeze(0), 2,
                                                                                return_indices=True),
    "max_dim": lambda lib, x: x.max(1),
    "min_dim": lambda lib, x: x.min(1),
    "sort": lambda lib, x: x.sort(1),
    "topk": lambda lib, x: x.topk(2, 1),
    "kthvalue": lambda lib, x: x.kthvalue(2, 1),
    "median_dim": lambda lib, x: x.median(1),
    "nanmedian_dim": lambda lib, x: x.nanmedian(1),
    "mode": lambda lib, x: x.mode(1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_inplace_relu_on_the_values_keeps_the_backward(case):
    data = np.random.default_rng(0).standard_normal((6, 4)).round(3)
    grads = []
    for lib in (torch, ember):
        x = lib.tensor(data, requires_grad=True)
        values, _ = CASES[case](lib, x)
        values.relu_()
        (values * lib.arange(values.numel(), dtype=values.dtype).view(values.shape)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])
