"""Crafted hostile, corrupt and truncated checkpoints: each must raise CheckpointError with a
clear message, run nothing and stay within the file's real size in memory.

All files load in one subprocess capped by RLIMIT_AS (checkpoint_builders.load_isolated);
code-execution attempts would create a sentinel file. Mirrors the pattern of pytorch's
test/test_serialization.py (build hostile bytes in the test, assert type and message)."""

import io
import os
import random
import re
import struct
import tarfile
import zipfile

import pytest
from checkpoint_builders import (
    FLOATS6,
    P2,
    STOP,
    checkpoint,
    flip_byte_of,
    glob,
    load_isolated,
    local_header,
    num,
    pickle_of,
    pid,
    raw_zip,
    simple_checkpoint,
    tensor,
    tup,
    uni,
)

import ember
from ember.serialization import CheckpointError

SENTINEL = "PWNED"  # relative to the child's working folder


def _code_execution_cases():
    touch = f"open({SENTINEL!r}, 'w').close()"
    call1 = lambda module, name, arg: checkpoint(pickle_of(glob(module, name) + uni(arg) + b"\x85R"))
    return {
        "os_system": (call1("os", "system", f"touch {SENTINEL}"), r"global 'os\.system' is not allowed"),
        "posix_system": (call1("posix", "system", f"touch {SENTINEL}"), r"global 'posix\.system' is not allowed"),
        "builtins_eval": (call1("builtins", "eval", touch), r"global 'builtins\.eval' is not allowed"),
        "builtin_exec": (call1("__builtin__", "exec", touch), r"global '__builtin__\.exec' is not allowed"),
        "torch_load": (call1("torch.serialization", "load", "x.pt"), r"global 'torch\.serialization\.load'"),
        "builtins_getattr": (checkpoint(pickle_of(glob("builtins", "getattr") + glob("builtins", "open")
                                                  + uni("__call__") + b"\x86R")), r"'builtins\.getattr'"),
        "stack_global": (checkpoint(pickle_of(uni("builtins") + uni("exec") + b"\x93" + uni(touch) + b"\x85R")),
                         r"unsupported pickle opcode b'\\x93'"),
        "inst": (checkpoint(pickle_of(b"(" + uni(touch) + b"ibuiltins\nexec\n")), r"unsupported pickle opcode b'i'"),
        "obj": (checkpoint(pickle_of(b"(" + glob("builtins", "exec") + uni(touch) + b"o")),
                r"global 'builtins\.exec' is not allowed"),
        "reduce_on_dtype": (checkpoint(pickle_of(glob("torch", "float32") + b")R")), r"REDUCE of ember\.float32"),
        "reduce_on_storage_class": (checkpoint(pickle_of(glob("torch", "FloatStorage") + b")R")),
                                    r"REDUCE of <torch\.FloatStorage> is not allowed"),
        "newobj_on_function": (checkpoint(pickle_of(glob("torch._utils", "_rebuild_tensor_v2") + b")\x81")),
                               r"NEWOBJ of <checkpoint global torch\._utils\._rebuild_tensor_v2>"),
        "reduce_args_not_tuple": (checkpoint(pickle_of(glob("collections", "OrderedDict") + b"]R")),
                                  r"needs an argument tuple, got list"),
    }


def _opcode_cases():
    ops = {"proto4": b"\x80\x04", "frame": P2 + b"\x95" + struct.pack("<Q", 2) + b"N.", "newobj_ex": P2 + b"\x92",
           "ext1": P2 + b"\x82\x01", "binbytes": P2 + b"B\x01\x00\x00\x00x", "dup": P2 + b"N2",
           "persid": P2 + b"P0\n", "pop": P2 + b"NN0", "long4": P2 + b"\x8b\x01\x00\x00\x00\x01",
           "memoize": P2 + b"N\x94", "empty": b""}
    expected = {"proto4": r"pickle protocol 4 is not supported", "empty": r"malformed stack"}
    return {name: (checkpoint(body + STOP), expected.get(name, r"unsupported pickle opcode"))
            for name, body in ops.items()}


