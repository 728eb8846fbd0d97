"""ember.save -> torch.load and torch.save -> ember.load, with torch 2.13 as the oracle."""

import collections
import io
import warnings
import zipfile

import numpy as np
import pytest
import torch

import ember
from ember.serialization import CheckpointError

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _example(dtype_name, shape=(2, 3)):
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 2
    return values.astype(np.dtype(dtype_name) if dtype_name != "bool" else np.bool_)


def _torch_load(data, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ember's files must load without any warning
        return torch.load(io.BytesIO(data), weights_only=True, **kwargs)


def _ember_bytes(obj):
    buffer = io.BytesIO()
    ember.save(obj, buffer)
    return buffer.getvalue()


def _torch_bytes(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _assert_same(ember_tensor, torch_tensor):
    assert tuple(ember_tensor.shape) == tuple(torch_tensor.shape)
    assert str(ember_tensor.dtype).split(".")[-1] == str(torch_tensor.dtype).split(".")[-1]
    assert ember_tensor.requires_grad == torch_tensor.requires_grad
    np.testing.assert_array_equal(ember_tensor.detach().numpy(), torch_tensor.detach().numpy())


# --- ember -> torch ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_reads_every_dtype(dtype):
    values = _example(dtype)
    x = ember.tensor(values)
    obj = {"x": x, "scalar": x[1, 2].clone(), "scalar_view": x[1, 2], "empty": ember.tensor(values[:0])}
    loaded = _torch_load(_ember_bytes(obj))
    for key in obj:
        _assert_same(obj[key], loaded[key])


def test_torch_reads_views_sharing_one_storage():
    base = ember.arange(12.0).reshape(3, 4)
    obj = {"base": base, "t": base.t(), "row": base[1], "strided": base[:, 1::2], "expanded": base[0:1].expand(5, 4)}
    loaded = _torch_load(_ember_bytes(obj))
    for key in obj:
        _assert_same(obj[key], loaded[key])
        assert loaded[key].untyped_storage().data_ptr() == loaded["base"].untyped_storage().data_ptr()
        assert loaded[key].stride() == obj[key].stride()
        assert loaded[key].storage_offset() == obj[key].storage_offset()
    loaded["base"][1, 0] = 100.0  # shared memory: the write shows through the views
    assert loaded["t"][0, 1] == 100.0 and loaded["row"][0] == 100.0


def test_torch_reads_parameters_and_requires_grad():
    obj = {"p": ember.nn.Parameter(ember.ones(2, 3)), "frozen": ember.nn.Parameter(ember.zeros(2), False),
           "leaf": ember.ones(3).requires_grad_()}
    loaded = _torch_load(_ember_bytes(obj))
    assert type(loaded["p"]) is torch.nn.Parameter and type(loaded["frozen"]) is torch.nn.Parameter
    assert type(loaded["leaf"]) is torch.Tensor
    for key in obj:
        _assert_same(obj[key], loaded[key])


def test_torch_reads_containers_and_scalars():
    obj = {"list": [1, 2.5, None, True, "text", b"bytes"], "tuple": (1, (2, 3)), "set": {1, 2},
           "nested": {"a": [{"b": ember.ones(1)}]}, "od": collections.OrderedDict(z=1, a=2), "complex": 1 + 2j,
           "big": 2**80, "negative": -(2**40), "dtype": ember.float16, "device": ember.device("cpu"),
           "size": ember.Size([2, 3])}
    loaded = _torch_load(_ember_bytes(obj))
    expected = dict(obj, nested={"a": [{"b": torch.ones(1)}]}, dtype=torch.float16, device=torch.device("cpu"),
                    size=torch.Size([2, 3]))
    assert loaded.keys() == expected.keys()
    for key in expected:
        if key != "nested":
            assert loaded[key] == expected[key] and type(loaded[key]) is type(expected[key]), key
    assert torch.equal(loaded["nested"]["a"][0]["b"], torch.ones(1))
    assert list(loaded["od"]) == ["z", "a"]


def test_torch_module_loads_an_ember_state_dict():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    ember_model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    loaded = _torch_load(_ember_bytes(ember_model.state_dict()))
    assert type(loaded) is collections.OrderedDict
    assert loaded._metadata == ember_model.state_dict()._metadata
    model.load_state_dict(loaded)
    for name, value in ember_model.state_dict().items():
        _assert_same(value, model.state_dict()[name])


def test_torch_reads_from_a_path_and_with_mmap(tmp_path):
    path = tmp_path / "weights.pt"
    obj = {"w": ember.arange(6.0).reshape(2, 3).t()}
    ember.save(obj, path)
    assert zipfile.ZipFile(path).namelist()[0] == "weights/data.pkl"  # torch's prefix: the file stem
    for kwargs in ({}, {"mmap": True}):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _assert_same(obj["w"], torch.load(path, weights_only=True, **kwargs)["w"])


def test_saving_one_storage_as_two_dtypes_fails_like_torch():
    x = ember.arange(4.0)
    with pytest.raises(RuntimeError) as ours:
        ember.save({"a": x, "b": x.view(ember.int32)}, io.BytesIO())
    tx = torch.arange(4.0)
    with pytest.raises(RuntimeError) as theirs:
        torch.save({"a": tx, "b": tx.view(torch.int32)}, io.BytesIO())
    assert str(ours.value).startswith(str(theirs.value))


# --- torch -> ember ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_ember_reads_every_dtype(dtype):
    values = _example(dtype, (3, 4))
    source = torch.from_numpy(values)
    obj = {"x": source, "scalar": source[1, 2].clone(), "empty": source[:0].clone(), "t": source.t()}
    loaded = ember.load(io.BytesIO(_torch_bytes(obj)))
    for key in obj:
        _assert_same(loaded[key], obj[key])


def _bfloat16_bits(tensor):
    """The raw bits of a bfloat16 tensor of either framework, as int16."""
    if isinstance(tensor, torch.Tensor):
        return tensor.contiguous().view(torch.int16).numpy()
    return tensor.contiguous().view(ember.int16).numpy()


def test_ember_loads_bfloat16_as_bfloat16_with_the_same_bits():
    source = torch.randn(3, 5).to(torch.bfloat16)
    source[0, :3] = torch.tensor([float("inf"), float("nan"), -0.0])
    loaded = ember.load(io.BytesIO(_torch_bytes({"x": source, "v": source[1:, ::2]})))
    assert loaded["x"].dtype is ember.bfloat16
    np.testing.assert_array_equal(_bfloat16_bits(loaded["x"]), _bfloat16_bits(source))
    np.testing.assert_array_equal(_bfloat16_bits(loaded["v"]), _bfloat16_bits(source[1:, ::2]))
    assert loaded["v"].untyped_storage() == loaded["x"].untyped_storage()


def test_torch_loads_ember_bfloat16_as_bfloat16():
    x = ember.randn(4, 3).to(ember.bfloat16)
    obj = {"x": x, "t": x.t(), "param": ember.nn.Parameter(x.clone())}
    loaded = _torch_load(_ember_bytes(obj))
    for key in obj:
        assert loaded[key].dtype is torch.bfloat16
        np.testing.assert_array_equal(_bfloat16_bits(loaded[key]), _bfloat16_bits(obj[key].detach()))
    assert isinstance(loaded["param"], torch.nn.Parameter) and loaded["param"].requires_grad
    again = ember.load(io.BytesIO(_torch_bytes(loaded)))  # and back through the safe unpickler
    np.testing.assert_array_equal(_bfloat16_bits(again["x"]), _bfloat16_bits(x))
    assert again["x"].dtype is ember.bfloat16 and again["param"].requires_grad


def test_ember_keeps_torch_views_sharing():
    base = torch.arange(20.0).reshape(4, 5)
    obj = [base, base.t(), base[2], base[:, ::2], base[1:2].expand(3, 5), base[3, 4]]
    loaded = ember.load(io.BytesIO(_torch_bytes(obj)))
    for ours, theirs in zip(loaded, obj):
        _assert_same(ours, theirs)
        assert ours.stride() == theirs.stride() and ours.storage_offset() == theirs.storage_offset()
        assert ours.untyped_storage() == loaded[0].untyped_storage()
    loaded[0][2, 0] = -1.0
    assert loaded[1][0, 2].item() == -1.0 and loaded[2][0].item() == -1.0


def test_ember_reads_parameters_as_parameters():
    obj = {"p": torch.nn.Parameter(torch.randn(2, 2)), "frozen": torch.nn.Parameter(torch.ones(1), False),
           "leaf": torch.ones(2, requires_grad=True)}
    loaded = ember.load(io.BytesIO(_torch_bytes(obj)))
    assert isinstance(loaded["p"], ember.nn.Parameter) and isinstance(loaded["frozen"], ember.nn.Parameter)
    assert not isinstance(loaded["leaf"], ember.nn.Parameter) and loaded["leaf"].is_leaf
    for key in obj:
        _assert_same(loaded[key], obj[key])


def test_ember_reads_containers_and_scalars():
    obj = {"list": [1, 2.5, None, True, "text", b"bytes", bytearray(b"ba")], "tuple": (1, (2, 3)), "set": {1, 2},
           "od": collections.OrderedDict(z=1, a=2), "complex": 1 + 2j, "big": 2**80, "negative": -(2**40),
           "dtype": torch.int16, "device": torch.device("cpu"), "size": torch.Size([2, 3]), "inf": float("inf")}
    loaded = ember.load(io.BytesIO(_torch_bytes(obj)))
    expected = dict(obj, dtype=ember.int16, device=ember.device("cpu"), size=ember.Size([2, 3]))
    assert loaded == expected
    assert type(loaded["od"]) is collections.OrderedDict and type(loaded["size"]) is ember.Size


@pytest.mark.parametrize("make", [
    lambda: torch.nn.Linear(4, 3),
    lambda: torch.nn.Conv2d(3, 8, 3, bias=False),
    lambda: torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.ReLU()),
    lambda: torch.nn.LSTM(4, 5, num_layers=2),
    lambda: torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16),
    lambda: torch.nn.Embedding(10, 4).half(),
], ids=["linear", "conv", "conv_bn", "lstm", "transformer", "embedding_half"])
def test_ember_reads_real_torch_state_dicts(make, tmp_path):
    torch.manual_seed(0)
    state_dict = make().state_dict()
    path = tmp_path / "model.pt"
    torch.save(state_dict, path)
    loaded = ember.load(path)
    assert type(loaded) is collections.OrderedDict and list(loaded) == list(state_dict)
    assert loaded._metadata == state_dict._metadata
    for name, value in state_dict.items():
        _assert_same(loaded[name], value)


