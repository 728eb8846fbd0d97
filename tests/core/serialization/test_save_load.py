"""ember.save -> ember.load round trips: values, dtypes, views, identity, containers, errors."""

import collections
import io

import numpy as np
import pytest

import ember
from ember.serialization import CheckpointError
from ember.serialization.checkpoint import FORMAT_VERSION


def _round_trip(obj, **load_kwargs):
    buffer = io.BytesIO()
    ember.save(obj, buffer)
    buffer.seek(0)
    return ember.load(buffer, **load_kwargs)


@pytest.mark.parametrize("dtype", [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
                                   ember.float16, ember.float32, ember.float64])
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (5,), (2, 3, 4)])
def test_every_dtype_and_shape(dtype, shape):
    values = np.asarray((np.random.default_rng(0).standard_normal(shape) * 50).astype(dtype.np))
    loaded = _round_trip(ember.from_numpy(values))
    assert loaded.dtype is dtype and loaded.shape == shape
    np.testing.assert_array_equal(loaded.numpy(), values)


def test_views_share_after_loading():
    base = ember.arange(24.0).reshape(2, 3, 4)
    views = [base, base.permute(2, 0, 1), base[1, :, 1:3], base[:, ::2, ::3], base[0, 0, 0], base[:1].expand(4, 3, 4)]
    loaded = _round_trip(views)
    for ours, original in zip(loaded, views):
        np.testing.assert_array_equal(ours.numpy(), original.numpy())
        assert ours.stride() == original.stride() and ours.storage_offset() == original.storage_offset()
        assert ours.untyped_storage() == loaded[0].untyped_storage()
    loaded[0].add_(1.0)  # in place on the base: every view sees it
    np.testing.assert_array_equal(loaded[2].numpy(), (base[1, :, 1:3] + 1).numpy())


def test_small_view_saves_its_whole_storage_like_torch():
    base = ember.arange(1000.0)
    view = base[10:12]
    buffer = io.BytesIO()
    ember.save(view, buffer)
    assert len(buffer.getvalue()) > 4000  # torch too writes the storage, not just the view
    loaded = _round_trip(view)
    assert loaded.storage_offset() == 10 and loaded.tolist() == [10.0, 11.0]


def test_identity_and_cycles_are_kept():
    shared = [1, 2]
    t = ember.ones(2)
    obj = {"a": shared, "b": shared, "t1": t, "t2": t}
    cycle = []
    cycle.append(cycle)
    obj["cycle"] = cycle
    loaded = _round_trip(obj)
    assert loaded["a"] is loaded["b"] and loaded["t1"] is loaded["t2"]
    assert loaded["cycle"][0] is loaded["cycle"]


def test_parameters_and_requires_grad():
    p = ember.nn.Parameter(ember.randn(2, 2))
    obj = {"p": p, "frozen": ember.nn.Parameter(ember.ones(1), requires_grad=False),
           "leaf": ember.ones(2, requires_grad=True), "plain": ember.ones(2), "p_view": p[0]}
    loaded = _round_trip(obj)
    assert type(loaded["p"]) is ember.nn.Parameter and loaded["p"].requires_grad
    assert type(loaded["frozen"]) is ember.nn.Parameter and not loaded["frozen"].requires_grad
    assert loaded["leaf"].requires_grad and loaded["leaf"].is_leaf and not loaded["plain"].requires_grad
    assert loaded["p_view"].untyped_storage() == loaded["p"].untyped_storage()
    np.testing.assert_array_equal(loaded["p"].detach().numpy(), p.detach().numpy())


def test_module_state_dict_round_trip():
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.Linear(4, 2))
    state_dict = model.state_dict()
    loaded = _round_trip(state_dict)
    assert type(loaded) is collections.OrderedDict and list(loaded) == list(state_dict)
    assert loaded._metadata == state_dict._metadata
    fresh = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.Linear(4, 2))
    fresh.load_state_dict(loaded)
    x = ember.randn(5, 3)
    model.eval(), fresh.eval()
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())


