"""The user-facing ``Tensor`` API (ember/tensor.py): metadata, conversions, ``to``,
autograd flags, the Python protocol and pickling, each compared with torch.

Most cases are a function ``case(lib)`` run once with ``lib = ember`` and once with
``lib = torch``; the results (with "ember"/"torch" in reprs made equal) or the
exception types must agree.
"""

import copy
import operator
import pickle

import numpy as np
import pytest
import torch

import ember
from ember.testing import make_tensor

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]
SHAPES = [(), (0,), (3,), (2, 3), (2, 0, 3), (1, 2, 1)]


def make(lib, dtype="float32", shape=(2, 3), requires_grad=False):
    t = lib.arange(int(np.prod(shape))).reshape(shape).to(getattr(lib, dtype))
    return t.requires_grad_() if requires_grad else t


def _normalize(value, lib):
    return repr(value).replace(lib.__name__, "LIB")


def assert_same(case):
    """``case(lib)`` returns the same thing, or raises the same exception type, for both."""
    try:
        expected = ("value", _normalize(case(torch), torch))
    except Exception as e:  # noqa: BLE001 - any exception type torch raises is the oracle
        expected = ("error", type(e))
    if expected[0] == "error":
        with pytest.raises(expected[1]):
            case(ember)
    else:
        assert _normalize(case(ember), ember) == expected[1]


# --- metadata ----------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_metadata_matches_torch(shape, dtype):
    e, t = make(ember, dtype, shape), make(torch, dtype, shape)
    assert e.shape == t.shape and e.size() == t.size() and isinstance(e.shape, ember.Size)
    assert e.ndim == t.ndim == e.dim() == t.dim()
    assert e.numel() == t.numel()
    assert repr(e.dtype) == repr(t.dtype).replace("torch", "ember")
    assert e.element_size() == t.element_size() and e.itemsize == t.itemsize and e.nbytes == t.nbytes
    assert e.is_floating_point() == t.is_floating_point()
    assert e.tolist() == t.tolist()
    assert e.stride() == t.stride() and e.is_contiguous() == t.is_contiguous()
    assert e.type() == t.type().replace("torch", "ember")
    for dim in range(-max(t.ndim, 1), max(t.ndim, 1)):
        if t.ndim:
            assert e.size(dim) == t.size(dim)


METADATA_CASES = {
    "size_out_of_range": lambda lib: make(lib).size(2),
    "size_negative": lambda lib: make(lib).size(-3),
    "device": lambda lib: make(lib).device,
    "device_type": lambda lib: make(lib).device.type,
    "is_cuda": lambda lib: make(lib).is_cuda,
    "T": lambda lib: make(lib).T.shape,
    "mT": lambda lib: make(lib).mT.shape,
    "mT_1d": lambda lib: make(lib, shape=(3,)).mT,
    "stride_transposed": lambda lib: make(lib).t().stride(),
    "contiguous_transposed": lambda lib: make(lib).t().is_contiguous(),
    "size_slice": lambda lib: make(lib).shape[1:],
    "size_add": lambda lib: make(lib).shape + (4,),
    "size_radd": lambda lib: (1,) + make(lib).shape,
    "size_mul": lambda lib: make(lib).shape * 2,
    "size_numel": lambda lib: make(lib).shape.numel(),
    "size_equals_tuple": lambda lib: make(lib).shape == (2, 3),
    "size_constructor": lambda lib: lib.Size([1, 2]),
    "is_tensor": lambda lib: (lib.is_tensor(make(lib)), lib.is_tensor([1])),
    "numel_function": lambda lib: lib.numel(make(lib)),
}


@pytest.mark.parametrize("name", list(METADATA_CASES))
def test_metadata_cases(name):
    assert_same(METADATA_CASES[name])


# --- conversions to Python and NumPy -------------------------------------------------

