"""embedding_bag and nn.EmbeddingBag against torch: sum/mean/max, 1-D input with offsets
(include_last_offset, empty bags), 2-D input, per_sample_weights, padding_idx,
scale_grad_by_freq, max_norm; values and the gradients of the table and the weights in
float32 and float64; the errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close

INPUT = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]
BAGS = [  # (offsets, include_last_offset): an empty bag in the middle and at the end
    ([0, 3, 3, 7], False),
    ([0, 2, 2, 6, 11], True),
    ([0, 4, 11], False),
]


def _run(mode, offsets, include_last_offset, dtype, per_sample=False, padding_idx=None, scale=False,
         two_d=False):
    rng = np.random.default_rng(0)
    table = rng.standard_normal((10, 4)).astype(dtype)
    weights = rng.standard_normal(len(INPUT) if not two_d else 12).astype(dtype)
    results = {}
    for lib in (ember, torch):
        weight = lib.tensor(table, requires_grad=True)
        if two_d:
            input, offset_tensor = lib.tensor(np.array(INPUT + [0]).reshape(3, 4)), None
            sample = lib.tensor(weights.reshape(3, 4), requires_grad=True) if per_sample else None
        else:
            input, offset_tensor = lib.tensor(INPUT), lib.tensor(offsets)
            sample = lib.tensor(weights, requires_grad=True) if per_sample else None
        out = lib.nn.functional.embedding_bag(input, weight, offset_tensor, mode=mode, per_sample_weights=sample,
                                              include_last_offset=include_last_offset, padding_idx=padding_idx,
                                              scale_grad_by_freq=scale)
        cotangent = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(dtype))
        (out * cotangent).sum().backward()
        results[lib] = out, weight.grad, None if sample is None else sample.grad
    for e, t in zip(results[ember], results[torch]):
        if t is not None:
            assert_close(e, t)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("offsets,include_last_offset", BAGS)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_modes_and_bags(mode, offsets, include_last_offset, dtype):
    _run(mode, offsets, include_last_offset, dtype)
    _run(mode, offsets, include_last_offset, dtype, padding_idx=5)
    _run(mode, offsets, include_last_offset, dtype, two_d=True, padding_idx=-1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_per_sample_weights_and_scale_grad_by_freq(dtype):
    _run("sum", [0, 3, 3, 7], False, dtype, per_sample=True)
    _run("sum", [0, 3, 3, 7], False, dtype, per_sample=True, padding_idx=1)
    _run("sum", None, False, dtype, per_sample=True, two_d=True)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq_divides_by_each_index_count(mode):
    # torch 2.13's embedding_bag divides by a neighbouring index's count (its own
    # gradient breaks the documented rule), so the reference is torch's unscaled
    # gradient divided by each row's count in the input.
    table = np.random.default_rng(3).standard_normal((10, 4))
    e_weight, t_weight = ember.tensor(table, requires_grad=True), torch.tensor(table, requires_grad=True)
    offsets = [0, 4, 11]
    ember.nn.functional.embedding_bag(ember.tensor(INPUT), e_weight, ember.tensor(offsets), mode=mode,
                                      scale_grad_by_freq=True).sum().backward()
    torch.nn.functional.embedding_bag(torch.tensor(INPUT), t_weight, torch.tensor(offsets), mode=mode).sum().backward()
    counts = np.maximum(np.bincount(INPUT, minlength=10), 1)[:, None]
    assert_close(e_weight.grad, t_weight.grad / torch.tensor(counts))


def test_max_norm_renormalises_the_table_in_place():
    table = np.random.default_rng(2).standard_normal((10, 4)) * 3
    e_weight, t_weight = ember.tensor(table), torch.tensor(table)
    e = ember.nn.functional.embedding_bag(ember.tensor(INPUT), e_weight, ember.tensor([0, 5]), max_norm=1.5)
    t = torch.nn.functional.embedding_bag(torch.tensor(INPUT), t_weight, torch.tensor([0, 5]), max_norm=1.5)
    assert_close(e, t)
    assert_close(e_weight, t_weight)


def test_module_matches_torch():
    kwargs = dict(mode="max", padding_idx=2, include_last_offset=True)
    e_bag, t_bag = ember.nn.EmbeddingBag(10, 3, **kwargs), torch.nn.EmbeddingBag(10, 3, **kwargs)
    assert repr(e_bag) == repr(t_bag)
    assert not e_bag.weight[2].any()
    e_bag.weight.data = ember.tensor(t_bag.weight.detach().numpy())
    offsets = [0, 4, 11]
    assert_close(e_bag(ember.tensor(INPUT), ember.tensor(offsets)), t_bag(torch.tensor(INPUT), torch.tensor(offsets)))
    table = torch.randn(5, 2)
    e_pre = ember.nn.EmbeddingBag.from_pretrained(ember.tensor(table.numpy()), mode="sum")
    t_pre = torch.nn.EmbeddingBag.from_pretrained(table, mode="sum")
    assert repr(e_pre) == repr(t_pre) and not e_pre.weight.requires_grad
    assert_close(e_pre(ember.tensor([[0, 4], [1, 1]])), t_pre(torch.tensor([[0, 4], [1, 1]])))


@pytest.mark.parametrize("exception,call", [
    (ValueError, lambda F, lib: F.embedding_bag(lib.tensor([[1, 2]]), lib.ones(5, 2), lib.tensor([0]))),
    (ValueError, lambda F, lib: F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2))),
    (ValueError, lambda F, lib: F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2), lib.tensor([[0]]))),
    (ValueError, lambda F, lib: F.embedding_bag(lib.tensor([1, 2]), lib.ones(5), lib.tensor([0]))),
    (ValueError, lambda F, lib: F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2), lib.tensor([0]), mode="min")),
    (ValueError, lambda F, lib: F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2), lib.tensor([0]), mode="max",
                                                scale_grad_by_freq=True)),
    (NotImplementedError, lambda F, lib: F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2), lib.tensor([0]),
                                                         mode="mean", per_sample_weights=lib.ones(2))),
    (RuntimeError, lambda F, lib: F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2), lib.tensor([1]))),
    (RuntimeError, lambda F, lib: F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2), lib.tensor([0, 3]))),
])
def test_errors_like_torch(exception, call):
    with pytest.raises(exception) as expected:
        call(torch.nn.functional, torch)
    with pytest.raises(exception) as actual:
        call(ember.nn.functional, ember)
    # torch prints its tensor types (and a 0-d tensor after one message): compare ember's words
    expected_text = str(expected.value).split("\n")[0].replace("torch.Tensor", "ember.tensor.Tensor")
    assert str(actual.value) == expected_text
