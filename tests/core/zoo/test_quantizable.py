"""Tests for ember/zoo/quantizable.py: the int8 structure of a compressed checkpoint, which
``create_model`` rebuilds with the zoo alone (no trainer), and the plugin it needs."""

import pytest

import ember
from ember.plugins import registry
from ember.zoo.errors import ZooError
from ember.zoo.quantizable import quantizable_resnet, quantization_plugin, quantize_static

OVERRIDES = {"num_classes": 10, "in_channels": 1}


def test_create_model_rebuilds_a_static_int8_checkpoint(tmp_path):
    ember.manual_seed(0)
    model = ember.zoo.create_model("resnet8_cifar", **OVERRIDES)
    inputs = ember.randn(16, 1, 8, 8)
    int8 = quantize_static(model, [(inputs, None)])
    path = tmp_path / "int8.pt"
    ember.save({"model_name": "resnet8_cifar", "model": int8.state_dict(), "model_overrides": OVERRIDES,
                "compression": {"quantize": "static", "classifier": "int8"}}, path)
    loaded = ember.zoo.create_model("resnet8_cifar", pretrained=path).eval()
    assert type(loaded).__name__ == "QuantizableCifarResNet"
    assert type(loaded.fc).__module__.startswith("ember_quantization")
    with ember.no_grad():
        assert ember.equal(loaded(inputs), int8(inputs))


def test_only_the_cifar_resnets_are_rewritten():
    model = ember.nn.Sequential(ember.nn.Linear(4, 4))
    with pytest.raises(ZooError, match="CIFAR ResNets only"):
        quantizable_resnet(model, qconfig=None)


def test_a_missing_quantization_plugin_names_the_distribution_to_install():
    plugin = next(i.name for i in registry.plugin_infos() if i.distribution == "ember-quantization")
    with registry.without(plugin), pytest.raises(ZooError) as error:
        quantization_plugin()
    assert "ember-quantization" in str(error.value) and "pip install" in str(error.value)
