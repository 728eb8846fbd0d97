"""``ember predict`` on an image file it cannot read, or one too large, ends in one line
and exit status 2, before any pixel is decoded (ember/zoo/images.py, NOTE [ The image
size limit ]), for a classifier and for the detector (which runs at the image's own size).
"""

import io
import subprocess
import sys
import zlib

import pytest
from PIL import Image

import ember
import ember.cli
from ember.zoo.images import MAX_IMAGE_PIXELS
from ember_zoo_yolo.task import DetectionTask

MODELS = {"resnet8_cifar": {"classes": [str(i) for i in range(10)], "input_shape": [3, 32, 32],
                            "model_overrides": {"num_classes": 10}},
          "yolo_nano": {"classes": ["circle", "square", "triangle"], "input_shape": [3, 64, 64]}}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    folder = tmp_path_factory.mktemp("weights")
    paths = {}
    for name, meta in MODELS.items():
        paths[name] = folder / f"{name}.pt"
        ember.save({"model": ember.zoo.create_model(name).state_dict(), "model_name": name, "data": meta},
                   paths[name])
    return paths


def png_bytes(size=(40, 30), mode="RGB"):
    buffer = io.BytesIO()
    Image.new(mode, size, 90).save(buffer, format="PNG")
    return buffer.getvalue()


def jpeg_bytes():
    buffer = io.BytesIO()
    Image.effect_noise((64, 64), 40).convert("RGB").save(buffer, format="JPEG")
    return buffer.getvalue()


def bad_crc(png):
    """``png`` with the checksum of its header chunk flipped (Pillow checks the checksums of
    the chunks it parses; the pixel data's, IDAT's, only in ``verify``)."""
    start = png.index(b"IHDR") - 4
    length = int.from_bytes(png[start:start + 4], "big")
    crc_at = start + 8 + length
    return png[:crc_at] + bytes(b ^ 0xFF for b in png[crc_at:crc_at + 4]) + png[crc_at + 4:]


def declared_png(width, height):
    """A valid header declaring ``width`` x ``height`` one-bit pixels, with a tiny IDAT: a
    decompression bomb's first bytes (Pillow would inflate the rest on load)."""
    def chunk(kind, data):
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([1, 0, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + \
        chunk(b"IEND", b"")


UNREADABLE = {"text.png": lambda: b"this is not an image\n" * 4, "empty.png": lambda: b"",
              "truncated.png": lambda: png_bytes((200, 200))[:60], "truncated.jpg": lambda: jpeg_bytes()[:400],
              "bad_crc.png": lambda: bad_crc(png_bytes()), "header_only.png": lambda: png_bytes()[:33]}


def predict(capsys, checkpoints, model, path):
    status = ember.cli.main(["predict", model, "--weights", str(checkpoints[model]), str(path)])
    _, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if not line.startswith("threads: ")]
    assert status == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("ember predict: ")
    return lines[0]


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_an_unreadable_image_is_one_line_naming_the_file(capsys, checkpoints, tmp_path, model, name):
    path = tmp_path / name
    path.write_bytes(UNREADABLE[name]())
    line = predict(capsys, checkpoints, model, path)
    assert f"cannot read the image {str(path)!r}: " in line


@pytest.mark.parametrize("model", sorted(MODELS))
def test_a_decompression_bomb_is_refused_before_decoding(capsys, checkpoints, tmp_path, model):
    path = tmp_path / "bomb.png"
    path.write_bytes(declared_png(9000, 9000))
    line = predict(capsys, checkpoints, model, path)
    assert f"{str(path)!r} is 9000 x 9000 = 81,000,000 pixels, more than this model's predict accepts" in line


def test_each_task_has_its_own_limit(capsys, checkpoints, tmp_path):
    """3000 x 3000 is within a classifier's limit (it resizes first) and over the detector's."""
    assert DetectionTask.max_image_pixels < 3000 * 3000 <= ember.zoo.get_task("resnet8_cifar").max_image_pixels
    assert ember.zoo.get_task("resnet8_cifar").max_image_pixels == MAX_IMAGE_PIXELS
    path = tmp_path / "large.png"
    path.write_bytes(png_bytes((3000, 3000), mode="1"))
    line = predict(capsys, checkpoints, "yolo_nano", path)
    assert f"more than this model's predict accepts ({DetectionTask.max_image_pixels:,})" in line
    assert ember.cli.main(["predict", "resnet8_cifar", "--weights", str(checkpoints["resnet8_cifar"]), str(path)]) == 0


def test_pillows_own_bomb_error_is_the_same_refusal(capsys, checkpoints, tmp_path):
    """Over twice ``Image.MAX_IMAGE_PIXELS`` Pillow refuses in ``open`` itself."""
    path = tmp_path / "huge.png"
    path.write_bytes(declared_png(20000, 20000))
    line = predict(capsys, checkpoints, "resnet8_cifar", path)
    assert f"{str(path)!r} is too large" in line or "400,000,000 pixels" in line


@pytest.mark.parametrize("model", sorted(MODELS))
def test_a_folder_is_one_line(capsys, checkpoints, tmp_path, model):
    line = predict(capsys, checkpoints, model, tmp_path)
    assert f"{str(tmp_path)!r} is a folder; predict takes an image file or DATASET:INDICES" in line


def test_the_console_script_reports_a_bad_image_in_one_line(checkpoints, tmp_path):
    path = tmp_path / "photo.png"
    path.write_text("not an image")
    result = subprocess.run([sys.executable, "-m", "ember.cli", "predict", "yolo_nano", "--weights",
                             str(checkpoints["yolo_nano"]), str(path)], capture_output=True, text=True, timeout=120)
    lines = [line for line in result.stderr.splitlines() if not line.startswith("threads: ")]
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
