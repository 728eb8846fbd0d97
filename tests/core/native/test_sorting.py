"""sort, argsort, msort, topk, kthvalue (ember/native/sorting.py) against PyTorch:
values, indices (ties in PyTorch's order: stable, or its CPU kernels' unstable one), NaN and infinity ordering,
gradients, 0-d, empty and non-contiguous inputs, and the errors."""

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
SHAPE_DIMS = [((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -1), ((2, 3, 4), 1), ((), 0), ((), -1), ((0,), 0),
              ((2, 0), 1), ((2, 0), 0)]


def _tied(shape, dtype="float32"):
    """Small integers: many ties."""
    return make_tensor(shape, "int64", low=-2, high=2).astype(dtype)


def _with_nan_and_inf(dtype="float32"):
    return np.array([[1.0, np.nan, np.inf, -np.inf, np.nan, 0.0, -0.0, np.inf, 2.0, 1.0],
                     [np.nan, 3.0, 3.0, -1.0, np.nan, -np.inf, 5.0, np.inf, np.nan, 3.0]], dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, dim", SHAPE_DIMS)
@pytest.mark.parametrize("descending", [False, True])
def test_sort(dtype, shape, dim, descending):
    x = make_tensor(shape, dtype)  # distinct values: any sort gives the same indices
    assert_parity(lambda lib, x: lib.sort(x, dim, descending), x)
    out, _ = assert_parity(lambda lib, x: x.sort(dim=dim, descending=descending), x, noncontiguous=True)
    assert type(out).__name__ == "sort" and out.values is out[0] and out.indices is out[1]


@pytest.mark.parametrize("dtype", FLOATS + ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_of_ties(dtype, descending):
    x = _tied((4, 40), dtype)
    assert_parity(lambda lib, x: lib.sort(x, stable=True, dim=1, descending=descending), x)
    assert_parity(lambda lib, x: lib.argsort(x, stable=True, dim=0, descending=descending), x)


@pytest.mark.parametrize("descending", [False, True])
def test_default_sort_of_ties_gives_the_same_values(descending):
    # PyTorch's default sort may order tied indices differently; values must agree
    # and ember's indices must point at them.
    x = _tied((3, 40))
    assert_parity(lambda lib, x: x.sort(1, descending).values, x, grad=False)  # ties: gradients may differ
    values, indices = ember.tensor(x).sort(1, descending)
    np.testing.assert_array_equal(np.take_along_axis(x, indices.numpy(), 1), values.numpy())


def test_sort_extreme_integers():
    x = np.array([0, np.iinfo(np.int64).min, np.iinfo(np.int64).max, -1, np.iinfo(np.int64).min], dtype="int64")
    for descending in [False, True]:
        assert_parity(lambda lib, x: lib.sort(x, stable=True, descending=descending), x)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_nan_and_infinity(dtype, descending):
    # NaN is the largest value; -0.0 and 0.0 are ties.
    assert_parity(lambda lib, x: x.sort(stable=True, dim=1, descending=descending), _with_nan_and_inf(dtype))


def test_msort_and_argsort():
    x = make_tensor((4, 3))
    assert_parity(lambda lib, x: (lib.msort(x), x.argsort(), lib.argsort(x, 0, True)), x)


@pytest.mark.parametrize("dtype", FLOATS + ["int64"])
@pytest.mark.parametrize("shape, dim, k", [((7,), 0, 3), ((3, 5), 1, 5), ((3, 5), 0, 1), ((2, 3, 4), -1, 2),
                                           ((3, 5), 1, 0), ((), 0, 1), ((), -1, 0), ((0,), 0, 0), ((2, 0), 1, 0),
                                           ((2, 0), 0, 2)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype, shape, dim, k, largest):
    x = make_tensor(shape, dtype, low=-100, high=100) if dtype == "int64" else make_tensor(shape, dtype)
    if dtype == "int64" and x.ndim and x.size:
        x = np.arange(x.size, dtype="int64").reshape(shape)[..., ::-1].copy()  # distinct integers
    out, _ = assert_parity(lambda lib, x: x.topk(k, dim, largest), x)
    assert_parity(lambda lib, x: lib.topk(x, k, dim=dim, largest=largest, sorted=True), x, noncontiguous=True)
    if out is not None:
        assert type(out).__name__ == "topk"


def test_topk_of_ties_and_nan_gives_the_same_values():
    for x in [_tied((3, 40)), _with_nan_and_inf()]:
        for largest in [True, False]:
            assert_parity(lambda lib, x: x.topk(4, 1, largest).values, x, grad=False)
            values, indices = ember.tensor(x).topk(4, 1, largest)
            np.testing.assert_array_equal(np.take_along_axis(x, indices.numpy(), 1), values.numpy())


@pytest.mark.parametrize("k", [-1, 6])
def test_topk_k_out_of_range(k):
    assert_parity(lambda lib, x: x.topk(k), make_tensor((3, 5)))
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        ember.ones(3, 5).topk(k)


def test_topk_of_bool_raises():
    assert_parity(lambda lib, x: x.topk(1), make_tensor((3,), "bool"))


@pytest.mark.parametrize("dtype", FLOATS + ["int64"])
@pytest.mark.parametrize("shape, dim, k", [((7,), 0, 3), ((3, 5), 1, 5), ((3, 5), 0, 1), ((2, 3, 4), -1, 2),
                                           ((), 0, 1), ((2, 0), 0, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue(dtype, shape, dim, k, keepdim):
    x = make_tensor(shape, dtype)
    if dtype == "int64" and x.ndim:
        x = np.arange(x.size, dtype="int64").reshape(shape)[..., ::-1].copy()
    out, _ = assert_parity(lambda lib, x: x.kthvalue(k, dim, keepdim), x)
    assert_parity(lambda lib, x: lib.kthvalue(x, k, dim=dim, keepdim=keepdim), x, noncontiguous=True)
    assert type(out).__name__ == "kthvalue"


def test_kthvalue_of_nan_gives_the_same_values():
    x = _with_nan_and_inf()
    for k in range(1, 11):
        assert_parity(lambda lib, x: x.kthvalue(k, 1).values, x, grad=False)


@pytest.mark.parametrize("shape, k", [((3,), 0), ((3,), 4), ((0,), 1), ((), 2)])
def test_kthvalue_errors(shape, k):
    assert_parity(lambda lib, x: x.kthvalue(k), make_tensor(shape))
    assert_parity(lambda lib, x: x.kthvalue(1), make_tensor((3,), "bool"))


@pytest.mark.parametrize("name", ["sort", "argsort", "topk", "kthvalue"])
def test_bad_dim(name):
    x = make_tensor((3, 4))
    args = {"sort": (2,), "argsort": (2,), "topk": (1, 2), "kthvalue": (1, 2)}[name]
    assert_parity(lambda lib, x: getattr(x, name)(*args), x)
    with pytest.raises(IndexError, match="Dimension out of range"):
        getattr(ember.tensor(x), name)(*args)


@pytest.mark.parametrize("fn", [lambda x: x.sort(1).values, lambda x: x.sort(0, True).values,
                                lambda x: x.topk(2, 1).values, lambda x: x.topk(2, 0, largest=False).values,
                                lambda x: x.kthvalue(2, 1).values, lambda x: x.kthvalue(3, 0, True).values,
                                lambda x: x.msort()])
def test_gradcheck(fn):
    x = ember.tensor(make_tensor((3, 4), "float64")).requires_grad_()
    assert gradcheck(fn, (x,))


# NOTE [ kthvalue's ties ]: the index PyTorch's quickselect leaves at k - 1.
@pytest.mark.parametrize("values", [[1, 1, 1], [2, 1, 1, 2], [3, 1, 2, 1, 3, 1], [0, 0, 1, 0],
                                    [1, 2, 1, 2, 1, 2, 1], [float("nan"), 1, float("nan"), 1]])
def test_kthvalue_ties_pick_torchs_index(values):
    for k in range(1, len(values) + 1):
        assert_parity(lambda lib, x: x.kthvalue(k), np.array(values))


def test_kthvalue_ties_along_a_dim_with_gradient():
    x = np.random.default_rng(0).integers(0, 3, size=(4, 9)).astype(np.float64)
    for k in (1, 4, 9):
        assert_parity(lambda lib, t: t.kthvalue(k, 1, keepdim=True), x)
    assert_parity(lambda lib, t: t.kthvalue(2, 0), x)


@pytest.mark.parametrize("op", ["topk", "kthvalue"])
def test_topk_and_kthvalue_return_new_tensors(op):
    import ember

    out = getattr(ember.arange(12.0).reshape(3, 4), op)(2, 0)
    assert out.values._base is None and out.indices._base is None


@pytest.mark.parametrize("shape, k", [((), 1), ((), 2), ((1,), 1)])
def test_kthvalue_of_bool(shape, k):
    # A 0-d input never reaches the kernel (that has no bool version), as in PyTorch.
    assert_parity(lambda lib, x: x.kthvalue(k), np.ones(shape, dtype=bool))


# --- the order of ties (NOTE [ The order of ties ]) -----------------------------------------------
def _tied_values(rng, dtype, shape):
    """Few distinct values, so most lines have ties; floats with NaN, -0.0 and 0.0."""
    if dtype == "bool":
        return torch.from_numpy(rng.integers(0, 2, shape).astype(bool))
    if dtype in ("float32", "float64", "bfloat16"):
        values = rng.integers(-3, 3, shape).astype(np.float64)
        values[rng.random(shape) < 0.1] = np.nan
        values[rng.random(shape) < 0.1] = -0.0
        return torch.from_numpy(values).to(getattr(torch, dtype))
    return torch.from_numpy(rng.integers(0, 5, shape)).to(getattr(torch, dtype))


def _as_ember(t):
    if t.dtype == torch.bfloat16:
        return ember.tensor(t.float().numpy()).bfloat16()
    return ember.tensor(t.numpy())


def _same_values(ours, theirs):
    ours, theirs = ours.float().numpy(), theirs.float().numpy()
    np.testing.assert_array_equal(ours, theirs)
    number = ~np.isnan(theirs)
    np.testing.assert_array_equal(np.signbit(ours[number]), np.signbit(theirs[number]))  # -0.0 where torch's


TIE_DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64", "bfloat16"]
TIE_SHAPES = [(16,), (17,), (40,), (300,), (3, 50), (50, 3), (2, 5, 33), (8000,), (40000,)]


@pytest.mark.parametrize("dtype", TIE_DTYPES)
def test_sort_leaves_ties_where_torch_s_cpu_sort_does(dtype):
    rng = np.random.default_rng(0)
    for shape in TIE_SHAPES:
        values = _tied_values(rng, dtype, shape)
        for dim in range(values.dim()):
            for descending in (False, True):
                for stable in (False, True):
                    theirs = torch.sort(values, dim=dim, descending=descending, stable=stable)
                    ours = ember.sort(_as_ember(values), dim=dim, descending=descending, stable=stable)
                    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy(),
                                                  err_msg=f"{shape} dim={dim} descending={descending}")
                    _same_values(ours.values, theirs.values)
                np.testing.assert_array_equal(ember.argsort(_as_ember(values), dim, descending).numpy(),
                                              torch.argsort(values, dim, descending).numpy())


@pytest.mark.parametrize("dtype", TIE_DTYPES[1:])  # no bool topk, as torch
def test_topk_picks_and_orders_ties_as_torch_s_cpu_topk(dtype):
    rng = np.random.default_rng(1)
    for shape in TIE_SHAPES[:-2] + [(8000,)]:
        values = _tied_values(rng, dtype, shape)
        for dim in range(values.dim()):
            n = values.shape[dim]
            for k in sorted({1, 2, min(5, n), n // 2, n}):  # partial_sort (k * 64 <= n) and nth_element
                for largest in (True, False):
                    for is_sorted in (True, False):
                        theirs = torch.topk(values, k, dim=dim, largest=largest, sorted=is_sorted)
                        ours = ember.topk(_as_ember(values), k, dim=dim, largest=largest, sorted=is_sorted)
                        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy(),
                                                      err_msg=f"{shape} dim={dim} k={k} largest={largest}")
                        _same_values(ours.values, theirs.values)


def test_topk_gradient_flows_to_the_picked_ties():
    values = np.array([1.0, 3.0, 3.0, 3.0, 0.0] * 20)
    ours = ember.tensor(values, requires_grad=True)
    theirs = torch.tensor(values, requires_grad=True)
    ours.topk(30).values.sum().backward()
    theirs.topk(30).values.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
