"""A user's mistakes on the ``ember`` command line end in one line naming the problem
and exit status 2, never a traceback (ember/cli.py ``main``, ember/trainer/commands.py).

Each test drives the real command: ``ember.cli.main(argv)`` in-process, or the console
module in a fresh process where the process matters (exit status, terminal width).
"""

import os
import subprocess
import sys

import pytest

import ember
import ember.cli
from ember.trainer import training


def ember_cli(capsys, *argv):
    """``(status, stdout, stderr lines without the thread line)`` of ``ember ARGV``."""
    status = ember.cli.main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return status, out, [line for line in err.splitlines() if not line.startswith("threads: ")]


def one_line_error(capsys, command, *argv):
    status, _, err = ember_cli(capsys, command, *argv)
    assert status == 2 and len(err) == 1, err
    assert err[0].startswith(f"ember {command}: ")
    return err[0]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A real ``ember train`` run: ResNet-8 on digits, one short epoch."""
    out = tmp_path_factory.mktemp("run")
    training.train("resnet8_cifar", "digits", out, epochs=1, batch_size=256, progress=False, log=lambda line: None)
    return out


@pytest.fixture(scope="module")
def broken_files(run_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("broken")
    good = (run_dir / "checkpoint.pt").read_bytes()
    corrupt = bytearray(good)
    corrupt[len(good) // 2] ^= 0xFF
    files = {"truncated.pt": good[:len(good) // 3], "empty.pt": b"", "garbage.pt": b"not a checkpoint\n" * 8,
             "corrupt.pt": bytes(corrupt)}
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return folder


@pytest.mark.parametrize("name", ["truncated.pt", "empty.pt", "garbage.pt", "corrupt.pt"])
@pytest.mark.parametrize("command", ["eval", "predict"])
def test_a_broken_checkpoint_is_one_line_naming_the_file(capsys, broken_files, name, command):
    path = broken_files / name
    extra = ["digits:0"] if command == "predict" else ["--data", "digits"]
    line = one_line_error(capsys, command, "resnet8_cifar", "--weights", path, *extra)
    assert f"{str(path)!r}: " in line


@pytest.mark.parametrize("argv", [["eval", "resnet8_cifar", "--weights", "{missing}"],
                                  ["predict", "resnet8_cifar", "--weights", "{missing}", "digits:0"],
                                  ["train", "resnet8_cifar", "--resume", "{missing}", "--out", "{out}"]])
def test_a_missing_weights_file_has_one_wording_in_every_command(capsys, tmp_path, argv):
    missing = tmp_path / "nothing.pt"
    argv = [arg.format(missing=missing, out=tmp_path / "run") for arg in argv]
    line = one_line_error(capsys, *argv)
    assert line == f"ember {argv[0]}: no such checkpoint file: {str(missing)!r}"


def test_a_checkpoint_of_another_zoo_model_says_which_it_looks_like(capsys, tmp_path):
    path = tmp_path / "weights.pt"
    ember.save(ember.zoo.create_model("resnet20_cifar", num_classes=10).state_dict(), path)
    line = one_line_error(capsys, "eval", "resnet8_cifar", "--weights", path, "--data", "digits")
    assert f"{str(path)!r} is not a checkpoint of model 'resnet8_cifar'" in line
    assert line.endswith("it looks like a checkpoint of 'resnet20_cifar'")


def test_a_training_checkpoint_of_another_model_is_named(capsys, run_dir):
    line = one_line_error(capsys, "eval", "resnet20_cifar", "--weights", run_dir / "checkpoint.pt")
    assert line.endswith("is a checkpoint of model 'resnet8_cifar', not 'resnet20_cifar'")


def test_predict_refuses_sample_indices_outside_the_split(capsys, run_dir):
    line = one_line_error(capsys, "predict", "resnet8_cifar", "--weights", run_dir / "checkpoint.pt", "digits:5000")
    assert line == ("ember predict: digits:5000 is out of range: the test split of 'digits' has 359 samples "
                    "(digits:0-358)")


def test_a_dataset_whose_images_do_not_fit_the_model(capsys, run_dir):
    line = one_line_error(capsys, "eval", "resnet8_cifar", "--weights", run_dir / "checkpoint.pt", "--data", "shapes")
    assert "dataset 'shapes' does not fit model 'resnet8_cifar'" in line and "channels" in line


def test_a_dataset_of_another_task_does_not_fit(capsys, tmp_path):
    line = one_line_error(capsys, "train", "yolo_nano", "--data", "digits", "--out", tmp_path / "run")
    assert "dataset 'digits' does not fit model 'yolo_nano' (detection task)" in line


def test_a_failed_train_leaves_no_output_folder(capsys, tmp_path):
    out = tmp_path / "new" / "run"
    line = one_line_error(capsys, "train", "resnet8_cifar", "--data", "no_such_data", "--out", out)
    assert "no dataset named 'no_such_data'" in line
    assert list(tmp_path.iterdir()) == []


def test_unknown_model_dataset_and_options(capsys, tmp_path):
    assert "no model named 'resnet8'; did you mean: resnet8_cifar" in one_line_error(capsys, "train", "resnet8")
    line = one_line_error(capsys, "train", "resnet8_cifar", "--optimizer", "nope", "--out", tmp_path / "run")
    assert "unknown optimizer 'nope'" in line


def test_predict_writes_its_pictures_under_the_run_not_the_current_folder(capsys, tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    model = ember.zoo.create_model("yolo_nano")
    ember.save({"model": model.state_dict(), "model_name": "yolo_nano", "model_overrides": {},
                "data": {"name": "shapes-detect", "classes": ["circle", "square", "triangle"]}}, run / "checkpoint.pt")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    status, out, _ = ember_cli(capsys, "predict", "yolo_nano", "--weights", run / "checkpoint.pt", "shapes-detect:0")
    assert status == 0 and list(cwd.iterdir()) == []
    assert [p.suffix for p in (run / "predictions").iterdir()] == [".png"]
    status, out, _ = ember_cli(capsys, "predict", "yolo_nano", "--weights", run / "checkpoint.pt", "shapes-detect:1",
                               "--out", tmp_path / "elsewhere")
    assert status == 0 and [p.suffix for p in (tmp_path / "elsewhere").iterdir()] == [".png"]


def test_the_detector_predicts_on_an_image_file_of_any_size(capsys, tmp_path):
    from PIL import Image

    run = tmp_path / "run"
    run.mkdir()
    ember.save({"model": ember.zoo.create_model("yolo_nano").state_dict(), "model_name": "yolo_nano",
                "data": {"classes": ["circle", "square", "triangle"]}}, run / "checkpoint.pt")
    Image.new("RGB", (150, 100), (40, 40, 40)).save(tmp_path / "photo.png")
    status, out, err = ember_cli(capsys, "predict", "yolo_nano", "--weights", run / "checkpoint.pt",
                                 tmp_path / "photo.png")
    assert status == 0 and err == [] and out.startswith("photo.png: ")
    (picture,) = (run / "predictions").iterdir()
    assert Image.open(picture).size == (600, 400)  # drawn at 4x the image's own size


def test_explain_finds_conv2d_through_its_alias_and_suggests_close_names(capsys):
    status, out, _ = ember_cli(capsys, "explain", "conv2d")
    assert status == 0
    assert out.splitlines()[0] == "aten::conv2d is computed by aten::convolution in ember (as in torch, where it " \
                                  "is a composite)"
    assert out.splitlines()[1].startswith("aten::convolution(")
    status, out, err = ember_cli(capsys, "explain", "convolutoin")
    assert status == 1 and "did you mean: aten::convolution" in err[0]


def run_console(*argv, env=None):
    environment = dict(os.environ, **(env or {}))
    environment.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "ember.cli", *argv], capture_output=True, text=True, timeout=120,
                          env=environment)


def test_version():
    result = run_console("--version")
    assert result.returncode == 0 and result.stdout == f"ember {ember.__version__}\n"


@pytest.mark.parametrize("command", [["models"], ["plugins"]])
def test_listings_fit_100_columns_when_piped(command):
    result = run_console(*command)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) > 5 and max(len(line) for line in lines) <= 100


@pytest.mark.parametrize("columns", [80, 120])
def test_listings_follow_the_terminal_width(capsys, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    for command in ("models", "plugins"):
        status, out, _ = ember_cli(capsys, command)
        assert status == 0 and max(len(line) for line in out.splitlines()) <= columns


def test_a_bug_is_not_disguised_as_a_users_mistake(capsys, monkeypatch, run_dir):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(training, "evaluate", broken)
    with pytest.raises(ZeroDivisionError, match="a bug"):
        ember.cli.main(["eval", "resnet8_cifar", "--weights", str(run_dir / "checkpoint.pt")])


def test_the_model_a_checkpoint_looks_like_is_found_among_every_zoo_model(capsys, tmp_path):
    # wide_resnet101_2 has resnet101's parameter names (only the shapes differ) and is the
    # costliest model to build; every candidate is compared, none skipped for time.
    path = tmp_path / "weights.pt"
    ember.save(ember.zoo.create_model("wide_resnet101_2").state_dict(), path)
    line = one_line_error(capsys, "eval", "resnet8_cifar", "--weights", path, "--data", "digits")
    assert line.endswith("it looks like a checkpoint of 'wide_resnet101_2'")


@pytest.mark.parametrize("name, qualname", [("silu", "activation::silu"), ("batch_norm", "norm::batch_norm"),
                                            ("mse_loss", "loss::mse_loss")])
def test_explain_finds_a_plugins_op_by_its_torch_name(capsys, name, qualname):
    status, out, _ = ember_cli(capsys, "explain", name)
    lines = out.splitlines()
    assert status == 0 and lines[0] == f"{name} is {qualname} in ember, defined by a plugin (torch: aten::{name})"
    assert lines[1].startswith(f"{qualname}(")
    status, out, _ = ember_cli(capsys, "explain", "relu")  # aten's op first, as before
    assert status == 0 and out.startswith("aten::relu(")


def test_the_cli_names_the_python_split_it_calls_validation(capsys, run_dir, tmp_path):
    """digits has no "val" split: ember validates on "test", and says so."""
    status, out, _ = ember_cli(capsys, "eval", "resnet8_cifar", "--weights", run_dir / "checkpoint.pt")
    assert status == 0 and out.startswith("resnet8_cifar on digits, validation (the 'test' split): loss ")
    lines = []
    training.train("resnet8_cifar", "shapes", tmp_path / "shapes", epochs=1, batch_size=256, train_fraction=0.05,
                   progress=False, log=lines.append)
    assert "1,000 validation samples (the 'val' split)" in lines[0]  # shapes has one
