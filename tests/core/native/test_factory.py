"""Tensor factories (ember/native/factory.py) against torch: for the same arguments the
same shape and dtype, the same values where they are deterministic, the same exception
type for bad arguments. Random factories are checked for shape and dtype here and for
their statistics in tests/core/test_random.py (ember's stream is not torch's).
"""

import collections
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity

# Each case builds a tensor (or raises) with lib = ember and lib = torch.
DETERMINISTIC = {
    # tensor: dtype inference from Python data
    "tensor_ints": lambda lib: lib.tensor([1, 2]),
    "tensor_mixed_int_float": lambda lib: lib.tensor([1, 2.5]),
    "tensor_bools": lambda lib: lib.tensor([True, False]),
    "tensor_bool_and_int": lambda lib: lib.tensor([True, 2]),
    "tensor_empty_list": lambda lib: lib.tensor([]),
    "tensor_nested_empty": lambda lib: lib.tensor([[], []]),
    "tensor_0d_float": lambda lib: lib.tensor(2.5),
    "tensor_0d_bool": lambda lib: lib.tensor(False),
    "tensor_tuple": lambda lib: lib.tensor((1, 2)),
    "tensor_nested": lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "tensor_numpy_int32": lambda lib: lib.tensor(np.arange(3, dtype=np.int32)),
    "tensor_numpy_noncontiguous": lambda lib: lib.tensor(np.arange(12.0).reshape(3, 4)[:, ::2]),
    "tensor_numpy_scalar_float64": lambda lib: lib.tensor(np.float64(2.5)),
    "tensor_numpy_scalar_int16": lambda lib: lib.tensor(np.int16(2)),
    "tensor_list_with_numpy_scalar": lambda lib: lib.tensor([np.float32(1.5), 2]),
    "tensor_of_0d_tensors": lambda lib: lib.tensor([lib.tensor(1), lib.tensor(2)]),
    "tensor_of_mixed_tensors": lambda lib: lib.tensor([lib.tensor(1.5), lib.tensor(2)]),
    "tensor_dtype": lambda lib: lib.tensor([1, 2], dtype=lib.float64),
    "tensor_float_to_int_truncates": lambda lib: lib.tensor([1.7, -1.7], dtype=lib.int64),
    "tensor_negative_wraps_uint8": lambda lib: lib.tensor([-1, 255], dtype=lib.uint8),
    "tensor_float16_overflow_is_inf": lambda lib: lib.tensor([1e10], dtype=lib.float16),
    "tensor_int64_max": lambda lib: lib.tensor([2 ** 63 - 1]),
    "tensor_requires_grad": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True),
    "as_tensor_list": lambda lib: lib.as_tensor([1, 2]),
    "as_tensor_numpy": lambda lib: lib.as_tensor(np.ones(2, np.float16)),
    "as_tensor_dtype": lambda lib: lib.as_tensor([1, 2], dtype=lib.float32),
    "from_numpy_0d": lambda lib: lib.from_numpy(np.array(2.5)),
    "scalar_tensor_int": lambda lib: lib.scalar_tensor(3),
    "scalar_tensor_bool": lambda lib: lib.scalar_tensor(True),
    # zeros, ones, full, eye
    "zeros": lambda lib: lib.zeros(2, 3),
    "zeros_tuple": lambda lib: lib.zeros((2, 3)),
    "zeros_list": lambda lib: lib.zeros([2, 3]),
    "zeros_size": lambda lib: lib.zeros(lib.Size([2, 3])),
    "zeros_0d": lambda lib: lib.zeros(()),
    "zeros_empty": lambda lib: lib.zeros(2, 0, 3),
    "zeros_numpy_int": lambda lib: lib.zeros(np.int64(2)),
    "zeros_0d_tensor_size": lambda lib: lib.zeros(2, lib.tensor(3)),
    "zeros_int32": lambda lib: lib.zeros(2, dtype=lib.int32),
    "zeros_requires_grad": lambda lib: lib.zeros(2, requires_grad=True),
    "ones_bool": lambda lib: lib.ones(3, dtype=lib.bool),
    "ones_float16": lambda lib: lib.ones(2, 2, dtype=lib.float16),
    "full_int": lambda lib: lib.full((2,), 3),
    "full_float": lambda lib: lib.full((2,), 3.5),
    "full_bool": lambda lib: lib.full((2,), True),
    "full_dtype": lambda lib: lib.full((2, 2), 7, dtype=lib.float64),
    "full_float_into_int": lambda lib: lib.full((2,), 2.7, dtype=lib.int64),
    "full_list_size": lambda lib: lib.full([2, 1], 1.0),
    "full_0d": lambda lib: lib.full((), 2),
    "full_tensor_value": lambda lib: lib.full((2,), lib.tensor(3.5)),
    "full_int_tensor_value": lambda lib: lib.full((2,), lib.tensor(3)),
    "eye": lambda lib: lib.eye(3),
    "eye_rectangular": lambda lib: lib.eye(2, 4),
    "eye_int64": lambda lib: lib.eye(2, dtype=lib.int64),
    "eye_bool": lambda lib: lib.eye(2, dtype=lib.bool),
    "eye_empty": lambda lib: lib.eye(0),
    # arange: int/float inference, negative steps, float step counts
    "arange_int": lambda lib: lib.arange(5),
    "arange_float": lambda lib: lib.arange(5.0),
    "arange_half_end": lambda lib: lib.arange(0.5),
    "arange_start_end": lambda lib: lib.arange(1, 4),
    "arange_int_step": lambda lib: lib.arange(-3, 10, 3),
    "arange_float_step": lambda lib: lib.arange(0, 1, 0.1),
    "arange_float_step_count_3": lambda lib: lib.arange(0, 0.3, 0.1),
    "arange_float_step_count_4": lambda lib: lib.arange(1.0, 1.3, 0.1),
    "arange_negative_step": lambda lib: lib.arange(5, 0, -1),
    "arange_negative_float_step": lambda lib: lib.arange(1, -1, -0.3),
    "arange_int_with_float_step": lambda lib: lib.arange(0, 5, 2.0),
    "arange_float64": lambda lib: lib.arange(5, dtype=lib.float64),
    "arange_float_args_int_dtype": lambda lib: lib.arange(0.5, 5, dtype=lib.int32),
    "arange_float16": lambda lib: lib.arange(4, dtype=lib.float16),
    "arange_empty": lambda lib: lib.arange(0),
    "arange_start_equals_end": lambda lib: lib.arange(2, 2),
    "arange_tensor_end": lambda lib: lib.arange(lib.tensor(3)),
    "arange_numpy_int": lambda lib: lib.arange(np.int64(3)),
    "arange_past_2_53": lambda lib: lib.arange(2 ** 53, 2 ** 53 + 3),
    # linspace, logspace
    "linspace": lambda lib: lib.linspace(0, 1, 5),
    "linspace_one_step": lambda lib: lib.linspace(2, 3, 1),
    "linspace_no_steps": lambda lib: lib.linspace(0, 1, 0),
    "linspace_int_args": lambda lib: lib.linspace(0, 3, 4),
    "linspace_float64": lambda lib: lib.linspace(-1, 1, 7, dtype=lib.float64),
    "linspace_float16": lambda lib: lib.linspace(-1, 3, 9, dtype=lib.float16),
    "linspace_long": lambda lib: lib.linspace(0, 100, 1000),
    "linspace_int64": lambda lib: lib.linspace(0, 10, 4, dtype=lib.int64),
    "linspace_int64_descending": lambda lib: lib.linspace(10, 0, 4, dtype=lib.int64),
    "linspace_int64_fractional_ends": lambda lib: lib.linspace(0.5, 10.7, 4, dtype=lib.int64),
    "linspace_int64_negative_start": lambda lib: lib.linspace(-0.5, 3, 3, dtype=lib.int64),
    "logspace": lambda lib: lib.logspace(0, 2, 3),
    "logspace_base_2": lambda lib: lib.logspace(0, 3, 4, base=2),
    # *_like and new_*
    "zeros_like_int32": lambda lib: lib.zeros_like(lib.ones(2, 3, dtype=lib.int32)),
    "ones_like_dtype": lambda lib: lib.ones_like(lib.ones(2), dtype=lib.float64),
    "full_like_int_truncates": lambda lib: lib.full_like(lib.ones(2, dtype=lib.int64), 2.7),
    "full_like_int_value_float_tensor": lambda lib: lib.full_like(lib.ones(2), 2),
    "zeros_like_drops_requires_grad": lambda lib: lib.zeros_like(lib.ones(2, requires_grad=True)),
    "zeros_like_requires_grad": lambda lib: lib.zeros_like(lib.ones(2), requires_grad=True),
    "new_zeros": lambda lib: lib.ones(2, dtype=lib.int32).new_zeros(3),
    "new_zeros_tuple": lambda lib: lib.ones(2, dtype=lib.int32).new_zeros((3, 2)),
    "new_zeros_0d": lambda lib: lib.ones(2).new_zeros(()),
    "new_ones_dtype": lambda lib: lib.ones(2).new_ones(2, dtype=lib.float64),
    "new_full": lambda lib: lib.ones(2, dtype=lib.int64).new_full((2,), 2.5),
    "new_tensor_keeps_dtype": lambda lib: lib.ones(2, dtype=lib.float64).new_tensor([1, 2]),
    "new_tensor_int8": lambda lib: lib.ones(2, dtype=lib.int8).new_tensor([1.5]),
    "new_tensor_requires_grad": lambda lib: lib.ones(2).new_tensor([1.0], requires_grad=True),
    "new_zeros_ignores_requires_grad_of_self": lambda lib: lib.ones(2, requires_grad=True).new_zeros(2),
}