CONVERSION_CASES = {
    "item": lambda lib: make(lib, shape=(1,)).item(),
    "item_int": lambda lib: make(lib, "int32", (1, 1)).item(),
    "item_bool": lambda lib: lib.tensor([True]).item(),
    "item_float16": lambda lib: lib.tensor(1.1, dtype=lib.float16).item(),
    "item_many": lambda lib: make(lib).item(),
    "item_empty": lambda lib: lib.zeros(0).item(),
    "tolist_0d": lambda lib: lib.tensor(2).tolist(),
    "tolist_float16": lambda lib: lib.tensor([1.1], dtype=lib.float16).tolist(),
    "float": lambda lib: float(lib.tensor([2.5])),
    "float_many": lambda lib: float(make(lib)),
    "int_truncates": lambda lib: (int(lib.tensor(2.7)), int(lib.tensor(-2.7))),
    "int_many": lambda lib: int(make(lib)),
    "complex": lambda lib: complex(lib.tensor(2.5)),
    "index": lambda lib: [10, 20, 30][lib.tensor(1)],
    "index_one_element": lambda lib: [10, 20][lib.tensor([1])],
    "index_bool": lambda lib: [10, 20][lib.tensor(True)],
    "index_float": lambda lib: [10, 20][lib.tensor(1.0)],
    "index_many": lambda lib: [10, 20][lib.tensor([1, 0])],
    "operator_index": lambda lib: operator.index(lib.tensor(3)),
    "range_of_tensor": lambda lib: list(range(lib.tensor(3))),
    "bool_one": lambda lib: (bool(lib.tensor([0.0])), bool(lib.tensor(2))),
    "bool_many": lambda lib: bool(make(lib)),
    "bool_empty": lambda lib: bool(lib.zeros(0)),
    "format_0d": lambda lib: f"{lib.tensor(2.5):.2f}",
    "format_many": lambda lib: f"{make(lib):.2f}",
    "numpy_requires_grad": lambda lib: make(lib, requires_grad=True).numpy(),
    "numpy_force": lambda lib: make(lib, requires_grad=True).numpy(force=True).tolist(),
    "numpy_dtype": lambda lib: make(lib, "int16").numpy().dtype,
}


@pytest.mark.parametrize("name", list(CONVERSION_CASES))
def test_conversion_cases(name):
    assert_same(CONVERSION_CASES[name])


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_numpy_shares_memory(dtype):
    t = ember.zeros(2, 3, dtype=getattr(ember, dtype))
    a = t.numpy()
    a[0, 0] = 1
    assert t[0, 0].item() == 1
    t[1, 2] = 1
    assert a[1, 2] == 1


def test_numpy_of_a_view_shares_memory_with_the_base():
    base = ember.zeros(3, 4)
    view = base.t()
    view.numpy()[0, 1] = 7
    assert base[1, 0].item() == 7


# --- to and the dtype shortcuts --------------------------------------------------------

TO_CASES = {
    "dtype": lambda lib: make(lib).to(lib.float64),
    "device_string": lambda lib: make(lib).to("cpu"),
    "device_object": lambda lib: make(lib).to(lib.device("cpu")),
    "device_and_dtype": lambda lib: make(lib).to("cpu", lib.int32),
    "keywords": lambda lib: make(lib).to(device="cpu", dtype=lib.float16),
    "other_tensor": lambda lib: make(lib).to(lib.ones(1, dtype=lib.int8)),
    "python_int": lambda lib: make(lib).to(int),
    "python_bool": lambda lib: make(lib).to(bool),
    "float_to_int_truncates": lambda lib: lib.tensor([-1.7, 2.7]).to(lib.int64),
    "to_bool": lambda lib: lib.tensor([-1.5, 0.0, 2.0]).to(lib.bool),
    "to_uint8_from_negative_int": lambda lib: lib.tensor([-1, 2]).to(lib.uint8),
    "bad_device": lambda lib: make(lib).to("foo"),
    "bad_keyword": lambda lib: make(lib).to(dtpye=lib.float64),
    "float": lambda lib: make(lib, "int32").float(),
    "double": lambda lib: make(lib).double(),
    "half": lambda lib: make(lib).half(),
    "long": lambda lib: make(lib).long(),
    "int": lambda lib: make(lib).int(),
    "short": lambda lib: make(lib).short(),
    "char": lambda lib: make(lib).char(),
    "byte": lambda lib: make(lib).byte(),
    "bool": lambda lib: make(lib).bool(),
    "type_dtype": lambda lib: make(lib).type(lib.float64),
    "type_name": lambda lib: make(lib).type(f"{lib.__name__}.DoubleTensor"),
    "type_bad_name": lambda lib: make(lib).type("nonsense"),
    "type_as": lambda lib: make(lib).type_as(lib.ones(1, dtype=lib.int16)),
    "grad_fn_of_cast": lambda lib: make(lib, requires_grad=True).to(lib.float64),
}