def _container_abuse_cases():
    od = glob("collections", "OrderedDict") + b")R"
    t = tensor()
    return {
        "setitem_on_list": (pickle_of(b"]" + uni("k") + uni("v") + b"s"), r"SETITEM on a list is not allowed"),
        "setitems_on_tensor": (pickle_of(t + b"(" + uni("k") + num(1) + b"u"), r"SETITEMS on a Tensor"),
        "setitem_on_tuple": (pickle_of(b")" + num(1) + num(2) + b"s"), r"SETITEM on a tuple"),
        "append_on_dict": (pickle_of(b"}" + num(1) + b"a"), r"APPEND on a dict is not allowed"),
        "appends_on_tensor": (pickle_of(t + b"(" + num(1) + b"e"), r"APPENDS on a Tensor"),
        "build_keys_on_ordereddict": (pickle_of(od + b"}" + uni("keys") + num(1) + b"sb"),
                                      r"BUILD of a OrderedDict with a dict state is not allowed"),
        "build_on_tensor": (pickle_of(t + b"}" + uni("requires_grad") + b"\x88sb"), r"BUILD of a Tensor"),
        "build_on_dict": (pickle_of(b"}" + b"}" + uni("_metadata") + b"}sb"), r"BUILD of a dict"),
        "build_metadata_not_dict": (pickle_of(od + b"}" + uni("_metadata") + num(1) + b"sb"), r"BUILD of a Ordered"),
        "unhashable_key": (pickle_of(b"}" + b"]" + num(1) + b"s"), r"bad dict key"),
        "set_of_lists": (pickle_of(glob("builtins", "set") + b"]" + b"(]]e" + b"\x85R"), r"bad arguments"),
    }


def _memo_and_length_cases():
    return {
        "long_binput_huge": (pickle_of(b"Nr\xff\xff\xff\x7f"), r"memo index 2147483647 out of range"),
        "binput_skips": (pickle_of(b"Nq\x05"), r"memo index 5 out of range"),
        "long_binget_unknown": (pickle_of(b"j\xff\xff\xff\xff"), r"memo entry 4294967295 is read before"),
        "binunicode_length_bomb": (P2 + b"X\xf0\xff\xff\xff" + b"abc.", r"data\.pkl is truncated"),
        "long1_truncated": (P2 + b"\x8a\xff\x01\x02", r"data\.pkl is truncated"),
        "global_without_newline": (P2 + b"c" + b"a" * 5000, r"unterminated or overlong GLOBAL"),
        "mark_bomb": (P2 + b"(" * 100_000 + b".", r"malformed stack"),
        "stack_underflow": (P2 + b"R.", r"stack underflow"),
        "tuple_without_mark": (P2 + b"Nt.", r"needs a MARK"),
        "trailing_bytes": (P2 + b"N." + b"os.system", r"bytes after STOP"),
        "bad_utf8": (P2 + b"X\x02\x00\x00\x00\xff\xfe.", r"invalid UTF-8"),
        # Hashing a tuple nested a million deep crashes CPython (no recursion check in C).
        "deep_tuple_as_key": (pickle_of(b"}" + b")" + b"\x85" * 1_000_000 + num(1) + b"s"), r"tuples nested deeper"),
        "deep_tuple_in_set": (pickle_of(glob("builtins", "set") + b"])" + b"\x85" * 1_000_000 + b"a\x85R"),
                              r"tuples nested deeper than 100"),
        "deep_tuple_via_mark": (pickle_of(b"(" * 200 + b"t" * 200), r"tuples nested deeper than 100"),
    }