def _compare(make):
    expected = make(torch)
    actual = make(ember)
    assert tuple(actual.shape) == tuple(expected.shape)
    assert repr(actual.dtype).replace("ember", "torch") == repr(expected.dtype)
    assert actual.requires_grad == expected.requires_grad
    np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", list(DETERMINISTIC))
def test_deterministic_factory_matches_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tensor(tensor) warns in both libraries
        _compare(DETERMINISTIC[name])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool", "float16"])
@pytest.mark.parametrize("factory", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (3,), (2, 3)])
def test_filled_factories_shapes_and_dtypes(factory, shape, dtype):
    e = getattr(ember, factory)(shape, dtype=getattr(ember, dtype))
    t = getattr(torch, factory)(shape, dtype=getattr(torch, dtype))
    assert tuple(e.shape) == tuple(t.shape) and repr(e.dtype) == repr(t.dtype).replace("torch", "ember")
    if factory != "empty":
        np.testing.assert_array_equal(e.numpy(), t.numpy())


RANDOM = {
    "rand": lambda lib: lib.rand(2, 3),
    "rand_tuple": lambda lib: lib.rand((2, 3)),
    "rand_0d": lambda lib: lib.rand(()),
    "rand_float64": lambda lib: lib.rand(2, dtype=lib.float64),
    "rand_float16": lambda lib: lib.rand(3, dtype=lib.float16),
    "rand_requires_grad": lambda lib: lib.rand(3, requires_grad=True),
    "randn": lambda lib: lib.randn(4),
    "randn_empty": lambda lib: lib.randn(2, 0),
    "randn_float64": lambda lib: lib.randn(2, 2, dtype=lib.float64),
    "randint_high": lambda lib: lib.randint(5, (3,)),
    "randint_low_high": lambda lib: lib.randint(2, 5, (3, 2)),
    "randint_float_dtype": lambda lib: lib.randint(5, (3,), dtype=lib.float32),
    "randint_bool": lambda lib: lib.randint(0, 2, (3,), dtype=lib.bool),
    "randint_uint8": lambda lib: lib.randint(0, 256, (3,), dtype=lib.uint8),
    "randperm": lambda lib: lib.randperm(5),
    "randperm_empty": lambda lib: lib.randperm(0),
    "randperm_float": lambda lib: lib.randperm(4, dtype=lib.float32),
    "randperm_requires_grad": lambda lib: lib.randperm(4, dtype=lib.float32, requires_grad=True),
    "rand_like": lambda lib: lib.rand_like(lib.ones(2, 3, dtype=lib.float64)),
    "randn_like": lambda lib: lib.randn_like(lib.ones(2, 3)),
    "randint_like": lambda lib: lib.randint_like(lib.ones(2, 3), 5),
    "randint_like_low_high": lambda lib: lib.randint_like(lib.ones(2, 3, dtype=lib.int32), 3, 5),
    "empty_like": lambda lib: lib.empty_like(lib.ones(2, 2, dtype=lib.int16)),
    "new_empty": lambda lib: lib.ones(2, dtype=lib.int8).new_empty(3),
}


