"""The character-level LSTM language model: torch's nn.LSTM weights load under ``lstm.*``
with the same logits; generation carries the LSTM state (same logits as re-reading the
whole text); the sampled-window task (char-rnn epochs, RandomSampler with replacement);
a short run on pydoc-text beats the unigram baseline; ``ember train``'s loop drives it."""

import json

import numpy as np
import pytest
import torch
from ember_zoo_transformer.char_lstm import char_lstm, char_lstm_small
from ember_zoo_transformer.recipes import fit
from ember_zoo_transformer.sampled_text import SampledLanguageModelTask
from ember_zoo_transformer.tasks import unigram_cross_entropy

import ember
from ember.testing import assert_close
from ember.trainer import training


class TorchCharLSTM(torch.nn.Module):
    """The same model written with torch.nn (the names ember's model uses)."""

    def __init__(self, vocab_size, n_embd, hidden_size, num_layers):
        super().__init__()
        self.encoder = torch.nn.Embedding(vocab_size, n_embd)
        self.lstm = torch.nn.LSTM(n_embd, hidden_size, num_layers, batch_first=True)
        self.decoder = torch.nn.Linear(hidden_size, vocab_size)

    def forward(self, idx):
        return self.decoder(self.lstm(self.encoder(idx))[0])


def test_torch_weights_give_the_same_logits():
    reference = TorchCharLSTM(40, 16, 32, 2)
    model = char_lstm(vocab_size=40, n_embd=16, hidden_size=32)
    model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in reference.state_dict().items()})
    idx = np.random.default_rng(0).integers(0, 40, (3, 11))
    with torch.no_grad():
        expected = reference(torch.from_numpy(idx))
    assert_close(model(ember.tensor(idx)), expected, rtol=1e-5, atol=1e-6)


def test_generation_carries_the_state():
    ember.manual_seed(0)
    model = char_lstm_small(vocab_size=20).eval()
    prompt = ember.tensor([[1, 2, 3], [4, 5, 6]])
    out = model.generate(prompt, 6, do_sample=False)
    assert out.shape == (2, 9) and out[:, :3].tolist() == prompt.tolist()
    # greedy: each new character is the argmax of the logits of the whole text so far
    logits = model(out[:, :-1])
    assert logits[:, 2:].argmax(-1).tolist() == out[:, 3:].tolist()
    with pytest.raises(ValueError, match="temperature must be positive"):
        model.generate(prompt, 1, temperature=0)


def test_sampled_epochs_and_evaluation_windows():
    task = SampledLanguageModelTask(windows_per_epoch=96, eval_windows=10)
    train = ember.data.load_dataset("pydoc-text", split="train", block_size=16)
    test = ember.data.load_dataset("pydoc-text", split="test", block_size=16)
    loader = task.loader(train, 32, train=True, seed=1)
    batches = list(loader)
    assert len(loader) == 3 and [b[0].shape for b in batches] == [(32, 16)] * 3
    again = [b[0] for b in task.loader(train, 32, train=True, seed=1)]
    assert all(ember.equal(a, b[0]) for a, b in zip(again, batches))  # seeded
    evaluation = [x for x, _ in task.loader(test, 4, train=False)]
    assert sum(len(x) for x in evaluation) == 10
    assert ember.equal(evaluation[0][0], test[0][0]) and ember.equal(evaluation[-1][-1], test[len(test) - 1][0])


@pytest.mark.slow
def test_short_run_on_pydoc_text_beats_the_unigram_baseline():
    train = ember.data.load_dataset("pydoc-text", split="train", block_size=32)
    test = ember.data.load_dataset("pydoc-text", split="test", block_size=32)
    baseline = unigram_cross_entropy(train.ids, test.ids, train.vocab_size)
    task = SampledLanguageModelTask(eval_windows=256)
    ember.manual_seed(0)
    model = char_lstm_small(vocab_size=train.vocab_size)
    fit(model, task, train, steps=150, batch_size=32, lr=1e-2, warmup_steps=10)
    result = task.evaluate(model, task.loader(test, 64, train=False))
    assert result["loss"] < baseline - 0.3, (result, baseline)


def test_through_the_generic_training_loop(tmp_path):
    metrics = training.train("char_lstm_small", "sort", tmp_path, epochs=1, batch_size=128, progress=False,
                             log=lambda line: None)
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["model"] == "char_lstm_small" and saved["epochs"][0]["steps"] == 79
    assert metrics["final"]["loss"] < 2.3  # below the 10-symbol uniform guess
    (line,) = training.predict("char_lstm_small", tmp_path / "checkpoint.pt", "3 1 4 1 5 9 2 6")
    assert len(line.split(":")[1].split()) == 8
