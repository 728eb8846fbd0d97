"""save_safetensors / load_safetensors against the safetensors package (the oracle), and every
reader rule of safetensors/src/tensor.rs on crafted files (hostile ones also in a capped subprocess)."""

import json
import struct

import numpy as np
import pytest
import safetensors.numpy
import safetensors.torch
import torch
from checkpoint_builders import load_isolated

import ember
from ember.serialization import CheckpointError

DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64, ember.float16, ember.float32,
          ember.float64]


def _values(dtype, shape):
    return np.asarray((np.random.default_rng(1).standard_normal(shape) * 40).astype(dtype.np))


def test_safetensors_package_reads_ember_files(tmp_path):
    tensors = {f"t_{d.name}": ember.from_numpy(_values(d, (2, 3))) for d in DTYPES}
    tensors.update(scalar=ember.tensor(2.5), empty=ember.zeros(0, 4), view=ember.arange(12.0).reshape(3, 4).t())
    path = tmp_path / "m.safetensors"
    ember.save_safetensors(tensors, path, metadata={"format": "pt", "note": "ember"})
    loaded = safetensors.numpy.load_file(path)
    assert loaded.keys() == tensors.keys()
    for name, tensor in tensors.items():
        np.testing.assert_array_equal(loaded[name], tensor.numpy())
        assert loaded[name].dtype == tensor.numpy().dtype and loaded[name].shape == tuple(tensor.shape)
    with safetensors.safe_open(path, "np") as f:
        assert f.metadata() == {"format": "pt", "note": "ember"}
    header_size = struct.unpack("<Q", path.read_bytes()[:8])[0]
    assert header_size % 8 == 0


def test_ember_reads_safetensors_package_files(tmp_path):
    tensors = {f"t_{d.name}": _values(d, (3, 2)) for d in DTYPES}
    tensors.update(scalar=np.asarray(np.float32(1.5)), empty=np.zeros((2, 0), np.int64))
    path = tmp_path / "np.safetensors"
    safetensors.numpy.save_file(tensors, path)
    loaded = ember.load_safetensors(path)
    assert loaded.keys() == tensors.keys()
    for name, values in tensors.items():
        assert loaded[name].numpy().dtype == values.dtype
        np.testing.assert_array_equal(loaded[name].numpy(), values)
    assert ember.load_safetensors(path.read_bytes()).keys() == tensors.keys()
    with open(path, "rb") as f:
        assert ember.load_safetensors(f).keys() == tensors.keys()


def test_bfloat16_loads_and_saves_with_the_same_bits(tmp_path):
    source = torch.randn(4, 3).to(torch.bfloat16)
    loaded = ember.load_safetensors(safetensors.torch.save({"w": source}))
    assert loaded["w"].dtype is ember.bfloat16
    np.testing.assert_array_equal(loaded["w"].view(ember.int16).numpy(), source.view(torch.int16).numpy())
    path = tmp_path / "bf16.safetensors"
    ember.save_safetensors(loaded, path)
    assert torch.equal(safetensors.torch.load_file(path)["w"], source)  # dtype and bits


def test_torch_safetensors_round_trip(tmp_path):
    source = {"w": torch.randn(3, 4), "i": torch.arange(5), "b": torch.tensor([True, False])}
    loaded = ember.load_safetensors(safetensors.torch.save(source))
    path = tmp_path / "again.safetensors"
    ember.save_safetensors(loaded, path)
    again = safetensors.torch.load_file(path)
    for name in source:
        assert torch.equal(again[name], source[name])


def test_save_argument_errors(tmp_path):
    with pytest.raises(TypeError, match="not a tensor"):
        ember.save_safetensors({"a": [1]}, tmp_path / "x")
    with pytest.raises(ValueError, match="'__metadata__'"):
        ember.save_safetensors({"__metadata__": ember.ones(1)}, tmp_path / "x")
    with pytest.raises(TypeError, match="str to str"):
        ember.save_safetensors({"a": ember.ones(1)}, tmp_path / "x", metadata={"n": 1})


# --- reader rules -----------------------------------------------------------------------------
def _file(header, data=b"", pad=True, raw_header=None):
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


F32x2 = struct.pack("<2f", 1.0, 2.0)
ENTRY = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}