@pytest.mark.parametrize("name", list(TO_CASES))
def test_to_cases(name):
    assert_same(TO_CASES[name])


@pytest.mark.parametrize("call", [
    lambda t: t.to(ember.float32), lambda t: t.to("cpu"), lambda t: t.to("cpu", ember.float32),
    lambda t: t.to(t), lambda t: t.float(), lambda t: t.cpu(), lambda t: t.type(ember.float32),
    lambda t: t.to(dtype=ember.float32, device="cpu"),
])
def test_to_returns_self_when_nothing_changes(call):
    t = ember.ones(2)
    assert call(t) is t


@pytest.mark.parametrize("call", [lambda t: t.to(ember.float32, copy=True), lambda t: t.to("cpu", copy=True),
                                  lambda t: t.to(ember.float64)])
def test_to_copies_when_asked_or_converting(call):
    t = ember.ones(2)
    out = call(t)
    assert out is not t and out.data_ptr() != t.data_ptr()


def test_to_is_differentiable():
    x = ember.tensor([1.5, -2.0], requires_grad=True)
    x.to(ember.float64).pow(2).sum().backward()
    assert x.grad.dtype is ember.float32 and x.grad.tolist() == [3.0, -4.0]


# --- clone, detach, data and the autograd flags -----------------------------------------


def test_clone_copies_and_stays_in_the_graph():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.data_ptr() != x.data_ptr() and c.requires_grad and c.grad_fn.name() == "CloneBackward0"
    c.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_detach_shares_memory_and_version_counter():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.data_ptr() == y.data_ptr() and not d.requires_grad and d.is_leaf and d.grad_fn is None
    before = y._version
    d.add_(1)
    assert y._version == before + 1  # so autograd notices the write through d
    assert y.tolist() == [3.0, 5.0]


def test_data_shares_memory_but_not_the_version_counter():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.data
    assert d.data_ptr() == y.data_ptr() and not d.requires_grad and d.is_leaf
    before = y._version
    d.add_(1)
    assert y._version == before
    assert y.tolist() == [3.0, 5.0]


AUTOGRAD_CASES = {
    "requires_grad_on_int": lambda lib: make(lib, "int64").requires_grad_(),
    "requires_grad_setter_on_int": lambda lib: setattr(make(lib, "int32"), "requires_grad", True),
    "requires_grad_false_on_int": lambda lib: make(lib, "int64").requires_grad_(False).requires_grad,
    "requires_grad_false_on_non_leaf": lambda lib: (make(lib, requires_grad=True) * 2).requires_grad_(False),
    "requires_grad_true_on_non_leaf": lambda lib: (make(lib, requires_grad=True) * 2).requires_grad_().requires_grad,
    "requires_grad_returns_self": lambda lib: (lambda t: t.requires_grad_() is t)(make(lib)),
    "requires_grad_setter": lambda lib: (lambda t: (setattr(t, "requires_grad", True), t.requires_grad))(make(lib)),
    "requires_grad_float16": lambda lib: make(lib, "float16").requires_grad_().requires_grad,
    "is_leaf": lambda lib: (make(lib).is_leaf, make(lib, requires_grad=True).is_leaf,
                            (make(lib, requires_grad=True) * 2).is_leaf, (make(lib) * 2).is_leaf),
    "grad_fn_of_leaf": lambda lib: make(lib, requires_grad=True).grad_fn,
    "grad_of_new_leaf": lambda lib: make(lib, requires_grad=True).grad,
    "detach_of_leaf": lambda lib: make(lib, requires_grad=True).detach(),
    "grad_fn_after_no_grad": lambda lib: _under_no_grad(lib, lambda: make(lib, requires_grad=True) * 2).grad_fn,
}