@pytest.mark.parametrize("name", list(RANDOM))
def test_random_factory_shape_and_dtype_match_torch(name):
    expected, actual = RANDOM[name](torch), RANDOM[name](ember)
    assert tuple(actual.shape) == tuple(expected.shape)
    assert repr(actual.dtype).replace("ember", "torch") == repr(expected.dtype)
    assert actual.requires_grad == expected.requires_grad


ERRORS = {
    "tensor_none": lambda lib: lib.tensor(None),
    "tensor_str": lambda lib: lib.tensor("a"),
    "tensor_ragged": lambda lib: lib.tensor([[1, 2], [3]]),
    "tensor_int_requires_grad": lambda lib: lib.tensor([1, 2], requires_grad=True),
    "tensor_uint8_overflow": lambda lib: lib.tensor([300], dtype=lib.uint8),
    "tensor_uint8_negative_overflow": lambda lib: lib.tensor([-300], dtype=lib.uint8),
    "tensor_int8_overflow": lambda lib: lib.tensor([-129], dtype=lib.int8),
    "tensor_float_int32_overflow": lambda lib: lib.tensor([1e10], dtype=lib.int32),
    "tensor_nan_to_int": lambda lib: lib.tensor([float("nan")], dtype=lib.int64),
    "tensor_past_int64": lambda lib: lib.tensor([2 ** 63]),
    "tensor_below_int64": lambda lib: lib.tensor([-(2 ** 63) - 1]),
    "zeros_no_size": lambda lib: lib.zeros(),
    "zeros_negative": lambda lib: lib.zeros(-1),
    "zeros_negative_second": lambda lib: lib.zeros(2, -3),
    "zeros_float_size": lambda lib: lib.zeros(2.5),
    "zeros_float_in_tuple": lambda lib: lib.zeros((2, 2.5)),
    "zeros_none_in_list": lambda lib: lib.zeros([2, None]),
    "zeros_int_requires_grad": lambda lib: lib.zeros(2, dtype=lib.int64, requires_grad=True),
    "ones_negative": lambda lib: lib.ones(-2),
    "empty_negative": lambda lib: lib.empty(-1),
    "full_int_size": lambda lib: lib.full(3, 1.0),
    "full_negative": lambda lib: lib.full((-1,), 1.0),
    "eye_negative": lambda lib: lib.eye(-1),
    "eye_negative_m": lambda lib: lib.eye(2, -1),
    "eye_float": lambda lib: lib.eye(2.5),
    "arange_zero_step": lambda lib: lib.arange(0, 5, 0),
    "arange_wrong_sign": lambda lib: lib.arange(0, 5, -1),
    "arange_inf": lambda lib: lib.arange(0, float("inf")),
    "arange_nan": lambda lib: lib.arange(0, float("nan")),
    "arange_bool": lambda lib: lib.arange(2, dtype=lib.bool),
    "linspace_negative_steps": lambda lib: lib.linspace(0, 1, -1),
    "rand_negative": lambda lib: lib.rand(-1),
    "rand_int_dtype": lambda lib: lib.rand(2, dtype=lib.int64),
    "randn_int_dtype": lambda lib: lib.randn(2, dtype=lib.int32),
    "rand_like_int": lambda lib: lib.rand_like(lib.ones(2, dtype=lib.int64)),
    "randint_low_above_high": lambda lib: lib.randint(5, 2, (3,)),
    "randint_empty_range": lambda lib: lib.randint(5, 5, (3,)),
    "randint_int_size": lambda lib: lib.randint(5, 3),
    "randint_negative_size": lambda lib: lib.randint(5, (-1,)),
    "randint_float_high": lambda lib: lib.randint(0, 3.5, (2,)),
    "randint_uint8_high": lambda lib: lib.randint(0, 300, (2,), dtype=lib.uint8),
    "randint_uint8_low": lambda lib: lib.randint(-1, 2, (2,), dtype=lib.uint8),
    "randint_int8_low": lambda lib: lib.randint(-200, 0, (2,), dtype=lib.int8),
    "randint_bool_high": lambda lib: lib.randint(0, 3, (2,), dtype=lib.bool),
    "randint_int_requires_grad": lambda lib: lib.randint(0, 3, (2,), requires_grad=True),
    "randperm_negative": lambda lib: lib.randperm(-1),
    "new_zeros_negative": lambda lib: lib.ones(2).new_zeros(-1),
    "from_numpy_list": lambda lib: lib.from_numpy([1]),
    "from_numpy_negative_strides": lambda lib: lib.from_numpy(np.ones(3)[::-1]),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_arguments_raise_like_torch(name):
    make = ERRORS[name]
    with pytest.raises(Exception) as expected:
        make(torch)
    with pytest.raises(expected.type) as actual:
        make(ember)
    # Messages name the offending value in the same words where PyTorch's are plain.
    if expected.type is RuntimeError and "negative dimension" in str(expected.value):
        assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_rand_never_reaches_one(dtype):
    g = ember.Generator().manual_seed(0)
    x = ember.rand(200_000, generator=g, dtype=getattr(ember, dtype))
    assert float(x.min()) >= 0.0 and float(x.max()) < 1.0


def test_from_numpy_shares_memory_both_ways():
    a = np.zeros((2, 3), dtype=np.float32)
    t = ember.from_numpy(a)
    t.add_(1)
    assert a.tolist() == [[1.0] * 3] * 2
    a[0, 0] = 5
    assert t[0, 0].item() == 5
    assert t.numpy() is not None and np.shares_memory(t.numpy(), a)


def test_from_numpy_keeps_strides_of_a_noncontiguous_array():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    assert ember.from_numpy(a).stride() == torch.from_numpy(a).stride()
    assert ember.from_numpy(a).tolist() == a.tolist()


def test_as_tensor_shares_only_when_nothing_changes():
    a = np.zeros(2)
    ember.as_tensor(a).add_(1)
    assert a.tolist() == [1.0, 1.0]
    ember.as_tensor(a, dtype=ember.float32).add_(1)  # a converted copy
    assert a.tolist() == [1.0, 1.0]
    t = ember.ones(2)
    assert ember.as_tensor(t) is t


def test_tensor_copies_its_data():
    a = np.zeros(2)
    ember.tensor(a).add_(1)
    assert a.tolist() == [0.0, 0.0]


def test_tensor_of_a_tensor_warns_and_detaches():
    source = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="clone"):
        copy = ember.tensor(source)
    assert not copy.requires_grad and copy.data_ptr() != source.data_ptr()


