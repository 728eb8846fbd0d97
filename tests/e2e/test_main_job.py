"""The README's main job (tox.ini ``[testenv:main]``): its commands, run through
``ember.cli.main`` exactly as tox runs them, train a zoo ResNet on digits to a high
validation accuracy, save a checkpoint that evaluates to the same accuracy, and predict
on a few samples correctly."""

import configparser
import json
import pathlib
import shlex

import pytest

import ember.cli

REPO = pathlib.Path(__file__).parents[2]


def main_job_commands(root):
    """The ``commands`` of tox.ini's ``[testenv:main]``, with tox's substitutions made
    (``{toxinidir}``, where the run goes, is ``root`` here)."""
    config = configparser.ConfigParser(interpolation=None)
    config.read(REPO / "tox.ini")
    lines = [line.strip() for line in config["testenv:main"]["commands"].splitlines() if line.strip()]
    return [shlex.split(line.replace("{toxinidir}", str(root)).replace("{envtmpdir}", str(root))
                        .replace("{posargs}", "")) for line in lines]


@pytest.mark.slow  # the full run: about 6 s of CPU
def test_the_main_job_trains_evaluates_and_predicts(tmp_path, capsys):
    commands = main_job_commands(tmp_path)
    assert [c[:2] for c in commands] == [["ember", "train"], ["ember", "eval"], ["ember", "predict"]]

    assert ember.cli.main(commands[0][1:]) == 0
    trained = capsys.readouterr()
    run = tmp_path / "runs" / "digits"
    metrics = json.loads((run / "metrics.json").read_text())
    accuracy = metrics["final"]["accuracy"]
    assert accuracy >= 0.97
    assert f"validation accuracy: {accuracy:.4f}" in trained.out
    assert len(metrics["epochs"]) == metrics["config"]["epochs"]
    assert metrics["epochs"][-1]["train_loss"] < metrics["epochs"][0]["train_loss"]
    assert (run / "checkpoint.pt").is_file()

    assert ember.cli.main(commands[1][1:]) == 0
    assert f"accuracy {accuracy:.4f}" in capsys.readouterr().out  # the reloaded checkpoint, same accuracy

    assert ember.cli.main(commands[2][1:]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 8
    correct = 0
    for line in lines:  # "digits[0] (true: 6): 6 1.000, 0 0.000, 4 0.000"
        truth = line.split("(true: ")[1].split(")")[0]
        top = line.split("): ")[1].split(" ")[0]
        correct += truth == top
    assert correct >= 7


def test_the_readme_runs_the_main_job_through_tox():
    readme = (REPO / "README.md").read_text()
    assert "tox -e main" in readme and "resnet8_cifar" in readme


def test_the_readme_states_the_number_of_training_images_the_run_prints():
    import re

    readme = " ".join((REPO / "README.md").read_text().split())
    stated = int(re.search(r"fits it to the ([\d,]+) training images", readme).group(1).replace(",", ""))
    assert stated == len(ember.data.load_dataset("digits", split="train"))
