"""cross_entropy (ember_loss/cross_entropy.py) against PyTorch: class indices and class
probabilities, K-dimensional inputs, weight, ignore_index, label_smoothing and their
combinations, every reduction, float32/float64; input and target gradients, gradcheck,
double backward; edge cases (all ignored, empty batch) and PyTorch's errors."""

import itertools

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
REDUCTIONS = ["none", "mean", "sum"]
# (input shape, target shape): (C,), (N, C), (N, C, d1), (N, C, d1, d2), (N, C, d1, d2, d3)
SHAPES = [((5,), ()), ((4, 5), (4,)), ((3, 4, 2), (3, 2)), ((2, 3, 2, 3), (2, 2, 3)), ((2, 3, 2, 1, 2), (2, 2, 1, 2))]


def class_dim(shape):
    return 0 if len(shape) == 1 else 1


def indices(input_shape, target_shape, seed=0, ignore=None):
    classes = input_shape[class_dim(input_shape)]
    rng = np.random.default_rng(seed)
    target = np.asarray(rng.integers(0, classes, size=target_shape), dtype="int64")
    if ignore is not None and target.size:
        target.ravel()[::3] = ignore
    return target


def probabilities(shape, dtype, seed=2):
    p = np.random.default_rng(seed).uniform(0.05, 1, size=shape)
    return np.asarray(p / p.sum(axis=class_dim(shape), keepdims=True), dtype=dtype)


def class_weight(shape, dtype):
    return np.random.default_rng(5).uniform(0.2, 2.0, size=shape[class_dim(shape)]).astype(dtype)


def ce(weight=None, **kwargs):
    def call(lib, x, t):
        w = None if weight is None else lib.tensor(weight)
        return lib.nn.functional.cross_entropy(x, t, weight=w, **kwargs)
    return call


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, target_shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted, ignore, smoothing", list(itertools.product([False, True], [None, 1], [0.0, 0.3])))
def test_class_indices(dtype, shape, target_shape, reduction, weighted, ignore, smoothing):
    x = make_tensor(shape, dtype)
    t = indices(shape, target_shape, ignore=ignore)
    weight = class_weight(shape, dtype) if weighted else None
    kwargs = dict(reduction=reduction, label_smoothing=smoothing)
    if ignore is not None:
        kwargs["ignore_index"] = ignore
    assert_parity(ce(weight, **kwargs), x, t)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, target_shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted, smoothing", list(itertools.product([False, True], [0.0, 0.25])))
def test_class_probabilities(dtype, shape, target_shape, reduction, weighted, smoothing):
    # target gradients are compared too: the target is a float tensor that requires grad
    weight = class_weight(shape, dtype) if weighted else None
    assert_parity(ce(weight, reduction=reduction, label_smoothing=smoothing), make_tensor(shape, dtype),
                  probabilities(shape, dtype))


def test_large_logits_are_stable():
    x = make_tensor((4, 6), "float32") * 1000
    assert_parity(ce(), x, indices((4, 6), (4,)))
    assert_parity(ce(reduction="none", label_smoothing=0.1), x, indices((4, 6), (4,)))
    assert_parity(ce(), x, probabilities((4, 6), "float32"))


def test_noncontiguous_input():
    assert_parity(ce(reduction="none"), make_tensor((4, 6), "float64"), indices((4, 6), (4,)), noncontiguous=True)


def test_uint8_targets():
    assert_parity(ce(), make_tensor((4, 5)), indices((4, 5), (4,)).astype("uint8"))


def test_negative_label_smoothing_is_ignored_like_torch():
    assert_parity(ce(label_smoothing=-0.5), make_tensor((4, 5)), indices((4, 5), (4,)))


def test_probabilities_promote_like_torch():
    assert_parity(ce(), make_tensor((3, 4), "float32"), probabilities((3, 4), "float64"))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_all_targets_ignored(reduction, smoothing, weighted):
    # torch: mean of nothing is nan, and the gradient is zero
    shape = (3, 4)
    weight = class_weight(shape, "float64") if weighted else None
    t = np.full(3, 2, dtype="int64")
    assert_parity(ce(weight, ignore_index=2, reduction=reduction, label_smoothing=smoothing),
                  make_tensor(shape, "float64"), t)