def test_negative_dimension_message_names_the_shape():
    with pytest.raises(RuntimeError, match=r"negative dimension -3: \[2, -3\]"):
        ember.zeros(2, -3)


def test_arange_float_step_counts_like_torch():
    for start, end, step in [(0, 0.3, 0.1), (1.0, 1.3, 0.1), (0, 1, 1 / 3), (-1, 1, 0.2), (10, 0, -0.7)]:
        assert ember.arange(start, end, step).numel() == torch.arange(start, end, step).numel()


@pytest.mark.parametrize("args", [(0.0, -8.000001, -4.0), (0.5, 3.7, 1.5), (-0.5, 3, 1), (0, 5.5, 2), (0, 1, 0.5)])
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16"])
def test_arange_of_an_integer_dtype_truncates_its_arguments(args, dtype):
    # NOTE [ arange of an integer dtype ]: int64 takes its length from the truncated values.
    assert_parity(lambda lib: lib.arange(*args, dtype=getattr(lib, dtype)))


@pytest.mark.parametrize("args", [(0, 1.2, 2), (0.5, 2.7, 3), (-1.5, 3.9, 4, 2.5), (2.9, 0.2, 3, 3)])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_logspace_of_an_integer_dtype_truncates_its_exponents(args, dtype):
    assert_parity(lambda lib: lib.logspace(*args, dtype=getattr(lib, dtype)))


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_as_a_keyword(name):
    for size in [(2, 3), [4], ()]:
        assert tuple(getattr(ember, name)(size=size).shape) == tuple(getattr(torch, name)(size=size).shape)
    for lib in (torch, ember):
        with pytest.raises(TypeError, match=f"^{name}\\(\\) .*size"):  # torch's wording differs by overload
            getattr(lib, name)(2, size=(3,))


