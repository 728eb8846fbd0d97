"""uint16, uint32, uint64 and the float8 types against torch: made, converted, viewed,
printed, saved and loaded as torch does; promotion refused as torch refuses it
(NOTE [ Barebones dtypes ] in ember/dtypes.py)."""

import io
import itertools

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

import ember

UNSIGNED = ["uint16", "uint32", "uint64"]
FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
BAREBONES = UNSIGNED + FLOAT8
OTHERS = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]


def _pair(name):
    return getattr(ember, name), getattr(torch, name)


def _bits(t):
    """A torch tensor's bytes, so NaN and -0 compare too."""
    return t.contiguous().view(torch.uint8).reshape(-1).numpy()


def _ember_bits(e):
    return e.contiguous()._data.view(np.uint8).reshape(-1)


@pytest.mark.parametrize("a, b", list(itertools.product(BAREBONES, BAREBONES + OTHERS)))
def test_promotion_is_torchs_or_torchs_error(a, b):
    try:
        expected = torch.promote_types(getattr(torch, a), getattr(torch, b))
    except RuntimeError as error:
        with pytest.raises(RuntimeError, match=str(error).replace("(", r"\(").replace(")", r"\)")):
            ember.promote_types(getattr(ember, a), getattr(ember, b))
        return
    assert str(ember.promote_types(getattr(ember, a), getattr(ember, b))) == str(expected).replace("torch", "ember")


def test_ops_that_compute_refuse_them_with_torchs_error_and_say_what_to_do():
    x = ember.tensor([1, 2, 3], dtype=ember.uint16)
    with pytest.raises(NotImplementedError) as torch_error:
        torch.tensor([1, 2, 3], dtype=torch.uint16) + 1
    assert "not implemented for 'UInt16'" in str(torch_error.value)
    with pytest.raises(NotImplementedError, match=r"\"add\" not implemented for 'UInt16' .*t\.to\(torch\.int64\)"):
        x + 1
    with pytest.raises(NotImplementedError, match="not implemented for 'Float8_e5m2'"):
        ember.ones(2).to(ember.float8_e5m2).exp()
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not supported"):
        x + ember.ones(3, dtype=ember.int32)


# every float32 exponent, both signs, the edges of each format, inf, nan, zeros, subnormals
def _awkward_values():
    rng = np.random.default_rng(0)
    values = rng.standard_normal(4000) * 10.0 ** rng.integers(-45, 39, 4000)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38, -3e38, 448.0, 449.0, 464.0, 465.0, 480.0,
             240.0, 248.0, 57344.0, 61440.0, 2.0**-127, 2.0**-128, 1.5, 0.75, -1.4999]
    return np.concatenate([values, edges])


@pytest.mark.parametrize("name", FLOAT8)
@pytest.mark.parametrize("source", ["float32", "float64", "float16", "bfloat16", "int64"])
def test_conversion_to_float8_gives_torchs_values(name, source):
    values = torch.from_numpy(_awkward_values())
    if source == "int64":
        values = values.nan_to_num(0.0).clamp(-1e6, 1e6)
    data = values.to(getattr(torch, source))
    expected = data.to(getattr(torch, name)).float().numpy()
    actual = ember.tensor(data.float().numpy()).to(getattr(ember, source)).to(getattr(ember, name)).float().numpy()
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("name", FLOAT8)
@pytest.mark.parametrize("target", ["float32", "float64", "float16", "bfloat16", "int64", "uint8", "float8_e5m2"])
def test_conversion_from_float8_gives_torchs_values(name, target):
    source = torch.from_numpy(_awkward_values()).to(getattr(torch, name))
    if target in ("int64", "uint8"):  # NaN to an integer is undefined in C++
        source = source[~source.float().isnan()]
    expected = source.to(getattr(torch, target)).to(torch.float64).numpy()
    mine = ember.tensor(source.float().numpy()).to(getattr(ember, name))
    np.testing.assert_array_equal(mine.to(getattr(ember, target)).to(ember.float64).numpy(), expected)


@pytest.mark.parametrize("name", UNSIGNED)
def test_conversion_to_unsigned_gives_torchs_values(name):
    floats = torch.tensor([0.0, 1.7, 70000.0, -5.0, 3e9, 5e9, 1e19, -1.5])
    ints = torch.tensor([0, 1, 65535, 65536, -1, 2**32 + 7, -(2**40)])
    for source in (floats, ints):
        expected = source.to(getattr(torch, name)).to(torch.float64)
        actual = ember.tensor(source.numpy()).to(getattr(ember, name)).to(ember.float64)
        np.testing.assert_array_equal(actual.numpy(), expected.numpy())


