"""Tests for ember_quantization/qtensor.py and the quantize/dequantize kernels against torch."""

import ember_quantization as eq
import numpy as np
import pytest
import torch
from quantization_parity import DTYPES

import ember

pytestmark = pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor:UserWarning")


def values(shape=(5, 7), seed=0):
    """Random floats with exact half-way cases for scale 0.5 (x / scale = k + 0.5)."""
    x = np.random.default_rng(seed).standard_normal(shape).astype("float32") * 4
    x.ravel()[:6] = [0.25, 0.75, -0.25, -0.75, 1.25, 63.9]
    return x


@pytest.mark.parametrize("torch_dtype", list(DTYPES))
@pytest.mark.parametrize("scale, zero_point", [(0.5, 10), (0.5, 11), (0.5, 0), (0.037, -3), (1e-3, 100), (2.0, 255)])
def test_quantize_per_tensor_rounds_half_to_even_and_clamps_like_torch(torch_dtype, scale, zero_point):
    x = values()
    if not DTYPES[torch_dtype].qmin <= zero_point <= DTYPES[torch_dtype].qmax:  # both refuse it
        with pytest.raises(RuntimeError, match=f"zero_point {zero_point} is (below lower|above upper) bound"):
            torch.quantize_per_tensor(torch.tensor(x), scale, zero_point, torch_dtype)
        with pytest.raises(RuntimeError, match=f"zero_point {zero_point} is (below lower|above upper) bound"):
            eq.quantize_per_tensor(ember.tensor(x), scale, zero_point, DTYPES[torch_dtype])
        return
    ours = eq.quantize_per_tensor(ember.tensor(x), scale, zero_point, DTYPES[torch_dtype])
    theirs = torch.quantize_per_tensor(torch.tensor(x), scale, zero_point, torch_dtype)
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    np.testing.assert_array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())
    assert ours.q_scale() == theirs.q_scale() and ours.q_zero_point() == theirs.q_zero_point()
    assert str(ours.int_repr().dtype).split(".")[-1] == str(theirs.int_repr().dtype).split(".")[-1]


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("torch_dtype", [torch.quint8, torch.qint8])
def test_quantize_per_channel_matches_torch(axis, torch_dtype):
    x = values((4, 6))
    n = x.shape[axis]
    scales = np.linspace(0.02, 0.3, n)
    zero_points = np.arange(n) * (3 if torch_dtype is torch.quint8 else -2) + (5 if torch_dtype is torch.quint8 else 0)
    ours = eq.quantize_per_channel(ember.tensor(x), ember.tensor(scales), ember.tensor(zero_points), axis,
                                   DTYPES[torch_dtype])
    theirs = torch.quantize_per_channel(torch.tensor(x), torch.tensor(scales), torch.tensor(zero_points), axis,
                                        torch_dtype)
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    np.testing.assert_array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())
    np.testing.assert_array_equal(ours.q_per_channel_scales().numpy(), theirs.q_per_channel_scales().numpy())
    np.testing.assert_array_equal(ours.q_per_channel_zero_points().numpy(),
                                  theirs.q_per_channel_zero_points().numpy())
    assert ours.q_per_channel_axis() == theirs.q_per_channel_axis()


def near_half_way(scale, shape, seed=1):
    """Floats that are k + 1/2 steps of ``scale`` once rounded to float32: x / scale misses the
    half by less than float32 keeps, so which side rint takes depends on every rounding."""
    x = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    return (np.round(x / np.float32(scale) * 2) / 2 * np.float32(scale)).astype("float32")


@pytest.mark.parametrize("scale, zero_point", [(0.02, 100), (0.0123, 128), (0.05, 64), (0.1, 3), (0.3, 7)])
@pytest.mark.parametrize("size", [7, 64, 1000])  # torch's vector loop takes 8 at a time, the rest one by one
def test_quantizing_values_a_hair_from_half_way_matches_torch(scale, zero_point, size):
    x = near_half_way(scale, (size,))
    ours = eq.quantize_per_tensor(ember.tensor(x), scale, zero_point, eq.quint8)
    theirs = torch.quantize_per_tensor(torch.tensor(x), scale, zero_point, torch.quint8)
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    scales = np.array([scale, scale * 2, scale / 2, scale * 4])
    zero_points = np.array([zero_point, 0, 5, 255 - zero_point])
    x = near_half_way(scale, (4, size))
    ours = eq.quantize_per_channel(ember.tensor(x), ember.tensor(scales), ember.tensor(zero_points), 0, eq.quint8)
    theirs = torch.quantize_per_channel(torch.tensor(x), torch.tensor(scales), torch.tensor(zero_points), 0,
                                        torch.quint8)
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())


def test_printing_follows_torch():
    x = np.array([1.0, 2.0], dtype="float32")
    ours = repr(eq.quantize_per_tensor(ember.tensor(x), 0.1, 10, eq.quint8))
    theirs = repr(torch.quantize_per_tensor(torch.tensor(x), 0.1, 10, torch.quint8))
    assert ours == theirs.replace("torch.", "ember.")


def test_per_tensor_accessors_refuse_per_channel_tensors_and_back():
    q = eq.quantize_per_channel(ember.ones(2, 2), ember.tensor([0.1, 0.2]), ember.tensor([0, 0]), 0, eq.qint8)
    with pytest.raises(RuntimeError, match="PerTensorAffine"):
        q.q_scale()
    with pytest.raises(RuntimeError, match="PerChannelAffine"):
        eq.quantize_per_tensor(ember.ones(2), 0.1, 0, eq.qint8).q_per_channel_axis()


def test_bad_inputs_are_named():
    with pytest.raises(RuntimeError, match="expected a floating point"):
        eq.quantize_per_tensor(ember.tensor([1, 2]), 0.1, 0, eq.quint8)
    with pytest.raises(RuntimeError, match="expected a quantized dtype"):
        eq.quantize_per_tensor(ember.ones(2), 0.1, 0, ember.float32)
    with pytest.raises(RuntimeError, match="size of axis 0"):
        eq.quantize_per_channel(ember.ones(3, 2), ember.tensor([0.1]), ember.tensor([0]), 0, eq.qint8)


def test_reshape_and_flatten_keep_the_quantizer():
    q = eq.quantize_per_tensor(ember.tensor(values((2, 3, 4))), 0.05, 3, eq.quint8)
    flat = q.flatten(1)
    assert tuple(flat.shape) == (2, 12) and flat.q_scale() == 0.05
    np.testing.assert_array_equal(flat.dequantize().numpy(), q.dequantize().numpy().reshape(2, 12))


def test_the_package_imports_nothing_for_names_it_does_not_export():
    # pluggy probes every plugin module with hasattr(module, hook_name) while ember builds
    # its catalogues; a lazy import there used to break every plugin's registration. In a
    # fresh process: re-importing the API modules here would make a second QTensor class.
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import importlib, sys
        import ember_quantization
        api = ember_quantization._API
        loaded = lambda: sorted(n for n in sys.modules
                                if n.startswith("ember_quantization.") and n.split(".")[1] in api)
        assert not hasattr(ember_quantization, "ember_register_comm_backends")
        assert loaded() == [], loaded()
        for module, names in api.items():  # the table names what each module exports
            exported = getattr(importlib.import_module(f"ember_quantization.{module}"), "__all__", names)
            assert set(names) <= set(exported), module
            assert all(getattr(ember_quantization, name) is not None for name in names)
        print("ok")
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr
