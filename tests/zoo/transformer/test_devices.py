"""The transformer zoo models build their own tensors (positions, causal masks, the BOS
column) on the device of their input, so they run on any backend: shown here on the
test-only ``fake`` device (tests/core/plugins/fake_device.py), which stands in for
``cuda`` on a machine without a GPU (GPT used to build its positions on the CPU)."""

import fake_device
import numpy as np
import pytest

import ember


@pytest.fixture
def fake(use_plugin):
    use_plugin(fake_device)
    return ember.device("fake")


def test_gpt_runs_on_the_device_of_its_input(fake):
    ember.manual_seed(0)
    model = ember.zoo.create_model("gpt_nano").eval()
    idx = ember.tensor([[1, 2, 3, 4]])
    expected = model(idx)
    got = model.to(fake)(idx.to(fake))
    assert got.device == fake
    np.testing.assert_allclose(got.cpu().detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_seq2seq_decodes_on_the_device_of_its_input(fake):
    ember.manual_seed(0)
    model = ember.zoo.create_model("transformer_seq2seq_tiny").eval()
    src = ember.tensor([[3, 4, 5, 6]])
    expected = model.greedy_decode(src)
    got = model.to(fake).greedy_decode(src.to(fake))
    assert got.device == fake and got.cpu().tolist() == expected.tolist()
