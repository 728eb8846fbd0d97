"""Bounded Hypothesis fuzzing of the loaders and round-trip properties.

Mutated files must either load or raise CheckpointError: never another exception. The
data.pkl fuzz re-zips each mutation with a fresh CRC so the unpickler itself is exercised
(otherwise the CRC check would stop almost every mutation). Seeds include the hostile
corpus of test_hostile_files.py. Mirrors safetensors' fuzz_target_1.rs and
structured_roundtrip.rs."""

import io
import zipfile

import numpy as np
import safetensors.numpy
import torch
from checkpoint_builders import P2, checkpoint, glob, num, pickle_of, pid, tensor, uni
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hostile_files import CASES

import ember
from ember.serialization import CheckpointError

FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64, ember.float16, ember.float32,
          ember.float64]


def _valid_checkpoint():
    buffer = io.BytesIO()
    base = ember.arange(12.0).reshape(3, 4)
    ember.save({"w": base, "t": base.t(), "i": ember.arange(3), "meta": [1, "a", (2.5, None)]}, buffer)
    return buffer.getvalue()


VALID = _valid_checkpoint()
VALID_PKL = zipfile.ZipFile(io.BytesIO(VALID)).read("archive/data.pkl")
SEED_PKLS = [VALID_PKL, pickle_of(b"}" + uni("w") + tensor(size=(2, 3), stride=(3, 1)) + b"s")]
for _data, _ in CASES.values():
    try:
        SEED_PKLS.append(zipfile.ZipFile(io.BytesIO(_data)).read("archive/data.pkl"))
    except (zipfile.BadZipFile, KeyError):
        pass


@st.composite
def mutations(draw, seeds):
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, max(len(data) - 1, 0)))
        kind = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]))
        if kind == "flip" and data:
            data[position] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set" and data:
            data[position] = draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xFF, ord("("), ord("R"), ord("q")]))
        elif kind == "insert":
            data[position:position] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[position:position + draw(st.integers(1, 8))]
        elif kind == "truncate":
            del data[position:]
    return bytes(data)


def _load_or_refuse(load, data):
    try:
        load(data)
    except CheckpointError:
        pass


@FUZZ
@given(mutations([VALID]))
def test_mutated_checkpoint_loads_or_raises_checkpoint_error(data):
    _load_or_refuse(lambda d: ember.load(io.BytesIO(d)), data)


@FUZZ
@given(mutations(SEED_PKLS))
def test_mutated_data_pkl_loads_or_raises_checkpoint_error(pkl):
    records = zipfile.ZipFile(io.BytesIO(VALID))
    data = checkpoint(pkl, records={name[len("archive/data/"):]: records.read(name) for name in records.namelist()
                                    if name.startswith("archive/data/")})
    _load_or_refuse(lambda d: ember.load(io.BytesIO(d)), data)


# Opcodes and well-formed fragments (globals, persistent ids, whole tensors) recombined at
# random: reaches type confusions a byte mutation rarely builds.
PIECES = [b"(", b"t", b"\x85", b"\x86", b"\x87", b")", b"]", b"}", b"N", b"\x88", b"\x89", b"R", b"\x81", b"b", b"a",
          b"e", b"s", b"u", b"Q", b"q\x00", b"q\x01", b"h\x00", b"h\x01", b"j\x00\x00\x00\x00", num(0), num(6), num(2),
          num(-1), num(2**70), uni("storage"), uni("0"), uni("cpu"), uni("_metadata"), uni("latin1"),
          glob("torch", "FloatStorage"), glob("torch", "BoolStorage"), glob("torch._utils", "_rebuild_tensor_v2"),
          glob("torch._utils", "_rebuild_parameter"), glob("collections", "OrderedDict"),
          glob("collections", "Counter"),
          glob("torch", "Size"), glob("torch", "device"), glob("_codecs", "encode"), glob("builtins", "set"),
          glob("builtins", "complex"), glob("builtins", "bytearray"), glob("torch._tensor", "_rebuild_from_type_v2"),
          glob("torch", "Tensor"), glob("torch", "float32"), pid(), tensor(), tensor(size=(2, 3), stride=(3, 1))]


@FUZZ
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=30))
def test_opcode_soup_loads_or_raises_checkpoint_error(pieces):
    _load_or_refuse(lambda d: ember.load(io.BytesIO(d)), checkpoint(P2 + b"".join(pieces) + b"."))


def _valid_safetensors():
    return safetensors.numpy.save({"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.ones(2, np.int64)},
                                  metadata={"k": "v"})


@FUZZ
@given(mutations([_valid_safetensors()]))
def test_mutated_safetensors_loads_or_raises_checkpoint_error(data):
    _load_or_refuse(ember.load_safetensors, data)


# --- structured round trips -----------------------------------------------------------------
@st.composite
def tensor_dicts(draw):
    out = {}
    for i in range(draw(st.integers(0, 8))):
        dtype = draw(st.sampled_from(DTYPES))
        shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
        values = np.asarray((np.random.default_rng(i).standard_normal(shape) * 30).astype(dtype.np))
        t = ember.from_numpy(values)
        if t.ndim >= 2 and draw(st.booleans()):
            t = t.transpose(0, t.ndim - 1)
        if t.ndim >= 1 and t.shape[0] > 1 and draw(st.booleans()):
            t = t[1::2]
        out[f"t{i}"] = t
    return out


@settings(max_examples=40, deadline=None)
@given(tensor_dicts())
def test_save_load_round_trip_with_torch_as_oracle(tensors):
    buffer = io.BytesIO()
    ember.save(tensors, buffer)
    ours = ember.load(io.BytesIO(buffer.getvalue()))
    theirs = torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)
    for name, t in tensors.items():
        assert ours[name].dtype is t.dtype and ours[name].stride() == theirs[name].stride() == t.stride()
        np.testing.assert_array_equal(ours[name].numpy(), t.numpy())
        np.testing.assert_array_equal(theirs[name].numpy(), t.numpy())


@settings(max_examples=40, deadline=None)
@given(tensor_dicts())
def test_safetensors_round_trip_with_the_package_as_oracle(tmp_path_factory, tensors):
    path = tmp_path_factory.mktemp("st") / "x.safetensors"
    ember.save_safetensors(tensors, path)
    ours = ember.load_safetensors(path)
    theirs = safetensors.numpy.load_file(path)
    assert ours.keys() == theirs.keys() == tensors.keys()
    for name, t in tensors.items():
        np.testing.assert_array_equal(ours[name].numpy(), t.numpy())
        np.testing.assert_array_equal(theirs[name], t.numpy())
