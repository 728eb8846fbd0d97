"""Embedded datasets, ImageFolder, the IDX reader, and how ``ember.data`` finds names."""

import gzip
import os
import subprocess
import sys
import types

import numpy as np
import pytest
from PIL import Image

import ember
from ember.data import DataLoader, ImageFolder, load_dataset, read_idx
from ember.data.datasets import ShapesDetect


def test_digits_is_the_shipped_uci_set():
    all_ = load_dataset("digits", split="all")
    assert len(all_) == 1797 and all_.data.shape == (1797, 1, 8, 8)
    assert all_.data.min() == 0.0 and all_.data.max() == 1.0
    assert np.bincount(all_.targets).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    train, test = load_dataset("digits", seed=0), load_dataset("digits", split="test", seed=0)
    assert (len(train), len(test)) == (1438, 359)
    image, label = train[0]
    assert tuple(image.shape) == (1, 8, 8) and image.dtype == ember.float32 and isinstance(label, int)
    assert np.array_equal(load_dataset("digits", seed=0).targets, train.targets)
    assert not np.array_equal(load_dataset("digits", seed=1).targets, train.targets)
    readme = os.path.join(os.path.dirname(sys.modules["ember_data.datasets.digits"].__file__), "data", "README.md")
    assert "CC BY 4.0" in open(readme).read()


def test_shapes_classification():
    data = load_dataset("shapes", split="train", seed=0, num_samples=60)
    image, label = data[5]
    assert tuple(image.shape) == (3, 32, 32) and image.dtype == ember.float32 and label in (0, 1, 2)
    labels = [data[i][1] for i in range(60)]
    assert set(labels) == {0, 1, 2}
    again = load_dataset("shapes", split="train", seed=0, num_samples=60)
    assert np.array_equal(again[5][0].numpy(), image.numpy())
    other = load_dataset("shapes", split="test", seed=0, num_samples=60)
    assert not np.array_equal(other[5][0].numpy(), image.numpy())
    pil, _ = data.draw(5)
    assert isinstance(pil, Image.Image) and pil.size == (32, 32)
    # the shape is much brighter than the noise, and where the class says
    bright = (np.asarray(pil).max(axis=2) >= 96)
    assert 0.05 < bright.mean() < 0.8
    with pytest.raises(IndexError):
        data[60]


def test_shapes_detect_boxes_cover_the_drawn_pixels():
    data = ShapesDetect(seed=3, num_samples=20)
    for i in range(20):
        pil, boxes, labels = data.draw(i)
        assert 1 <= len(boxes) <= 4 and boxes.shape == (len(labels), 4) and set(labels) <= {0, 1, 2}
        bright = np.asarray(pil).max(axis=2) >= 96
        covered = np.zeros_like(bright)
        for x0, y0, x1, y1 in boxes.astype(int):
            assert 0 <= x0 < x1 <= 64 and 0 <= y0 < y1 <= 64 and 8 <= x1 - x0 <= 22
            assert bright[y0:y1, x0:x1].any(axis=0).all() and bright[y0:y1, x0:x1].any(axis=1).all()  # tight
            covered[y0:y1, x0:x1] = True
        assert not (bright & ~covered).any()
    images, targets = next(iter(DataLoader(data, batch_size=4, collate_fn=ShapesDetect.collate_fn)))
    assert tuple(images.shape) == (4, 3, 64, 64) and len(targets) == 4
    assert targets[0]["boxes"].dtype == ember.float32 and targets[0]["labels"].dtype == ember.int64
    assert np.array_equal(ShapesDetect(seed=3, num_samples=20).draw(7)[1], data.draw(7)[1])


@pytest.mark.parametrize("task", ["copy", "reverse", "sort", "add"])
def test_sequence_tasks(task):
    data = load_dataset(task, split="train", seed=0)
    assert len(data) == 10000
    for i in range(50):
        source, target = (t.numpy() for t in data[i])
        if task == "copy":
            assert np.array_equal(source, target)
        elif task == "reverse":
            assert np.array_equal(source[::-1], target)
        elif task == "sort":
            assert np.array_equal(np.sort(source), target)
        else:
            a, b = int("".join(map(str, source[:2]))), int("".join(map(str, source[2:])))
            assert int("".join(map(str, target[::-1]))) == a + b and len(target) == 3
    assert np.array_equal(load_dataset(task, seed=0).source, data.source)
    assert not np.array_equal(load_dataset(task, split="test", seed=0).source[:100], data.source[:100])


def test_pydoc_text():
    from pydoc_data.topics import topics

    train, test = load_dataset("pydoc-text"), load_dataset("pydoc-text", split="test")
    total = sum(len(v) for v in topics.values()) + 2 * (len(topics) - 1)
    assert len(train.ids) + len(test.ids) == total and train.vocab == test.vocab
    x, y = train[100]
    assert tuple(x.shape) == (128,) and np.array_equal(x.numpy()[1:], y.numpy()[:-1])
    assert train.decode(train.encode("def f():")) == "def f():"
    first_key = sorted(topics)[0]
    assert train.decode(train.ids[:50]) == topics[first_key][:50]


