"""Tests for ember/zoo/registry.py and factory.py: list_models, model_info, create_model."""

import types

import numpy as np
import pytest

import ember
from ember.plugins import hookimpl
from ember.zoo import tasks


def tiny_net(num_classes=3, in_channels=2, width=4):
    return ember.nn.Sequential(ember.nn.Flatten(), ember.nn.Linear(in_channels * 4, width),
                               ember.nn.Linear(width, num_classes))


class EchoTask(tasks.Task):
    name = "echo"
    metric = "echo"


@pytest.fixture
def zoo_plugin():
    """An in-process plugin registering two models; unregistered afterwards."""
    plugin = types.ModuleType("zoo_test_models")

    def ember_register_models(register):
        register(tiny_net, name="tiny_net2", task="classification", family="tiny", input_size=[2, 2, 2],
                 num_classes=3, num_params=2 * 4 * 4 + 4 + 4 * 3 + 3, weights=("tiny_net2-test.pt",))
        register(tiny_net, name="tiny_net10", task=EchoTask(), family="tiny")

    plugin.ember_register_models = hookimpl(ember_register_models)
    name = ember.plugins.register(plugin)
    yield plugin
    ember.plugins.unregister(name=name)


def test_list_models_filters_with_fnmatch_in_natural_order(zoo_plugin):
    assert ember.zoo.list_models("tiny_net*") == ["tiny_net2", "tiny_net10"]
    assert ember.zoo.list_models("tiny_net1?") == ["tiny_net10"]
    assert ember.zoo.list_models("nothing*") == []


def test_model_info_holds_what_was_registered(zoo_plugin):
    info = ember.zoo.model_info("tiny_net2")
    assert info.name == "tiny_net2" and info.builder is tiny_net and info.plugin == "zoo_test_models"
    assert info.task == "classification" and info.family == "tiny"
    assert info.input_size == (2, 2, 2) and info.weights == ("tiny_net2-test.pt",)
    assert info.num_params == sum(p.numel() for p in tiny_net().parameters())
    assert info.as_dict()["builder"].endswith("tiny_net")
    assert isinstance(ember.zoo.get_task("tiny_net2"), tasks.ClassificationTask)


def test_a_family_task_object_is_used_and_named(zoo_plugin):
    info = ember.zoo.model_info("tiny_net10")
    assert info.task == "echo"
    assert isinstance(ember.zoo.get_task("tiny_net10"), EchoTask)


def test_unknown_model_names_the_close_ones(zoo_plugin):
    with pytest.raises(KeyError, match="did you mean: tiny_net10"):
        ember.zoo.model_info("tiny_net1")
    with pytest.raises(KeyError, match="no model named 'zzz'"):
        ember.zoo.create_model("zzz")


def test_unknown_registration_keyword_is_an_error():
    plugin = types.ModuleType("zoo_test_typo")
    plugin.ember_register_models = hookimpl(lambda register: register(tiny_net, name="typo_net",
                                                                      task="classification", num_clases=3))
    name = ember.plugins.register(plugin)
    try:
        with pytest.raises(TypeError, match="unknown keyword.*num_clases"):
            ember.zoo.model_info("typo_net")
    finally:
        ember.plugins.unregister(name=name)


def test_create_model_passes_overrides(zoo_plugin):
    model = ember.zoo.create_model("tiny_net2", num_classes=7)
    assert model(ember.zeros(5, 2, 2, 2)).shape == (5, 7)


def test_pretrained_path_loads_an_ember_checkpoint(zoo_plugin, tmp_path):
    source = ember.zoo.create_model("tiny_net2")
    ember.save(source.state_dict(), tmp_path / "w.pt")
    loaded = ember.zoo.create_model("tiny_net2", pretrained=tmp_path / "w.pt")
    for (name, a), (_, b) in zip(source.state_dict().items(), loaded.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)


def test_pretrained_path_loads_a_torch_checkpoint_with_module_prefix(zoo_plugin, tmp_path):
    import torch

    reference = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(8, 4), torch.nn.Linear(4, 3))
    torch.save({"state_dict": {f"module.{k}": v for k, v in reference.state_dict().items()}}, tmp_path / "t.pth")
    model = ember.zoo.create_model("tiny_net2", pretrained=str(tmp_path / "t.pth"))
    x = np.random.default_rng(0).standard_normal((3, 2, 2, 2)).astype(np.float32)
    np.testing.assert_allclose(model(ember.from_numpy(x)).detach().numpy(),
                               reference(torch.from_numpy(x)).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_a_training_checkpoint_rebuilds_with_its_recorded_overrides(zoo_plugin, tmp_path):
    source = ember.zoo.create_model("tiny_net2", num_classes=5)
    ember.save({"model": source.state_dict(), "model_overrides": {"num_classes": 5}, "epoch": 1},
               tmp_path / "c.pt")
    model = ember.zoo.create_model("tiny_net2", pretrained=tmp_path / "c.pt")
    assert model(ember.zeros(1, 2, 2, 2)).shape == (1, 5)


def test_pretrained_true_finds_the_named_file_in_ember_home(zoo_plugin, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_HOME", str(tmp_path / "home"))
    expected = tmp_path / "home" / "weights" / "tiny_net2-test.pt"
    with pytest.raises(FileNotFoundError, match=str(expected)):
        ember.zoo.create_model("tiny_net2", pretrained=True)
    expected.parent.mkdir(parents=True)
    ember.save(ember.zoo.create_model("tiny_net2").state_dict(), expected)
    assert isinstance(ember.zoo.create_model("tiny_net2", pretrained=True), ember.nn.Module)


def test_pretrained_true_without_known_weights_says_so(zoo_plugin):
    with pytest.raises(FileNotFoundError, match="no known weight files"):
        ember.zoo.create_model("tiny_net10", pretrained=True)


def test_ember_home_defaults_under_the_user_cache_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("EMBER_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert ember.zoo.ember_home() == tmp_path / "ember"
    assert ember.zoo.weights_dir() == tmp_path / "ember" / "weights"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert str(ember.zoo.ember_home()).endswith("/.cache/ember")


def test_sample_specs_parse():
    assert tasks.parse_sample_spec("digits:0-2,7") == ("digits", [0, 1, 2, 7])
    with pytest.raises(ValueError, match="digits:0-4"):
        tasks.parse_sample_spec("digits:a")


def test_every_measured_figure_comes_from_the_default_train_command():
    """A figure in ``model_info(...).measured`` is what ``ember train NAME`` (the model's
    default dataset and recipe, one thread) printed: the command is recorded, names no
    option that changes the run, and the metric is the task's headline or one it reports."""
    measured = [(name, entry) for name in ember.zoo.list_models() for entry in ember.zoo.model_info(name).measured]
    assert measured, "the zoo records no measured figure at all"
    for name, entry in measured:
        info = ember.zoo.model_info(name)
        assert entry["command"] == f"ember train {name} --threads 1", (name, entry)
        assert entry["data"].startswith(info.default_dataset), (name, entry)
        assert {"metric", "value", "cpu_seconds"} <= set(entry) and "recipe" not in entry, (name, entry)
        if "epoch" in entry:  # the best checkpoint's epoch, and the last one's figure
            assert 1 <= entry["epoch"] <= info.recipe["epochs"] and "last" in entry, (name, entry)
