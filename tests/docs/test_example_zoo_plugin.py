"""The model-plugin walkthrough of docs/chapters/11-plugins.md, under pytest: the example
distribution in docs/_examples/ember-example-zoo registers a model and its Task through
``ember_register_models``, and the generic ``ember train/eval/predict`` loop runs it.

The Sphinx doctest builder runs the chapter's own example (``tox -e docs``); this test
keeps the example honest where Sphinx is not installed, and checks the packaging."""

import importlib
import math
import pathlib
import sys
import tomllib

import pytest

import ember
from ember.trainer import training

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "_examples" / "ember-example-zoo"


@pytest.fixture
def plugin(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    module = importlib.import_module("ember_example_zoo")
    name = ember.plugins.register(module)
    yield module
    ember.plugins.unregister(name=name)
    sys.modules.pop("ember_example_zoo", None)


def test_the_entry_point_names_the_module_with_the_hook():
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())
    module_name = project["project"]["entry-points"]["ember"]["example-zoo"]
    source = (EXAMPLE / "src" / module_name / "__init__.py").read_text()
    assert "@hookimpl\ndef ember_register_models(register):" in source


def test_registered_facts_match_the_built_model(plugin):
    info = ember.zoo.model_info("tiny_sine_mlp")
    assert (info.task, info.plugin, info.default_dataset) == ("sine-regression", "ember_example_zoo", "sine")
    model = ember.zoo.create_model("tiny_sine_mlp")
    assert sum(p.numel() for p in model.parameters()) == info.num_params
    assert isinstance(ember.zoo.get_task("tiny_sine_mlp"), plugin.SineRegressionTask)


def test_train_eval_predict_through_the_generic_loop(plugin, tmp_path):
    metrics = training.train("tiny_sine_mlp", "sine", tmp_path, progress=False, log=lambda line: None, epochs=5)
    assert (tmp_path / "checkpoint.pt").is_file() and (tmp_path / "metrics.json").is_file()
    assert len(metrics["epochs"]) == 5
    assert metrics["epochs"][-1]["train_loss"] < metrics["epochs"][0]["train_loss"]
    reloaded = training.evaluate("tiny_sine_mlp", tmp_path / "checkpoint.pt", "sine")
    assert reloaded["r2"] == pytest.approx(metrics["final"]["r2"], abs=1e-6)
    (line,) = training.predict("tiny_sine_mlp", tmp_path / "checkpoint.pt", "1.5")
    assert line.startswith("x=1.5: model ") and line.endswith(f"sin(x) {math.sin(1.5):.3f}")


def test_r2_is_the_coefficient_of_determination(plugin):
    # The task's streaming R^2 against the two-pass textbook formula on the same data.
    task = ember.zoo.get_task("tiny_sine_mlp")
    model = ember.zoo.create_model("tiny_sine_mlp")
    _, val = task.datasets("sine", seed=3)
    result = task.evaluate(model, task.loader(val, batch_size=7, train=False))
    x, y = val.tensors
    with ember.no_grad():
        residual = ((model(x) - y) ** 2).sum().item()
    total = ((y - y.mean()) ** 2).sum().item()
    assert result["r2"] == pytest.approx(1 - residual / total, rel=1e-5)


def test_the_task_refuses_other_data(plugin):
    with pytest.raises(ValueError, match="'sine'"):
        ember.zoo.get_task("tiny_sine_mlp").datasets("digits")