def test_plain_values():
    obj = {"none": None, "bools": [True, False], "ints": [0, 255, 256, 65535, 65536, -1, 2**31, -(2**31) - 1, 2**200],
           "floats": [0.5, -0.0, float("inf")], "str": "naïve ☃", "bytes": b"\x00\xff", "bytearray": bytearray(b"ab"),
           "tuple": (), "tuple1": (1,), "tuple5": (1, 2, 3, 4, 5), "set": {1, "a"}, "complex": 2 - 1j,
           "dtype": ember.float64, "device": ember.device("cpu"), "size": ember.Size([1, 2]),
           "long_list": list(range(2500)), "long_dict": {i: str(i) for i in range(1500)}}
    loaded = _round_trip(obj)
    assert loaded == obj
    assert type(loaded["size"]) is ember.Size and type(loaded["bytearray"]) is bytearray
    nan = _round_trip(float("nan"))
    assert nan != nan


def test_paths_file_objects_and_non_seekable_streams(tmp_path):
    obj = {"w": ember.arange(3)}
    ember.save(obj, tmp_path / "a.pt")
    ember.save(obj, str(tmp_path / "b.pt"))
    with open(tmp_path / "c.pt", "wb") as f:
        ember.save(obj, f)

    class Stream(io.RawIOBase):  # neither seekable nor tellable
        def __init__(self, data=b""):
            self.data = bytearray(data)

        def readable(self):
            return True

        def writable(self):
            return True

        def write(self, chunk):
            self.data += chunk
            return len(chunk)

        def readinto(self, buffer):
            n = min(len(buffer), len(self.data))
            buffer[:n], self.data = self.data[:n], self.data[n:]
            return n

    stream = Stream()
    ember.save(obj, stream)
    sources = [tmp_path / "a.pt", str(tmp_path / "b.pt"), tmp_path / "c.pt", Stream(stream.data)]
    for source in sources:
        assert ember.load(source)["w"].tolist() == [0, 1, 2]


def test_same_object_gives_the_same_bytes():
    obj = {"w": ember.ones(2, 2), "b": [1, 2]}
    first, second = io.BytesIO(), io.BytesIO()
    ember.save(obj, first)
    ember.save(obj, second)
    assert first.getvalue() == second.getvalue()


def test_version_record():
    import zipfile

    buffer = io.BytesIO()
    ember.save(1, buffer)
    archive = zipfile.ZipFile(buffer)
    assert archive.read("archive/version") == f"{FORMAT_VERSION}\n".encode()
    assert archive.read("archive/byteorder") == b"little"
    assert all(info.compress_type == zipfile.ZIP_STORED for info in archive.infolist())


@pytest.mark.parametrize("obj", [np.float32(1.0), collections.defaultdict(list, a=[1]), frozenset({2})])
def test_other_objects_save_as_torch_does_and_load_only_when_trusted(obj):
    # torch.save writes any picklable object; loading it needs weights_only=False
    # (tests/core/serialization/test_trusted_load.py has the rest).
    buffer = io.BytesIO()
    ember.save({"x": obj}, buffer)
    buffer.seek(0)
    with pytest.raises(CheckpointError, match="Weights only load failed"):
        ember.load(buffer)
    buffer.seek(0)
    assert ember.load(buffer, weights_only=False)["x"] == obj


def test_unpicklable_objects_raise_type_error():
    with pytest.raises(TypeError, match="only importable classes and functions pickle by name"):
        ember.save({"x": lambda: None}, io.BytesIO())


def test_self_containing_tuple_raises():
    holder = []
    cyclic = (holder,)
    holder.append(cyclic)
    with pytest.raises(ValueError, match="tuple that contains itself"):
        ember.save(cyclic, io.BytesIO())


def test_ordered_dict_attributes_other_than_metadata_raise():
    od = collections.OrderedDict(a=1)
    od.extra = 1
    with pytest.raises(TypeError, match="only save the '_metadata' attribute"):
        ember.save(od, io.BytesIO())


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        ember.load(tmp_path / "missing.pt")