def _size_cases():
    two_dtypes = pickle_of(b"]" + b"(" + tensor(storage="FloatStorage") + tensor(storage="IntStorage") + b"e")
    return {
        "numel_beyond_record": (simple_checkpoint(numel=10**12, size=(10**12,)), r"holds 24 bytes but storage 0 "
                                                                                    r"declares 1000000000000"),
        "numel_overflow": (simple_checkpoint(numel=2**70, size=(2**70,)), r"declares 1180591620717411303424"),
        "view_past_storage": (simple_checkpoint(size=(100,)), r"reaches element 99 of storage 0, which has 6"),
        "offset_past_storage": (simple_checkpoint(offset=6, size=(1,)), r"reaches element 6"),
        "negative_offset": (simple_checkpoint(offset=-1), r"storage offset must be a non-negative int"),
        "negative_stride": (simple_checkpoint(size=(2,), stride=(-1,)), r"tensor stride must be a tuple"),
        "huge_dim_of_empty": (simple_checkpoint(size=(0, 2**63)), r"tensor size must be a tuple"),
        # NOTE [ What a checkpoint may declare ] (ember/serialization/limits.py)
        "empty_with_huge_dim": (simple_checkpoint(size=(0, 2**61), stride=(1, 1)), r"declares more than 2\*\*63 bytes"),
        "empty_with_huge_dims": (simple_checkpoint(size=(0, 2**40, 2**40), stride=(1, 1, 1)),
                                 r"shape \[0, 1099511627776, 1099511627776\], which declares more than 2\*\*63"),
        "stride0_huge_view": (simple_checkpoint(size=(2**40,), stride=(0,)),
                              r"views 1,099,511,627,776 elements of a storage of 6 \(a stride-0 view\); ember.load "
                              r"allows at most 67,108,864 .* set EMBER_LOAD_MAX_VIEW_ELEMENTS to allow more"),
        "rank_mismatch": (simple_checkpoint(size=(2, 3), stride=(1,)), r"different lengths"),
        "numel_negative": (simple_checkpoint(numel=-6), r"bad storage size -6"),
        "one_key_two_dtypes": (checkpoint(two_dtypes), r"storage 0 is declared twice"),
        "bool_bytes": (checkpoint(pickle_of(tensor(storage="BoolStorage")), {"0": b"\x00\x01\x02\x00\x00\x00"}),
                       r"bool storage 0 holds bytes other than 0 and 1"),
        "int_requires_grad": (checkpoint(pickle_of(tensor(storage="IntStorage", requires_grad=True))),
                              r"ember\.int32 tensor cannot require grad"),
    }


def _persistent_id_cases():
    body = lambda persistent_id: pickle_of(tensor(persistent_id=persistent_id))
    return {
        "pid_not_tuple": (checkpoint(pickle_of(uni("storage") + b"Q")), r"bad persistent id 'storage'"),
        "pid_short": (checkpoint(body(tup(uni("storage"), glob("torch", "FloatStorage")) + b"Q")),
                      r"bad persistent id"),
        "pid_tag_is_tensor": (checkpoint(body(tup(tensor(), glob("torch", "FloatStorage"), uni("0"), uni("cpu"),
                                                  num(6)) + b"Q")), r"bad persistent id"),
        "pid_tag": (checkpoint(body(tup(uni("module"), glob("torch", "FloatStorage"), uni("0"), uni("cpu"), num(6))
                                    + b"Q")), r"bad persistent id"),
        "key_dotdot": (simple_checkpoint(key="../0"), r"bad storage key '\.\./0'"),
        "key_negative": (simple_checkpoint(key="-1"), r"bad storage key '-1'"),
        "key_missing": (simple_checkpoint(key="7"), r"storage 7 has no record 'data/7'"),
        "storage_class_is_dtype": (checkpoint(body(tup(uni("storage"), glob("torch", "float32"), uni("0"),
                                                       uni("cpu"), num(6)) + b"Q")), r"not a torch storage class"),
        "quint4x2_storage": (simple_checkpoint(storage="QUInt4x2Storage"), r"QUInt4x2Storage has no ember"),
        "unknown_device": (simple_checkpoint(location="tpu:0"), r"cannot load a storage on 'tpu:0'"),
        "malformed_device": (simple_checkpoint(location="cpu::0"), r"bad storage location 'cpu::0'"),
        "storage_outside_tensor": (checkpoint(pickle_of(b"]" + pid() + b"a")), r"."),  # loads: an inert record
    }