def test_any_python_sequence_is_data():
    for data in [collections.deque([1, 2]), range(3), [collections.deque([1.5, 2]), (3, 4)],
                 collections.deque([[True, False]])]:
        e, t = ember.tensor(data), torch.tensor(data)
        assert e.tolist() == t.tolist() and str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]


def test_asarray_shares_memory_as_torch():
    for lib in (torch, ember):
        a = np.arange(3.0)
        shared = lib.asarray(a)
        shared[0] = 7.0
        copied = lib.asarray(a, copy=True)
        copied[1] = 9.0
        assert a.tolist() == [7.0, 1.0, 2.0] and shared.dtype == lib.float64
        converted = lib.asarray(a, dtype=lib.float32)
        assert converted.dtype == lib.float32 and not np.shares_memory(converted.numpy(), a)
        t = lib.ones(2)
        assert lib.asarray(t) is t and lib.asarray(t, copy=True) is not t
        assert lib.asarray([1, 2]).dtype == lib.int64 and lib.asarray(np.float32(2)).dtype == lib.float32
        assert lib.asarray([1.0], requires_grad=True).requires_grad
    with pytest.raises(ValueError):
        ember.asarray([1, 2], copy=False)


@pytest.mark.parametrize(("dtype", "count", "offset"), [("float32", -1, 0), ("int8", 3, 4), ("int16", -1, 2),
                                                        ("float64", 1, 8)])