def test_registry_lists_and_builds_datasets_by_name():
    names = [name for name, _, _ in ember.data.list_datasets()]
    assert {"digits", "shapes", "shapes-detect", "copy", "reverse", "sort", "add", "pydoc-text"} <= set(names)
    assert ember.data.datasets.shapes_detect is ShapesDetect
    from ember.data.datasets import Digits

    assert isinstance(ember.data.datasets.digits(split="test"), Digits)
    with pytest.raises(KeyError, match="no dataset named 'nope'"):
        load_dataset("nope")
    with pytest.raises(AttributeError):
        ember.data.datasets.nope


def test_third_party_sampler_and_dataset_register_through_the_hook():
    from ember.plugins import hookimpl

    class EveryOther(ember.data.Sampler):
        def __init__(self, data):
            self.data = data

        def __iter__(self):
            return iter(range(0, len(self.data), 2))

    def build(split="train", seed=0):
        return ember.data.TensorDataset(ember.arange(6) + seed)

    def ember_register_data(register):
        register(EveryOther, kind="sampler")
        register(build, name="six", kind="dataset", task="toy", description="six numbers")

    plugin = types.ModuleType("test_data_plugin")
    plugin.ember_register_data = hookimpl(ember_register_data)
    ember.plugins.register(plugin, name="test-data-plugin")
    try:
        assert ember.data.EveryOther is EveryOther
        dataset = load_dataset("six", seed=10)
        loader = DataLoader(dataset, sampler=ember.data.EveryOther(dataset), batch_size=2)
        assert [b[0].tolist() for b in loader] == [[10, 12], [14]]
        assert ("six", "toy", "six numbers") in ember.data.list_datasets()
        assert ember.data.datasets.six is build
    finally:
        ember.plugins.unregister(name="test-data-plugin")


def test_missing_plugin_names_the_distribution():
    # ember.data's names are all ember-data's: a missing one is an ImportError naming the
    # distribution, so `from ember.utils.data import X` keeps the message (NOTE [ from
    # ember.utils.data import DataLoader ]); a name nobody provides stays an AttributeError.
    code = ("import ember\n"
            "try:\n    ember.data.DataLoader\nexcept ImportError as e:\n    print(e)\n"
            "try:\n    ember.data.NotAThing\nexcept AttributeError as e:\n    print(e)\n"
            "try:\n    ember.utils.data.TensorDataset\nexcept ImportError as e:\n    print(e)\n")
    env = dict(os.environ, EMBER_DISABLE_PLUGINS="data")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    lines = out.stdout.splitlines()
    assert "'DataLoader' is provided by the plugin 'data' (distribution ember-data), which is disabled" in lines[0]
    assert lines[1] == "module 'ember.data' has no attribute 'NotAThing'"
    assert "'TensorDataset' is provided by the plugin 'data' (distribution ember-data)" in lines[2]


def test_image_folder(tmp_path):
    for cls, colours in {"cat": [(255, 0, 0), (200, 0, 0)], "dog": [(0, 0, 255)]}.items():
        (tmp_path / cls / "nested").mkdir(parents=True)
        for i, colour in enumerate(colours):
            Image.new("RGB", (4, 3), colour).save(tmp_path / cls / f"{i}.PNG")
        Image.new("L", (4, 3), 9).save(tmp_path / cls / "nested" / "grey.bmp")
        (tmp_path / cls / "notes.txt").write_text("not an image")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes empty"):
        ImageFolder(tmp_path)
    folder = ImageFolder(tmp_path, allow_empty=True)
    assert folder.classes == ["cat", "dog", "empty"] and folder.class_to_idx == {"cat": 0, "dog": 1, "empty": 2}
    assert [os.path.relpath(p, tmp_path) for p, _ in folder.samples] == \
        ["cat/0.PNG", "cat/1.PNG", "cat/nested/grey.bmp", "dog/0.PNG", "dog/nested/grey.bmp"]
    assert folder.targets == [0, 0, 0, 1, 1]
    image, label = folder[3]
    assert image.mode == "RGB" and image.getpixel((0, 0)) == (0, 0, 255) and label == 1
    only_png = ImageFolder(tmp_path, is_valid_file=lambda p: p.endswith(".PNG"), allow_empty=True,
                           transform=ember.data.transforms.ToTensor(), target_transform=lambda t: t * 10)
    assert len(only_png) == 3
    x, y = only_png[0]
    assert tuple(x.shape) == (3, 3, 4) and y == 0 and abs(x[0, 0, 0].item() - 1.0) < 1e-7


def test_read_idx(tmp_path):
    images = np.random.default_rng(0).integers(0, 256, size=(5, 4, 3), dtype=np.uint8)
    header = bytes([0, 0, 0x08, 3]) + np.array(images.shape, dtype=">u4").tobytes()
    with gzip.open(tmp_path / "images-idx3-ubyte.gz", "wb") as f:
        f.write(header + images.tobytes())
    np.testing.assert_array_equal(read_idx(tmp_path / "images-idx3-ubyte.gz"), images)
    values = np.array([1.5, -2.0], dtype=">f4")
    (tmp_path / "floats").write_bytes(bytes([0, 0, 0x0D, 1]) + np.array([2], ">u4").tobytes() + values.tobytes())
    out = read_idx(tmp_path / "floats")
    assert out.dtype == np.float32 and out.tolist() == [1.5, -2.0]
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(tmp_path / "bad")