def _zip_cases():
    pkl = pickle_of(tensor())
    valid = dict(data=FLOATS6)
    entries = lambda *extra: [{"name": "archive/data.pkl", "data": pkl}, {"name": "archive/version", "data": b"3\n"},
                              {"name": "archive/data/0", **valid}, *extra]
    inner = local_header("archive/data/1", FLOATS6) + FLOATS6
    inner_offset = raw_zip(entries({"name": "archive/data/9", "data": inner})).index(inner)
    overlap = raw_zip(entries({"name": "archive/data/9", "data": inner}),
                      extra_central=[("archive/data/1", FLOATS6, inner_offset)])
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w") as archive:
        info = tarfile.TarInfo("storages")
        archive.addfile(info, io.BytesIO(b""))
    return {
        "dotdot_name": (checkpoint(pkl, extra=[("archive/../evil", b"x")]), r"unsafe zip member name"),
        "absolute_name": (raw_zip(entries({"name": "/etc/passwd", "data": b"x"})), r"unsafe zip member name '/etc"),
        "backslash_name": (raw_zip(entries({"name": "archive\\..\\x", "data": b"x"})), r"unsafe zip member name"),
        "no_top_folder": (raw_zip(entries({"name": "data.pkl", "data": b"x"})), r"not inside a top folder"),
        "two_top_folders": (checkpoint(pkl, extra=[("other/data/1", FLOATS6)]), r"exactly one top folder"),
        "encrypted": (raw_zip(entries({"name": "archive/data/1", "data": FLOATS6, "flags": 1})), r"is encrypted"),
        "torchscript": (checkpoint(pkl, extra=[("archive/constants.pkl", b"x")]), r"TorchScript archive"),
        "unexpected_record": (checkpoint(pkl, extra=[("archive/evil.py", b"x")]), r"unexpected record 'evil\.py'"),
        "no_data_pkl": (raw_zip(entries()[1:]), r"no data\.pkl record"),
        "legacy_tar": (tar.getvalue(), r"legacy \(pre-1\.6"),
        "legacy_pickle": (b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", r"legacy"),
        "deflate_bomb": (checkpoint(pickle_of(tensor(numel=2**25, size=(2**25,))), records={},
                                    extra=[("archive/data/0", bytes(2**27), zipfile.ZIP_DEFLATED)]),
                         r"is compressed \(method 8\)"),
        "overlapping_members": (overlap, r"overlap"),
        "local_name_differs": (raw_zip(entries(), extra_central=[("archive/data/5", FLOATS6, 0)]),
                               r"different name in its local header"),
        "bad_crc": (flip_byte_of(simple_checkpoint(), FLOATS6[4:]), r"member 'data/0' is corrupt: its CRC-32"),
        "bad_crc_in_data_pkl": (raw_zip(entries()[:2] + [{"name": "archive/data/0", "data": FLOATS6, "crc": 1}]),
                                r"CRC-32"),
        "duplicate_member": (_duplicate_member(pkl), r"duplicate zip member 'archive/data/0'"),
        "version_too_new": (checkpoint(pkl, version=b"99\n"), r"unsupported checkpoint version '99'"),
        "version_garbage": (checkpoint(pkl, version=b"three"), r"unsupported checkpoint version 'three'"),
        "no_version": (checkpoint(pkl, version=None), r"no version record"),
        "byteorder_unknown": (checkpoint(pkl, byteorder=b"middle"), r"unknown byteorder 'middle'"),
        "empty_file": (b"", r"the file is empty"),
        "random_bytes": (random.Random(0).randbytes(4096), r"not a zip checkpoint"),
        "pk_only": (b"PK\x05\x06", r"not a zip checkpoint"),
        "prepended_data": (b"#!/bin/sh\nrm -rf ~\n" + simple_checkpoint(), r"unexplained bytes before its first"),
        "truncated_half": (simple_checkpoint()[:300], r"not a zip checkpoint"),
        "truncated_directory": (simple_checkpoint()[:-30], r"not a zip checkpoint"),
    }


def _duplicate_member(pkl):
    out = io.BytesIO(checkpoint(pkl))
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(out, "a") as archive:
        archive.writestr("archive/data/0", bytes(24))
    return out.getvalue()


def _cases():
    cases = dict(_code_execution_cases())
    cases.update(_opcode_cases())
    for name, (pkl, pattern) in {**_container_abuse_cases(), **_memo_and_length_cases()}.items():
        cases[name] = (checkpoint(pkl), pattern)
    cases.update(_size_cases())
    cases.update(_persistent_id_cases())
    cases.update(_zip_cases())
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    files = {name: data for name, (data, _) in CASES.items()}
    files["control_valid"] = simple_checkpoint()
    return folder, load_isolated(files, str(folder))


@pytest.mark.parametrize("name", sorted(set(CASES) - {"storage_outside_tensor"}))
def test_refused_in_capped_subprocess(isolated, name):
    _, results = isolated
    outcome = results[name]
    assert outcome.startswith("CheckpointError: "), outcome
    assert re.search(CASES[name][1], outcome), outcome


def test_harness_can_fail(isolated):
    folder, results = isolated
    assert results["__canary__"] == "MemoryError"  # the address-space cap bites
    assert results["control_valid"] == "ok"
    assert results["storage_outside_tensor"] == "ok"  # an unused storage record is inert data
    assert not os.path.exists(folder / SENTINEL)


def test_same_errors_in_process():
    # Every case also raises CheckpointError here (and nothing else), from a file object.
    for name, (data, pattern) in CASES.items():
        if name == "storage_outside_tensor":
            continue
        with pytest.raises(CheckpointError, match=pattern):
            ember.load(io.BytesIO(data))


def test_every_truncation_is_refused():
    data = checkpoint(pickle_of(b"}" + uni("w") + tensor(size=(2, 3), stride=(3, 1)) + b"s"))
    assert ember.load(io.BytesIO(data))["w"].shape == (2, 3)
    for cut in range(len(data)):
        with pytest.raises(CheckpointError):
            ember.load(io.BytesIO(data[:cut]))


def test_every_data_pkl_prefix_is_refused():
    # Truncation inside data.pkl with a valid zip around it: the unpickler's own bounds checks.
    body = pickle_of(b"}" + uni("w") + tensor(size=(2, 3), stride=(3, 1)) + b"s")
    for cut in range(len(body)):
        with pytest.raises(CheckpointError):
            ember.load(io.BytesIO(checkpoint(body[:cut])))


def test_weights_only_false_is_the_callers_explicit_trust():
    # Since issue 12 ember.load(weights_only=False) unpickles any object, as torch.load does
    # (tests/core/serialization/test_trusted_load.py): the default stays weights-only and
    # points at it with torch's guidance; the hostile files above are refused by default.
    assert ember.load(io.BytesIO(simple_checkpoint()), weights_only=False) is not None


def test_checkpoint_error_is_caught_as_torch_errors_are():
    import pickle

    with pytest.raises(pickle.UnpicklingError):
        ember.load(io.BytesIO(b""))
    with pytest.raises(RuntimeError):
        ember.load(io.BytesIO(b""))


def test_a_small_stride0_view_loads_as_torch_saves_it(tmp_path):
    import torch

    torch.save({"w": torch.arange(3.0).expand(1000, 3)}, tmp_path / "expanded.pt")
    loaded = ember.load(tmp_path / "expanded.pt")["w"]
    assert loaded.shape == (1000, 3) and loaded.stride() == (0, 1)
    assert loaded.sum().item() == torch.arange(3.0).expand(1000, 3).sum().item()


def test_the_view_limit_can_be_raised(monkeypatch):
    data = simple_checkpoint(size=(2**27,), stride=(0,))
    with pytest.raises(CheckpointError, match="views 134,217,728 elements"):
        ember.load(io.BytesIO(data))
    monkeypatch.setenv("EMBER_LOAD_MAX_VIEW_ELEMENTS", str(2**27))
    assert ember.load(io.BytesIO(data)).shape == (2**27,)
