"""Acceptance runs of issue 5 for the Transformer family (seeded, on ember.data's
embedded datasets; figures in zoo/transformer/README.md):

- the encoder-decoder on ``reverse`` (length 8, 10 symbols) reaches >= 99% exact-sequence
  accuracy (greedy decoding, held-out split) within 3,000 steps;
- the decoder-only gpt_nano on ``sort`` (length 6, 3 symbols), prompted, reaches >= 99%
  within 500 steps;
- gpt_nano on ``pydoc-text`` generates text after a short run, and its validation loss
  is below the unigram baseline's.
"""

import numpy as np
import pytest
from ember_zoo_transformer import gpt, seq2seq
from ember_zoo_transformer.recipes import fit
from ember_zoo_transformer.tasks import LanguageModelTask, Seq2SeqTask, as_language_model_data, unigram_cross_entropy

import ember


def _loader(dataset, batch_size=500):
    return ember.data.DataLoader(dataset, batch_size=batch_size)


@pytest.mark.slow
def test_seq2seq_reverse_reaches_99_percent_within_3000_steps():
    task = Seq2SeqTask()
    train = ember.data.load_dataset("reverse", split="train")
    val = ember.data.load_dataset("reverse", split="val")
    ember.manual_seed(0)
    # The zoo's tiny model (d 64, 2+2 layers, 170K parameters) in its pre-LN form, which
    # tolerates the large learning rate that gets there quickly (measured: 99.6% after
    # 1,000 steps; post-LN at 2e-3 reached 97% after 1,250).
    model = seq2seq.transformer_seq2seq_tiny(norm_first=True)

    def good_enough(step, model):
        return task.evaluate(model, _loader(val))["sequence_accuracy"] >= 0.99

    run = fit(model, task, train, steps=1500, batch_size=128, lr=4e-3, warmup_steps=100, callback=good_enough,
              every=250)
    result = task.evaluate(model, _loader(val))
    print(f"reverse: {result} after {run['steps']} steps, {run['cpu_seconds']:.0f} s CPU")
    assert run["steps"] <= 3000
    assert result["sequence_accuracy"] >= 0.99, result
    beam = task.evaluate(model, _loader(val, 250), beam_size=3)
    assert beam["sequence_accuracy"] >= 0.99, beam


@pytest.mark.slow
def test_gpt_sort_reaches_99_percent_within_500_steps():
    task = LanguageModelTask()
    train = ember.data.load_dataset("sort", split="train", length=6, num_symbols=3)
    val = ember.data.load_dataset("sort", split="val", length=6, num_symbols=3, num_samples=1000)
    ember.manual_seed(0)
    model = gpt.gpt_nano(**task.describe(train)["model_overrides"])
    run = fit(model, task, train, steps=500, lr=5e-3, warmup_steps=20, betas=(0.9, 0.95), weight_decay=0.1)
    result = task.evaluate(model, _loader(as_language_model_data(val), 1000))
    print(f"sort: {result} after {run['steps']} steps, {run['cpu_seconds']:.0f} s CPU")
    assert run["steps"] == 500
    assert result["accuracy"] >= 0.99, result


@pytest.mark.slow
def test_gpt_on_pydoc_text_beats_the_unigram_baseline_and_generates():
    task = LanguageModelTask()
    train = ember.data.load_dataset("pydoc-text", split="train", block_size=64)
    test = ember.data.load_dataset("pydoc-text", split="test", block_size=64)
    baseline = unigram_cross_entropy(train.ids, test.ids, train.vocab_size)
    ember.manual_seed(0)
    model = gpt.gpt_nano(vocab_size=train.vocab_size, block_size=64)
    run = fit(model, task, train, steps=300, batch_size=32, lr=5e-3, warmup_steps=30, betas=(0.9, 0.95),
              weight_decay=0.1)
    windows = ember.data.Subset(test, np.linspace(0, len(test) - 1, 256).astype(int).tolist())
    result = task.evaluate(model, _loader(windows, 64))
    print(f"pydoc-text: val loss {result['loss']:.3f} nats/char (unigram {baseline:.3f}) after "
          f"{run['steps']} steps, {run['cpu_seconds']:.0f} s CPU")
    assert result["loss"] < baseline, (result, baseline)
    ember.manual_seed(0)
    prompt = "The "
    out = model.generate(ember.tensor([train.encode(prompt)]), 120, temperature=0.8, top_k=10)
    text = train.decode(out[0].tolist())
    print(text)
    assert text.startswith(prompt) and len(text) == len(prompt) + 120
    assert len(set(text[len(prompt):])) >= 8  # varied characters, not one repeated token