def test_frombuffer_reads_and_writes_the_buffer_as_torch(dtype, count, offset):
    buffers = [bytearray(np.arange(4, dtype=np.float32).tobytes()) for _ in range(2)]
    e = ember.frombuffer(buffers[0], dtype=getattr(ember, dtype), count=count, offset=offset)
    t = torch.frombuffer(buffers[1], dtype=getattr(torch, dtype), count=count, offset=offset)
    assert e.tolist() == t.tolist()
    e[0], t[0] = 5, 5
    assert buffers[0] == buffers[1]


def test_frombuffer_refuses_what_torch_refuses():
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="must be a multiple of element size"):
            lib.frombuffer(bytearray(6), dtype=lib.float32)
        with pytest.raises(ValueError, match="must not be 0"):
            lib.frombuffer(bytearray(0), dtype=lib.float32)


@pytest.mark.parametrize("data", [[[1, 2], [3]], [[1], [2, 3]], [[[1, 2], [3, 4]], [[5, 6], [7]]], [[1, 2], []],
                                  [[1.0, 2.0], 3.0], ([1, 2], (3,)), [1, [2]], [1.0, [2.0]], [True, [False]],
                                  [[1], [[2]]], [1, (2,)], [1.5, [2]]], ids=str)
def test_ragged_data_gives_torchs_message(data):
    with pytest.raises(Exception) as expected:
        torch.tensor(data)
    with pytest.raises(expected.type) as actual:
        ember.tensor(data)
    assert str(actual.value) == str(expected.value)