@pytest.mark.parametrize("name", BAREBONES)
def test_views_indexing_and_copies_match_torch(name):
    mine, theirs = _pair(name)
    base = torch.arange(24.0).reshape(2, 3, 4)
    t = base.to(theirs)
    e = ember.tensor(base.numpy()).to(mine)
    cases = [lambda x: x.transpose(0, 2), lambda x: x[:, 1:, ::2], lambda x: x.reshape(6, 4)[2],
             lambda x: x.as_strided((2, 2), (1, 3), 1), lambda x: x.permute(2, 0, 1).contiguous(),
             lambda x: x.flatten(), lambda x: x.clone(), lambda x: x.unsqueeze(1).expand(2, 5, 3, 4)]
    for case in cases:
        got, want = case(e), case(t)
        assert got.shape == tuple(want.shape) and got.stride() == want.stride() and got.dtype is mine
        np.testing.assert_array_equal(_ember_bits(got), _bits(want))


@pytest.mark.parametrize("name", BAREBONES)
def test_printed_as_torch_prints_them(name):
    mine, theirs = _pair(name)
    values = torch.tensor([[0.0, 1.5, 3.0], [224.0, 0.125, 7.0]])
    if name in UNSIGNED:
        values = values.floor() * 1000
    expected = repr(values.to(theirs)).replace("torch.", "ember.")
    assert repr(ember.tensor(values.numpy()).to(mine)) == expected
    assert ember.tensor(values.numpy()).to(mine).tolist() == values.to(theirs).tolist()


@pytest.mark.parametrize("name", BAREBONES)
def test_limits_are_torchs(name):
    mine, theirs = _pair(name)
    info, expected = (ember.iinfo, torch.iinfo) if name in UNSIGNED else (ember.finfo, torch.finfo)
    assert repr(info(mine)).replace("ember.", "") == repr(expected(theirs)).replace("torch.", "")
    assert mine.itemsize == theirs.itemsize and mine.is_floating_point == theirs.is_floating_point
    assert mine.is_signed == theirs.is_signed


def test_numpy_round_trips_unsigned_and_refuses_float8_as_torch():
    for name in UNSIGNED:
        array = np.array([1, 2, 60000], dtype=name)
        assert ember.from_numpy(array).dtype is getattr(ember, name)
        assert torch.from_numpy(array).dtype is getattr(torch, name)
        assert ember.from_numpy(array).numpy().dtype == array.dtype
    with pytest.raises(TypeError, match="Got unsupported ScalarType Float8_e4m3fn"):
        torch.ones(2).to(torch.float8_e4m3fn).numpy()
    with pytest.raises(TypeError, match="Got unsupported ScalarType Float8_e4m3fn"):
        ember.ones(2).to(ember.float8_e4m3fn).numpy()


def _storage_views():
    """{name: a torch tensor} of every barebones dtype, with a strided view sharing a storage."""
    tensors = {name: (torch.arange(12.0).reshape(3, 4) * 3).to(getattr(torch, name)) for name in BAREBONES}
    tensors["uint16_view"] = tensors["uint16"][:, 1::2]
    tensors["float8_view"] = tensors["float8_e5m2"].t()[1:]
    return tensors


@pytest.mark.parametrize("weights_only", [True, False])
def test_torch_checkpoints_load_with_their_dtypes_strides_and_shared_storage(weights_only):
    source = _storage_views()
    buffer = io.BytesIO()
    torch.save(source, buffer)
    loaded = ember.load(io.BytesIO(buffer.getvalue()), weights_only=weights_only)
    for key, want in source.items():
        got = loaded[key]
        assert str(got.dtype) == str(want.dtype).replace("torch", "ember")
        assert got.shape == tuple(want.shape) and got.stride() == want.stride()
        np.testing.assert_array_equal(_ember_bits(got), _bits(want))
    assert loaded["uint16_view"].untyped_storage().data_ptr() == loaded["uint16"].untyped_storage().data_ptr()


@pytest.mark.parametrize("weights_only", [True, False])
def test_ember_checkpoints_load_in_torch(weights_only):
    source = _storage_views()
    buffer = io.BytesIO()
    torch.save(source, buffer)
    mine = ember.load(io.BytesIO(buffer.getvalue()))
    out = io.BytesIO()
    ember.save(mine, out)
    back = torch.load(io.BytesIO(out.getvalue()), weights_only=weights_only)
    for key, want in source.items():
        assert back[key].dtype == want.dtype and back[key].stride() == want.stride()
        np.testing.assert_array_equal(_bits(back[key]), _bits(want))


def test_safetensors_both_ways(tmp_path):
    source = {name: (torch.arange(6.0) * 5).to(getattr(torch, name)) for name in BAREBONES if name != "float8_e8m0fnu"}
    save_file(source, tmp_path / "torch.safetensors")
    mine = ember.load_safetensors(tmp_path / "torch.safetensors")
    for key, want in source.items():
        assert str(mine[key].dtype) == str(want.dtype).replace("torch", "ember")
        np.testing.assert_array_equal(_ember_bits(mine[key]), _bits(want))
    ember.save_safetensors(mine, tmp_path / "ember.safetensors")
    back = load_file(tmp_path / "ember.safetensors")
    for key, want in source.items():
        assert back[key].dtype == want.dtype
        np.testing.assert_array_equal(_bits(back[key]), _bits(want))
