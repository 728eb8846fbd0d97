"""Tests for ember/trainer/distillation.py: a teacher checkpoint guiding a smaller student through
the training loop (``ember train --distill-from``), on the digits data."""

import numpy as np
import pytest

import ember
from ember.cli import main
from ember.trainer.compression import distill
from ember.zoo.errors import ZooError


def write_teacher(path, data="digits", num_classes=10):
    ember.manual_seed(0)
    overrides = {"num_classes": num_classes, "in_channels": 1}
    model = ember.zoo.create_model("resnet8_cifar", **overrides)
    ember.save({"model_name": "resnet8_cifar", "model": model.state_dict(), "model_overrides": overrides,
                "data": {"name": data}}, path)
    return path


@pytest.fixture
def teacher(tmp_path):
    return write_teacher(tmp_path / "teacher.pt")


def run(teacher_name, weights, out, **kwargs):
    options = {"student_overrides": {"width": 4}, "fraction": 0.05, "epochs": 1, "log": lambda line: None, **kwargs}
    return distill(teacher_name, weights, "resnet8_cifar", "digits", out, **options)


def weights_of(path):
    return {k: v.numpy() for k, v in ember.load(path)["model"].items()}


def test_with_alpha_zero_the_teacher_changes_nothing(teacher, tmp_path):
    """alpha = 0 leaves only the label loss: the same student, batches and result as training alone."""
    taught = run("resnet8_cifar", teacher, tmp_path / "taught", alpha=0.0)
    alone = run(None, None, tmp_path / "alone")
    assert taught["final"] == alone["final"]
    for key, value in weights_of(tmp_path / "taught" / "best.pt").items():
        np.testing.assert_array_equal(value, weights_of(tmp_path / "alone" / "best.pt")[key])


def test_the_teacher_changes_the_student_and_the_run_writes_zoo_checkpoints(teacher, tmp_path):
    taught = run("resnet8_cifar", teacher, tmp_path / "s", alpha=0.9)
    alone = run(None, None, tmp_path / "alone")
    assert taught["final"]["loss"] != alone["final"]["loss"]
    assert taught["config"]["distill_from"] == "resnet8_cifar" and taught["config"]["temperature"] == 4.0
    student = ember.zoo.create_model("resnet8_cifar", pretrained=tmp_path / "s" / "best.pt")
    assert student.fc.in_features == 16  # width 4: stages 4, 8, 16
    assert (tmp_path / "s" / "checkpoint.pt").exists() and (tmp_path / "s" / "metrics.json").exists()


def test_a_resumed_distillation_ends_where_an_uninterrupted_one_does(teacher, tmp_path):
    from ember.trainer import training

    def interrupt_in_epoch_2(line):  # logged before epoch 2's checkpoint is written: epoch 1's stays
        if line.startswith("epoch 2/2"):
            raise KeyboardInterrupt

    whole = run("resnet8_cifar", teacher, tmp_path / "whole", epochs=2)
    with pytest.raises(KeyboardInterrupt):
        run("resnet8_cifar", teacher, tmp_path / "cut", epochs=2, log=interrupt_in_epoch_2)
    assert ember.load(tmp_path / "cut" / "checkpoint.pt")["epoch"] == 1
    resumed = training.train("resnet8_cifar", "digits", tmp_path / "cut", resume=tmp_path / "cut" / "checkpoint.pt",
                             progress=False, log=lambda line: None)  # the teacher, T and alpha come from the config
    assert resumed["config"]["distill_from"] == "resnet8_cifar"
    assert resumed["final"] == whole["final"]
    for key, value in weights_of(tmp_path / "whole" / "checkpoint.pt").items():
        np.testing.assert_array_equal(value, weights_of(tmp_path / "cut" / "checkpoint.pt")[key])


def test_ember_train_distills_end_to_end_and_eval_reads_the_student(teacher, tmp_path, capsys):
    out = tmp_path / "student"
    status = main(["train", "resnet8_cifar", "--data", "digits", "--distill-from", "resnet8_cifar",
                   "--teacher-weights", str(teacher), "--temperature", "3", "--alpha", "0.7", "--model-overrides",
                   '{"width": 4}', "--train-fraction", "0.05", "--epochs", "1", "--out", str(out), "--no-progress",
                   "--threads", "1"])
    assert status == 0
    printed = capsys.readouterr().out
    assert "distilled from resnet8_cifar" in printed and "temperature 3.0, alpha 0.7" in printed
    assert main(["eval", "resnet8_cifar", "--weights", str(out / "best.pt"), "--threads", "1"]) == 0
    assert "accuracy" in capsys.readouterr().out


@pytest.mark.parametrize("arguments, message", [
    (["--teacher-weights", "t.pt"], "--teacher-weights only applies with --distill-from TEACHER"),
    (["--distill-from", "resnet8_cifar"], "--distill-from needs --teacher-weights CKPT"),
    (["--distill-from", "resnet8_cifar", "--teacher-weights", "{teacher}", "--alpha", "1.5"], "--alpha must be in"),
    (["--distill-from", "resnet8_cifar", "--teacher-weights", "{teacher}", "--temperature", "0"],
     "--temperature must be positive"),
    (["--distill-from", "resnet8_cifar", "--teacher-weights", "{mnist}"], "the teacher was trained on 'mnist'"),
    (["--distill-from", "resnet8_cifar", "--teacher-weights", "{five}"], "teacher 'resnet8_cifar' gives logits"),
    (["--model-overrides", "[4]"], "--model-overrides takes a JSON object"),
])
def test_a_mistake_is_one_line_naming_it(arguments, message, teacher, tmp_path, capsys):
    files = {"teacher": teacher, "mnist": write_teacher(tmp_path / "mnist.pt", data="mnist"),
             "five": write_teacher(tmp_path / "five.pt", num_classes=5)}
    arguments = [a.format(**files) for a in arguments]
    status = main(["train", "resnet8_cifar", "--data", "digits", "--epochs", "1", "--out", str(tmp_path / "r"),
                   "--no-progress", "--threads", "1", *arguments])
    err = capsys.readouterr().err
    assert status != 0 and message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("ember train")]) == 1
    assert not (tmp_path / "r").exists()


def test_ember_compress_distills_then_quantizes(teacher, tmp_path, capsys):
    status = main(["compress", "resnet8_cifar", "--data", "digits", "--distill-from", "resnet8_cifar",
                   "--teacher-weights", str(teacher), "--student-overrides", '{"width": 4}', "--quantize", "dynamic",
                   "--finetune-epochs", "1", "--out", str(tmp_path / "c"), "--threads", "1"])
    assert status == 0
    table = capsys.readouterr().out
    before, after = [line.split() for line in table.splitlines() if line.startswith(("before", "after"))]
    assert int(after[1].replace(",", "")) < int(before[1].replace(",", "")) / 10  # a 16x narrower student
    assert (tmp_path / "c" / "student" / "checkpoint.pt").exists()  # trained by the loop
    student = ember.zoo.create_model("resnet8_cifar", pretrained=tmp_path / "c" / "compressed.pt")
    assert type(student.fc).__module__.startswith("ember_quantization")


def test_distillation_needs_classifiers(tmp_path):
    from ember.trainer.distillation import distilling
    from ember.zoo import get_task

    with pytest.raises(ZooError, match="distillation needs two classifiers"):
        distilling(get_task("transformer_seq2seq_tiny"), {"distill_from": "resnet8_cifar", "teacher_weights": "t.pt"},
                   "digits")