HOSTILE = {
    "too_short": (b"\x01\x00\x00", r"shorter than the 8-byte header size"),
    "empty": (b"", r"shorter than the 8-byte header size"),
    "header_over_limit": (struct.pack("<Q", 100_000_001) + b"{}", r"exceeds the 100000000 limit"),
    "header_past_file": (struct.pack("<Q", 1 << 40) + b"{}", r"exceeds the 100000000 limit"),
    "header_past_small_file": (struct.pack("<Q", 64) + b"{}      ", r"runs past the end"),
    "not_utf8": (_file(None, raw_header=b'{"\xff":1}'), r"not valid UTF-8"),
    "not_brace": (_file(None, raw_header=b'["a"]'), r"does not start with"),
    "bad_json": (_file(None, raw_header=b'{"a": }'), r"not valid JSON"),
    "deep_json": (_file(None, raw_header=b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"), r"not valid JSON"),
    "duplicate_names": (_file(None, F32x2, raw_header=b'{"a":' + json.dumps(ENTRY).encode() + b',"a":'
                              + json.dumps(ENTRY).encode() + b"}"), r"repeats the name 'a'"),
    "entry_not_object": (_file({"a": 1}), r"exactly the fields"),
    "extra_field": (_file({"a": dict(ENTRY, extra=1)}, F32x2), r"exactly the fields"),
    "unknown_dtype": (_file({"a": dict(ENTRY, dtype="F99")}, F32x2), r"unknown safetensors dtype 'F99'"),
    "unsupported_dtype": (_file({"a": dict(ENTRY, dtype="F4", data_offsets=[0, 16])}, F32x2 * 2),
                          r"dtype F4 of 'a' has no ember dtype"),
    "negative_shape": (_file({"a": dict(ENTRY, shape=[-2])}, F32x2), r"bad shape"),
    "bool_shape": (_file({"a": dict(ENTRY, shape=[True, 2])}, F32x2), r"bad shape"),
    "offsets_reversed": (_file({"a": dict(ENTRY, data_offsets=[8, 0])}, F32x2), r"end before they begin"),
    "offsets_not_ints": (_file({"a": dict(ENTRY, data_offsets=[0, 8.0])}, F32x2), r"bad data_offsets"),
    "span_mismatch": (_file({"a": dict(ENTRY, shape=[3])}, F32x2), r"\(12 bytes\) but its data_offsets span 8"),
    "shape_overflow": (_file({"a": dict(ENTRY, shape=[2**40, 2**40])}, F32x2), r"declares more than 2\*\*63 bytes"),
    # A zero size makes these empty, but NumPy refuses the shape: CheckpointError, not its ValueError.
    "empty_with_huge_dim": (_file({"a": dict(ENTRY, shape=[0, 2**62], data_offsets=[0, 0])}),
                            r"shape \[0, 4611686018427387904\], which declares more than 2\*\*63 bytes"),
    "empty_with_huge_dims": (_file({"a": dict(ENTRY, shape=[2**31, 0, 2**31], data_offsets=[0, 0])}),
                             r"declares more than 2\*\*63 bytes"),
    "gap": (_file({"a": dict(ENTRY, data_offsets=[4, 12])}, F32x2 + b"    "), r"gap before 'a'"),
    "overlap": (_file({"a": ENTRY, "b": dict(ENTRY, data_offsets=[4, 12])}, F32x2 + b"    "), r"overlap before"),
    "trailing_data": (_file({"a": ENTRY}, F32x2 + b"polyglot"), r"data ends at byte \d+ but the file has"),
    "truncated_data": (_file({"a": ENTRY}, F32x2[:5]), r"data ends at byte \d+ but the file has"),
    "huge_claim": (_file({"a": dict(ENTRY, shape=[2**30], data_offsets=[0, 2**32])}, F32x2),
                   r"data ends at byte"),
    "metadata_not_strings": (_file({"__metadata__": {"a": 1}, "a": ENTRY}, F32x2), r"map strings to strings"),
    "metadata_not_object": (_file({"__metadata__": [], "a": ENTRY}, F32x2), r"map strings to strings"),
    "bool_byte_2": (_file({"a": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\x01\x02"),
                    r"bytes other than 0 and 1"),
    "top_level_array_padded": (_file(None, raw_header=b"{} []"), r"not valid JSON"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_reader_rules(name):
    data, pattern = HOSTILE[name]
    with pytest.raises(CheckpointError, match=pattern):
        ember.load_safetensors(data)


def test_hostile_files_in_capped_subprocess(tmp_path):
    files = {name: data for name, (data, _) in HOSTILE.items()}
    files["control"] = _file({"a": ENTRY}, F32x2)
    results = load_isolated(files, str(tmp_path), kind="safetensors")
    assert results.pop("__canary__") == "MemoryError" and results.pop("control") == "ok"
    for name, outcome in results.items():
        assert outcome.startswith("CheckpointError: "), (name, outcome)


def test_every_truncation_is_refused():
    data = _file({"a": ENTRY, "b": {"dtype": "I64", "shape": [], "data_offsets": [8, 16]}}, F32x2 + bytes(8))
    assert set(ember.load_safetensors(data)) == {"a", "b"}
    for cut in range(len(data)):
        with pytest.raises(CheckpointError):
            ember.load_safetensors(data[:cut])
