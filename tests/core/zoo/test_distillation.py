"""Tests for ember/zoo/distillation.py: a teacher checkpoint guiding a smaller student."""

import pytest

import ember
from ember.zoo.distillation import distill
from ember.zoo.errors import ZooError


@pytest.fixture
def teacher(tmp_path):
    ember.manual_seed(0)
    overrides = {"num_classes": 10, "in_channels": 1}
    model = ember.zoo.create_model("resnet8_cifar", **overrides)
    path = tmp_path / "teacher.pt"
    ember.save({"model_name": "resnet8_cifar", "model": model.state_dict(), "model_overrides": overrides,
                "data": {"name": "digits"}}, path)
    return path


def run(teacher_name, weights, **kwargs):
    return distill(teacher_name, weights, "resnet8_cifar", "digits", student_overrides={"width": 4},
                   fraction=0.05, epochs=1, log=lambda line: None, **kwargs)


def test_with_alpha_zero_the_teacher_changes_nothing(teacher):
    """alpha = 0 leaves only the label loss: the same student, batches and result as training alone."""
    taught, alone = run("resnet8_cifar", teacher, alpha=0.0), run(None, None)
    assert taught == alone


def test_the_teacher_changes_the_student_and_a_checkpoint_is_written(teacher, tmp_path):
    taught, alone = run("resnet8_cifar", teacher, alpha=0.9, out=tmp_path / "s"), run(None, None)
    assert taught["loss"] != alone["loss"]
    student = ember.zoo.create_model("resnet8_cifar", pretrained=tmp_path / "s" / "student.pt")
    assert student.fc.in_features == 16  # width 4: stages 4, 8, 16


def test_a_teacher_trained_on_other_data_is_refused(tmp_path):
    path = tmp_path / "teacher.pt"
    overrides = {"num_classes": 10, "in_channels": 1}
    ember.save({"model_name": "resnet8_cifar", "model_overrides": overrides,
                "model": ember.zoo.create_model("resnet8_cifar", **overrides).state_dict(),
                "data": {"name": "mnist"}}, path)
    with pytest.raises(ZooError, match="trained on 'mnist'"):
        run("resnet8_cifar", path)


def test_ember_compress_distills_then_quantizes(teacher, tmp_path, capsys):
    from ember.cli import main

    status = main(["compress", "resnet8_cifar", "--data", "digits", "--distill-from", "resnet8_cifar",
                   "--teacher-weights", str(teacher), "--student-overrides", '{"width": 4}', "--quantize", "dynamic",
                   "--finetune-epochs", "1", "--out", str(tmp_path / "c"), "--threads", "1"])
    assert status == 0
    table = capsys.readouterr().out
    before, after = [line.split() for line in table.splitlines() if line.startswith(("before", "after"))]
    assert int(after[1].replace(",", "")) < int(before[1].replace(",", "")) / 10  # a 16x narrower student
    student = ember.zoo.create_model("resnet8_cifar", pretrained=tmp_path / "c" / "compressed.pt")
    assert type(student.fc).__module__.startswith("ember_quantization")