def test_ember_module_loads_a_torch_state_dict():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    ember_model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Linear(4, 2))
    ember_model.load_state_dict(ember.load(io.BytesIO(_torch_bytes(model.state_dict()))))
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(ember_model(ember.tensor(x)).detach().numpy(),
                               model(torch.from_numpy(x)).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_round_trip_ember_torch_ember():
    obj = {"w": ember.randn(3, 4), "i": ember.arange(5), "p": ember.nn.Parameter(ember.ones(2))}
    via_torch = _torch_bytes(_torch_load(_ember_bytes(obj)))
    loaded = ember.load(io.BytesIO(via_torch))
    for key in obj:
        np.testing.assert_array_equal(loaded[key].detach().numpy(), obj[key].detach().numpy())
    assert isinstance(loaded["p"], ember.nn.Parameter)


def test_big_endian_checkpoint():
    # torch writes byteorder 'big' on big-endian hosts; rebuild such a file from a little-endian one.
    source = {"f": torch.arange(6.0), "i": torch.arange(3, dtype=torch.int64) - 1}
    archive = zipfile.ZipFile(io.BytesIO(_torch_bytes(source)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as swapped:
        for info in archive.infolist():
            data = archive.read(info)
            if info.filename.endswith("byteorder"):
                data = b"big"
            elif "/data/" in info.filename:
                itemsize = 4 if data == source["f"].numpy().tobytes() else 8
                data = np.frombuffer(data, f"<i{itemsize}").astype(f">i{itemsize}").tobytes()
            swapped.writestr(info.filename, data)
    loaded = ember.load(io.BytesIO(out.getvalue()))
    for key in source:
        _assert_same(loaded[key], source[key])


def test_map_location():
    data = _torch_bytes({"x": torch.ones(2)})
    for map_location in (None, "cpu", ember.device("cpu"), {"cpu": "cpu"}, lambda storage, location: storage,
                         lambda storage, location: None, lambda storage, location: "cpu"):
        assert ember.load(io.BytesIO(data), map_location=map_location)["x"].device == ember.device("cpu")
    with pytest.raises(TypeError, match="map_location must be"):
        ember.load(io.BytesIO(data), map_location=3)


def test_cuda_checkpoint_without_cuda_names_the_fix():
    data = _edit_data_pkl(_torch_bytes({"x": torch.ones(2)}),
                          lambda pkl: pkl.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"))
    with pytest.raises(CheckpointError, match=r"cannot load a storage on 'cuda:0'.*map_location='cpu'"):
        ember.load(io.BytesIO(data))
    assert ember.load(io.BytesIO(data), map_location="cpu")["x"].device == ember.device("cpu")


def _edit_data_pkl(data, edit):
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for info in source.infolist():
            payload = source.read(info)
            archive.writestr(info.filename, edit(payload) if info.filename.endswith("data.pkl") else payload)
    return out.getvalue()


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_tensors_load_and_save_both_ways(dtype):
    source = torch.randn(3, 4, dtype=dtype)[:, 1:]  # a view: its storage offset travels too
    loaded = ember.load(io.BytesIO(_torch_bytes({"c": source})))["c"]
    assert loaded.dtype is getattr(ember, str(dtype).removeprefix("torch."))
    np.testing.assert_array_equal(loaded.numpy(), source.numpy())
    buffer = io.BytesIO()
    ember.save({"c": loaded}, buffer)
    back = torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)["c"]
    assert back.dtype == dtype
    assert torch.equal(back, source)


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.filterwarnings("ignore:Sparse (invariant checks|CSR tensor support):UserWarning")
def test_sparse_tensors_load_and_save_both_ways(weights_only):
    """torch's ``_rebuild_sparse_tensor`` records (COO with its coalesced flag, CSR) read
    by ember, and ember's written so torch reads them (weights_only included)."""
    source = {"uncoalesced": torch.sparse_coo_tensor([[0, 2, 0]], [1.0, 2.0, 3.0], (3,)),
              "hybrid": torch.sparse_coo_tensor([[1], [0]], [[1.0, 2.0]], (2, 2, 2)).coalesce(),
              "csr": torch.eye(3, dtype=torch.float64).to_sparse_csr()}
    loaded = ember.load(io.BytesIO(_torch_bytes(source)), weights_only=weights_only)
    buffer = io.BytesIO()
    ember.save(loaded, buffer)
    back = torch.load(io.BytesIO(buffer.getvalue()), weights_only=weights_only)
    for name, tensor in source.items():
        assert loaded[name].layout is getattr(ember, str(tensor.layout).removeprefix("torch."))
        np.testing.assert_array_equal(loaded[name].to_dense().numpy(), tensor.to_dense().numpy())
        assert back[name].layout == tensor.layout
        if tensor.layout == torch.sparse_coo:
            assert loaded[name].is_coalesced() == back[name].is_coalesced() == tensor.is_coalesced()
            assert torch.equal(back[name]._indices(), tensor._indices())
        assert torch.equal(back[name].to_dense(), tensor.to_dense())


@pytest.mark.filterwarnings("ignore:`torch.jit.(script|save)` is deprecated:DeprecationWarning")
def test_legacy_and_torchscript_files_are_refused_clearly(tmp_path):
    buffer = io.BytesIO()
    torch.save({"x": torch.ones(2)}, buffer, _use_new_zipfile_serialization=False)
    with pytest.raises(CheckpointError, match=r"legacy \(pre-1\.6, tar or raw pickle\) torch checkpoint"):
        ember.load(io.BytesIO(buffer.getvalue()))
    path = tmp_path / "scripted.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), path)
    with pytest.raises(CheckpointError, match=r"TorchScript archive \(torch\.jit\.save\)"):
        ember.load(path)


def test_tensor_with_python_attributes_is_refused():
    source = torch.ones(2)
    source.note = "hello"  # torch pickles this through _rebuild_from_type_v2 with a state dict
    with pytest.raises(CheckpointError, match=r"tensor state must be empty, got \{'note': 'hello'\}"):
        ember.load(io.BytesIO(_torch_bytes(source)))