def test_zero_weights_give_nan_like_torch():
    weight = np.zeros(4)
    assert_parity(ce(weight), make_tensor((3, 4), "float64"), indices((3, 4), (3,)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape, target_shape", [((0, 4), (0,)), ((0, 4, 3), (0, 3)), ((2, 4, 0), (2, 0))])
def test_empty(reduction, shape, target_shape):
    assert_parity(ce(reduction=reduction), make_tensor(shape, "float64"), indices(shape, target_shape))
    assert_parity(ce(reduction=reduction), make_tensor(shape, "float64"), np.zeros(shape))


def test_ignored_index_out_of_range_is_allowed():
    t = np.array([0, 7, 2], dtype="int64")
    assert_parity(ce(ignore_index=7), make_tensor((3, 4)), t)


@pytest.mark.parametrize("case", [
    ("input 0-d", (), ()),
    ("batch mismatch", (3, 4), (2,)),
    ("2-d target", (3, 4), (3, 2)),
    ("1-d input, long target", (4,), (2,)),
    ("K-dim target shape", (3, 4, 5), (3, 4)),
    ("4-d target rank", (2, 3, 4, 5), (2, 4)),
    ("4-d target shape", (2, 3, 4, 5), (2, 5, 5)),
])
def test_shape_errors(case):
    _, shape, target_shape = case
    assert_parity(ce(), make_tensor(shape), np.zeros(target_shape, dtype="int64"))


@pytest.mark.parametrize("target", [np.array([0, 4, 1]), np.array([0, -1, 1]), np.array([0, 1, 1], dtype="int32"),
                                    np.array([0.0, 1.0, 1.0])])
def test_bad_targets(target):
    assert_parity(ce(), make_tensor((3, 4)), target)


def test_bad_targets_in_k_dims():
    assert_parity(ce(), make_tensor((2, 3, 4, 5)), np.full((2, 4, 5), 3, dtype="int64"))


@pytest.mark.parametrize("kwargs", [dict(weight=np.ones(3, dtype="float32")),
                                    dict(weight=np.ones(4, dtype="float64")),
                                    dict(weight=np.ones(3, dtype="float32"), label_smoothing=0.1),
                                    dict(label_smoothing=1.5)])
def test_bad_options_with_indices(kwargs):
    assert_parity(ce(**kwargs), make_tensor((3, 4)), indices((3, 4), (3,)))


@pytest.mark.parametrize("kwargs", [dict(weight=np.ones(3, dtype="float32")), dict(ignore_index=1),
                                    dict(label_smoothing=1.5)])
def test_bad_options_with_probabilities(kwargs):
    assert_parity(ce(**kwargs), make_tensor((3, 4)), probabilities((3, 4), "float32"))


def test_integer_probabilities_and_inputs():
    assert_parity(ce(), make_tensor((3, 4)), np.zeros((3, 4), dtype="int64"))
    assert_parity(ce(), make_tensor((3, 4), "int64"), indices((3, 4), (3,)))


def test_weight_requiring_grad_is_an_error_like_torch():
    import torch

    with pytest.raises(RuntimeError) as torch_error:
        torch.nn.functional.cross_entropy(torch.randn(3, 4), torch.tensor([0, 1, 2]),
                                          weight=torch.ones(4, requires_grad=True))
    with pytest.raises(RuntimeError) as ember_error:
        ember.nn.functional.cross_entropy(ember.randn(3, 4), ember.tensor([0, 1, 2]),
                                          weight=ember.ones(4, requires_grad=True))
    assert str(ember_error.value) == str(torch_error.value)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [dict(), dict(weighted=True, ignore_index=1, label_smoothing=0.2)])
def test_gradcheck_class_indices(reduction, kwargs):
    kwargs = dict(kwargs)
    weight = ember.tensor(class_weight((3, 4, 2), "float64")) if kwargs.pop("weighted", False) else None
    x = ember.tensor(make_tensor((3, 4, 2), "float64")).requires_grad_()
    t = ember.tensor(indices((3, 4, 2), (3, 2), ignore=kwargs.get("ignore_index")))
    fn = lambda x: ember.nn.functional.cross_entropy(x, t, weight=weight, reduction=reduction, **kwargs)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_class_probabilities(reduction):
    x = ember.tensor(make_tensor((3, 4), "float64")).requires_grad_()
    q = ember.tensor(probabilities((3, 4), "float64")).requires_grad_()
    w = ember.tensor(class_weight((3, 4), "float64"))
    fn = lambda x, q: ember.nn.functional.cross_entropy(x, q, weight=w, reduction=reduction, label_smoothing=0.1)
    assert gradcheck(fn, (x, q))
    assert gradgradcheck(fn, (x, q))


def double_backward(lib, x, t, target_is_leaf=False, **kwargs):
    """Second derivatives: d/dx of sum(grad_x * v), the Hessian-vector product."""
    loss = lib.nn.functional.cross_entropy(x, t, **kwargs)
    (g,) = lib.autograd.grad(loss.sum() if loss.ndim else loss, x, create_graph=True)
    v = lib.tensor(np.linspace(-1, 1, int(np.prod(tuple(x.shape)))).reshape(tuple(x.shape)), dtype=x.dtype)
    inputs = [x, t] if target_is_leaf else [x]
    return lib.autograd.grad((g * v).sum(), inputs)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [dict(), dict(ignore_index=1, label_smoothing=0.3)])
def test_double_backward_vs_torch(reduction, kwargs):
    x = make_tensor((4, 5, 2), "float64")
    t = indices((4, 5, 2), (4, 2), ignore=kwargs.get("ignore_index"))
    assert_parity(lambda lib, x, t: double_backward(lib, x, t, reduction=reduction, **kwargs), x, t, grad=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_double_backward_probabilities_vs_torch(reduction):
    x = make_tensor((4, 5), "float64")
    q = probabilities((4, 5), "float64")
    assert_parity(lambda lib, x, q: double_backward(lib, x, q, target_is_leaf=True, reduction=reduction,
                                                    label_smoothing=0.2), x, q, grad=False)


def test_fused_op_is_one_graph_node():
    x = ember.randn(4, 5, requires_grad=True)
    loss = ember.nn.functional.cross_entropy(x, ember.tensor([0, 1, 2, 3]))
    assert type(loss.grad_fn).__name__ != "" and loss.grad_fn.name() == "CrossEntropyBackward0"
    assert loss.grad_fn.next_functions[0][0] is x._get_grad_accumulator()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 4, 3)])
def test_probabilities_weight_gradient_like_torch(reduction, shape):
    # torch differentiates weight for class probabilities (a composite there), not for indices
    fn = lambda lib, x, q, w: lib.nn.functional.cross_entropy(x, q, weight=w, reduction=reduction,
                                                              label_smoothing=0.1)
    assert_parity(fn, make_tensor(shape, "float64"), probabilities(shape, "float64"), class_weight(shape, "float64"))
