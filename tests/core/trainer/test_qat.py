"""Tests for ember/trainer/qat.py: validating a QAT-prepared model leaves its observers alone."""

import numpy as np

import ember
from ember.trainer.qat import QatTask
from ember.zoo import get_task
from ember.zoo.quantizable import prepare_qat_resnet


def test_qat_validation_leaves_the_observers_as_training_left_them():
    ember.manual_seed(0)
    model = prepare_qat_resnet(ember.zoo.create_model("resnet8_cifar", num_classes=10, in_channels=1))
    model(ember.randn(4, 1, 8, 8))  # a training step's forward: observers see data
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    task = QatTask(get_task("resnet8_cifar"))
    task.evaluate(model, [(ember.randn(8, 1, 8, 8) * 5, ember.zeros(8, dtype=ember.int64))])
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key])
    assert all(int(m.observer_enabled[0]) == 1 for m in model.modules() if type(m).__name__ == "FakeQuantize")
    assert task.metric == "accuracy"  # everything else is the wrapped task's
