"""channels_last convolutions a few images at a time
(ember/native/convolution/channels_last_images.py): the fixed rule picks them on one
BLAS thread where the batch makes more than one chunk; each of the three products
matches torch's in values and layout, with the forward's rows kept or gathered again
(the same bits either way), and for gradients that are not NHWC."""

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

import ember
from ember.native.convolution import channels_last_images as nhwc_images
from ember.native.convolution import columns as kept
from ember.native.convolution import images
from ember.native.fold import geometry
from ember.testing import make_tensor

TOLERANCE = {"float32": dict(rtol=1e-4, atol=1e-4), "float64": dict(rtol=1e-9, atol=1e-10)}

# (input shape, weight shape, kwargs): stride 1 with O > C (col2im) and O <= C (the full
# correlation), stride 2, dilation with a rectangular kernel, 1x1, one window, taps
# that read only padding
CASES = [
    ((3, 4, 7, 6), (5, 4, 3, 3), dict(padding=1)),
    ((3, 6, 7, 6), (4, 6, 3, 3), dict(padding=1)),
    ((3, 4, 9, 8), (6, 4, 3, 3), dict(stride=2, padding=1)),
    ((2, 3, 8, 7), (4, 3, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(2, 1))),
    ((3, 6, 5, 5), (4, 6, 1, 1), {}),
    ((2, 3, 5, 5), (2, 3, 5, 5), {}),
    ((2, 3, 4, 4), (2, 3, 3, 3), dict(padding=3)),
]
PRODUCTS = ("forward", "input_adjoint", "weight_adjoint")


@pytest.fixture
def chunked(monkeypatch):
    """One image per chunk on these small maps; counts the calls of the chunked kernels."""
    monkeypatch.setattr(images, "CHUNK_ELEMENTS", 1)
    monkeypatch.setattr(images, "MIN_CHUNK_PIXELS", 1)
    calls = dict.fromkeys(PRODUCTS, 0)
    for name in PRODUCTS:
        kernel = getattr(nhwc_images, name)

        def counted(*args, _name=name, _kernel=kernel, **kwargs):
            calls[_name] += 1
            return _kernel(*args, **kwargs)

        monkeypatch.setattr(nhwc_images, name, counted)
    return calls


def _results(lib, x, w, b, seed, kwargs):
    X = lib.tensor(x).contiguous(memory_format=lib.channels_last).requires_grad_()
    W, B = lib.tensor(w).requires_grad_(), lib.tensor(b).requires_grad_()
    with threadpool_limits(limits=1, user_api="blas"):
        y = lib.nn.functional.conv2d(X, W, B, **kwargs)
        grads = lib.autograd.grad(y, (X, W, B), seed(lib, y))
    return (y,) + tuple(grads)


def _seeded(dtype):
    def seed(lib, y):
        values = np.random.default_rng(3).uniform(-1, 1, tuple(y.shape)).astype(dtype)
        return lib.tensor(values).contiguous(memory_format=lib.channels_last)
    return seed


def _case(x_shape, w_shape, dtype):
    return make_tensor(x_shape, dtype), make_tensor(w_shape, dtype, seed=1), make_tensor(w_shape[:1], dtype, seed=2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_shape, w_shape, kwargs", CASES)
def test_the_chunks_match_torch(chunked, dtype, x_shape, w_shape, kwargs):
    x, w, b = _case(x_shape, w_shape, dtype)
    ours = _results(ember, x, w, b, _seeded(dtype), kwargs)
    theirs = _results(torch, x, w, b, _seeded(dtype), kwargs)
    assert all(chunked[name] for name in PRODUCTS), chunked  # each product ran by chunks
    for name, a, t in zip(("output", "input's grad", "weight's grad", "bias's grad"), ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), **TOLERANCE[dtype], err_msg=name)
    # the weight's gradient in torch's layout; not the strides of a 1x1 weight's size-1
    # dims (channels_last.py's differ from torch's too)
    assert ours[2].is_contiguous(memory_format=ember.channels_last) == theirs[2].is_contiguous(
        memory_format=torch.channels_last) and ours[2].is_contiguous() == theirs[2].is_contiguous()
    assert ours[0].stride() == theirs[0].stride() and ours[1].stride() == theirs[1].stride()


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CASES[:3])
def test_kept_rows_give_the_bits_gathered_again(chunked, monkeypatch, x_shape, w_shape, kwargs):
    x, w, b = _case(x_shape, w_shape, "float32")
    taken = []
    take = kept.take
    monkeypatch.setattr(kept, "take", lambda *a: taken.append(take(*a)) or taken[-1])
    kept_rows = _results(ember, x, w, b, _seeded("float32"), kwargs)
    assert taken[-1] is not None  # the weight's gradient read the forward's rows
    monkeypatch.setattr(kept, "BUDGET", 0)  # nothing kept: gathered again
    monkeypatch.setattr(kept, "ALONE", 0)
    gathered = _results(ember, x, w, b, _seeded("float32"), kwargs)
    assert taken[-1] is None
    for a, g in zip(kept_rows, gathered):
        np.testing.assert_array_equal(a.detach().numpy(), g.detach().numpy())


def test_a_gradient_that_is_not_nhwc(chunked):
    # the gradient of a sum is one value broadcast; an NCHW gradient is read through its strides
    x, w, b = _case((3, 4, 7, 6), (5, 4, 3, 3), "float64")
    for make_seed in (lambda lib, y: lib.ones((), dtype=y.dtype).expand(*y.shape), lambda lib, y: _seeded("float64")(
            lib, y).contiguous()):
        ours = _results(ember, x, w, b, make_seed, dict(padding=1))
        theirs = _results(torch, x, w, b, make_seed, dict(padding=1))
        for a, t in zip(ours, theirs):
            np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), **TOLERANCE["float64"])


def test_the_rule_takes_chunks_only_on_one_thread_and_for_two_chunks_or_more():
    large = geometry((4, 16, 32, 32), (3, 3), (1, 1), (1, 1), (1, 1))  # one image per chunk
    with threadpool_limits(limits=1, user_api="blas"):
        assert nhwc_images.applies(np, large, 1)
        assert not nhwc_images.applies(np, large, 2)  # groups keep the whole batch
        assert not nhwc_images.applies(np, geometry((1, 16, 32, 32), (3, 3), (1, 1), (1, 1), (1, 1)), 1)
        # a batch whose rows make one chunk: the whole-batch product
        assert not nhwc_images.applies(np, geometry((2, 16, 16, 16), (3, 3), (1, 1), (1, 1), (1, 1)), 1)
    with threadpool_limits(limits=2, user_api="blas"):
        assert not nhwc_images.applies(np, large, 1)