def _under_no_grad(lib, fn):
    with lib.no_grad():
        return fn()


@pytest.mark.parametrize("name", list(AUTOGRAD_CASES))
def test_autograd_flag_cases(name):
    assert_same(AUTOGRAD_CASES[name])


# --- Python protocol ------------------------------------------------------------------

PROTOCOL_CASES = {
    "len": lambda lib: len(make(lib)),
    "len_0d": lambda lib: len(lib.tensor(1.0)),
    "iterate_rows": lambda lib: [row.tolist() for row in make(lib)],
    "iterate_1d": lambda lib: [x.item() for x in make(lib, shape=(3,))],
    "iterate_0d": lambda lib: list(lib.tensor(1.0)),
    "iterate_empty": lambda lib: list(lib.zeros(0, 2)),
    "hash_is_identity": lambda lib: (lambda t: (hash(t) == hash(t), len({t, make(lib)})))(make(lib)),
    "contains": lambda lib: (2 in make(lib), 17 in make(lib)),
    "unary_plus": lambda lib: +make(lib),
    "abs": lambda lib: abs(make(lib) - 3),
}


@pytest.mark.parametrize("name", list(PROTOCOL_CASES))
def test_protocol_cases(name):
    assert_same(PROTOCOL_CASES[name])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_pickle_round_trip(dtype, shape):
    requires_grad = dtype.startswith("float")
    t = make(ember, dtype, shape, requires_grad=requires_grad)
    back = pickle.loads(pickle.dumps(t))
    assert back.dtype is t.dtype and back.shape == t.shape and back.tolist() == t.tolist()
    assert back.requires_grad == requires_grad and back.is_leaf


def test_pickle_of_a_noncontiguous_view():
    t = ember.arange(12).reshape(3, 4).t()
    assert pickle.loads(pickle.dumps(t)).tolist() == t.tolist()


def test_deepcopy_copies_data_grad_and_flag():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    x.grad = ember.tensor([0.5, 0.5])
    c = copy.deepcopy(x)
    assert c.tolist() == x.tolist() and c.requires_grad and c.is_leaf
    assert c.data_ptr() != x.data_ptr()
    assert c.grad.tolist() == [0.5, 0.5] and c.grad.data_ptr() != x.grad.data_ptr()


def test_deepcopy_keeps_shared_references_shared():
    x = ember.ones(2)
    a, b = copy.deepcopy([x, x])
    assert a is b


def test_deepcopy_of_non_leaf_raises_like_torch():
    with pytest.raises(RuntimeError):
        copy.deepcopy(torch.ones(2, requires_grad=True) * 2)
    with pytest.raises(RuntimeError, match="leaves"):
        copy.deepcopy(ember.ones(2, requires_grad=True) * 2)


@pytest.mark.parametrize("method", ["float", "double", "half", "long", "int", "short", "char", "byte", "bool"])
@pytest.mark.parametrize("memory_format", ["channels_last", "contiguous_format", "preserve_format"])
def test_dtype_methods_take_a_memory_format(method, memory_format):
    x = make_tensor((2, 3, 4, 5), "float64")
    results = []
    for lib in (ember, torch):
        out = getattr(lib.tensor(x), method)(memory_format=getattr(lib, memory_format))
        results.append((str(out.dtype).split(".")[-1], out.stride(), out.numpy().tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("sizes", [(2, 2), (3, 3), (6,), (0,), (1, 2, 3)])
def test_resize_keeps_the_storage_prefix_as_torch(sizes):
    for make in (lambda lib: lib.arange(6.0), lambda lib: lib.arange(6.0).view(2, 3).t()):
        t, e = make(torch), make(ember)
        t.resize_(*sizes)
        e.resize_(*sizes)
        assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
        keep = min(6, int(np.prod(sizes)))
        assert e.flatten()[:keep].tolist() == t.flatten()[:keep].tolist()
    assert tuple(ember.ones(3).resize_as_(ember.ones(1, 3)).shape) == (1, 3)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        ember.ones(2, requires_grad=True).resize_(3)
