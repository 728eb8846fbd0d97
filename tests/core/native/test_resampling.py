"""The resampling op (``out[j] = sum_t w_t[j] * x[index_t[j]]`` along one dim) that
interpolate and the non-constant pads use: values and gradients against the same map
written with torch's index_select, for sorted and unsorted maps, sources read many
times or never; gradcheck and double backward."""

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.native.resampling import resample
from ember.testing import assert_close, make_tensor

MAPS = [
    [([0, 0, 1, 1, 2, 2], None)],                               # 2x nearest upsampling
    [([0, 2, 4], None)],                                        # downsampling: sources skipped
    [([2, 1, 0, 1, 2, 3, 4, 3, 2], None)],                      # reflect padding: unsorted
    [([0, 0, 1, 2], [0.25, 1.0, 0.5, 0.5]), ([0, 1, 2, 2], [0.75, 0.0, 0.5, 0.5])],  # linear
]


def _torch_resample(x, dim, taps):
    out = 0
    for index, weight in taps:
        part = x.index_select(dim, torch.tensor(index))
        if weight is not None:
            shape = [1] * x.ndim
            shape[dim] = -1
            part = part * torch.tensor(weight, dtype=x.dtype).view(shape)
        out = out + part
    return out


@pytest.mark.parametrize("dim", [0, 2])
@pytest.mark.parametrize("taps", MAPS)
def test_matches_index_select(dim, taps):
    shape = [5, 3, 5]
    x = make_tensor(shape, "float64")
    g = make_tensor([len(taps[0][0]) if d == dim else s for d, s in enumerate(shape)], "float64", seed=1)
    ours = ember.tensor(x).requires_grad_()
    theirs = torch.from_numpy(x).requires_grad_()
    ember_taps = [(np.array(i), None if w is None else np.array(w)) for i, w in taps]
    out_e, out_t = resample(ours, dim, ember_taps), _torch_resample(theirs, dim, taps)
    assert_close(out_e, out_t)
    out_e.backward(ember.tensor(g))
    out_t.backward(torch.from_numpy(g))
    assert_close(ours.grad, theirs.grad)


@pytest.mark.parametrize("taps", MAPS)
def test_gradcheck_and_double_backward(taps):
    x = ember.tensor(make_tensor((2, 5), "float64")).requires_grad_()
    ember_taps = [(np.array(i), None if w is None else np.array(w)) for i, w in taps]
    assert gradcheck(lambda x: resample(x, 1, ember_taps), (x,))
    assert gradgradcheck(lambda x: resample(x, 1, ember_taps), (x,))
