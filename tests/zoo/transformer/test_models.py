"""The Transformer zoo models: names and weights shared with torch.nn (a torch
``nn.Transformer`` / ``nn.TransformerEncoder`` state dict loads under ``transformer.*``
and gives the same outputs), decoding (greedy, beam search checked against exhaustive
search), sampling (temperature, top-k), the tasks' data handling and loss masking, the
unigram baseline, and the registry entries."""

import itertools
import math

import numpy as np
import pytest
import torch
from ember_zoo_transformer import gpt, seq2seq, tasks
from ember_zoo_transformer.positional import sinusoidal_table

import ember
from ember.testing import assert_close

TOL = {"atol": 2e-5, "rtol": 1e-4}


def _load_torch_core(model, torch_core):
    state = {f"transformer.{k}": ember.tensor(v.detach().numpy()) for k, v in torch_core.state_dict().items()}
    result = model.load_state_dict(state, strict=False)
    assert not result.unexpected_keys
    assert all(not k.startswith("transformer.") for k in result.missing_keys)


def test_seq2seq_core_is_torch_transformer():
    model = seq2seq.transformer_seq2seq_tiny(num_symbols=5, dropout=0.0)
    torch.manual_seed(0)
    core = torch.nn.Transformer(d_model=64, nhead=4, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=128,
                                dropout=0.0, batch_first=True)
    keys = [k for k in model.state_dict() if k.startswith("transformer.")]
    assert keys == [f"transformer.{k}" for k in core.state_dict()]
    _load_torch_core(model, core)
    src, tgt = ember.tensor([[1, 2, 3, 4]]), ember.tensor([[4, 3, 2, 1]])
    # The same embedded inputs through torch's core give the model's hidden states.
    src_x = model._embed(model.src_embed, src)
    tgt_x = model._embed(model.tgt_embed, model.shift_right(tgt))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    expected = core(torch.from_numpy(src_x.detach().numpy()), torch.from_numpy(tgt_x.detach().numpy()),
                    tgt_mask=mask, tgt_is_causal=True)
    hidden = model.transformer(src_x, tgt_x, tgt_mask=ember.nn.Transformer.generate_square_subsequent_mask(4),
                               tgt_is_causal=True)
    assert_close(hidden, expected, **TOL)
    logits = model(src, model.shift_right(tgt))
    assert_close(logits, torch.nn.functional.linear(expected, torch.from_numpy(model.generator.weight.detach().numpy()),
                                                    torch.from_numpy(model.generator.bias.detach().numpy())), **TOL)


def test_positional_table_is_the_papers_formula():
    table = sinusoidal_table(50, 16)
    p, i = 7, 3
    assert math.isclose(table[p, 2 * i], math.sin(p / 10000 ** (2 * i / 16)), rel_tol=1e-6)
    assert math.isclose(table[p, 2 * i + 1], math.cos(p / 10000 ** (2 * i / 16)), rel_tol=1e-6)
    model = seq2seq.transformer_seq2seq_tiny()
    assert "positional.pe" not in model.state_dict()  # a fixed table, not a weight


def _exhaustive_best(model, src, length):
    candidates = ember.tensor(list(itertools.product(range(model.num_symbols), repeat=length)))
    scores = model.sequence_log_prob(src.expand(len(candidates), -1), candidates).numpy()
    return candidates[int(np.argmax(scores))], float(scores.max())


def test_beam_search_finds_the_exhaustive_best_and_greedy_is_beam_one():
    ember.manual_seed(3)
    model = seq2seq.transformer_seq2seq_tiny(num_symbols=3, d_model=16, nhead=2, dim_feedforward=32).eval()
    src = ember.tensor([[0, 2, 1], [1, 1, 0]])
    for row in range(2):
        best, best_score = _exhaustive_best(model, src[row:row + 1], 3)
        found, score = model.beam_search(src[row:row + 1], beam_size=9, max_len=3)  # 9 = 3^2: exact
        assert found[0].tolist() == best.tolist()
        assert math.isclose(float(score[0]), best_score, rel_tol=1e-4)
    greedy = model.greedy_decode(src)
    beam_one, scores = model.beam_search(src, beam_size=1)
    assert greedy.tolist() == beam_one.tolist()
    np.testing.assert_allclose(scores.numpy(), model.sequence_log_prob(src, greedy).numpy(), rtol=1e-4)


def _torch_gpt_core(model):
    layer = torch.nn.TransformerEncoderLayer(48, 3, dim_feedforward=192, dropout=0.0, activation="gelu",
                                             batch_first=True, norm_first=True)
    core = torch.nn.TransformerEncoder(layer, 3, norm=torch.nn.LayerNorm(48), enable_nested_tensor=False)
    core.load_state_dict({k[len("transformer."):]: torch.from_numpy(v.detach().numpy())
                          for k, v in model.state_dict().items() if k.startswith("transformer.")})
    return core


def test_gpt_blocks_are_torch_encoder_layers():
    ember.manual_seed(0)
    model = gpt.gpt_nano(vocab_size=7, block_size=12)
    core = _torch_gpt_core(model)
    idx = ember.tensor([[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]])
    x = model.wte(idx) + model.wpe(ember.arange(6))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(6)
    hidden = core(torch.from_numpy(x.detach().numpy()), mask=mask, is_causal=True)
    expected = hidden @ torch.from_numpy(model.lm_head.weight.detach().numpy()).T
    assert_close(model(idx), expected, **TOL)
    # causality: changing a later token leaves earlier logits alone
    changed = ember.tensor([[1, 2, 3, 0, 0, 0], [6, 5, 4, 0, 0, 0]])
    np.testing.assert_allclose(model(changed)[:, :3].detach().numpy(), model(idx)[:, :3].detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_gpt_nano_size_matches_mingpt():
    # minGPT's gpt-nano (3 layers, 3 heads, d=48) has 3 * (4 * 48^2 + 8 * 48^2 + 13 * 48) weights in its blocks.
    model = gpt.gpt_nano(vocab_size=3, block_size=11)
    blocks = sum(p.numel() for n, p in model.named_parameters() if n.startswith("transformer.layers"))
    assert blocks == 3 * (12 * 48 * 48 + 13 * 48)


def test_generate_greedy_top_k_and_temperature():
    ember.manual_seed(0)
    model = gpt.gpt_nano(vocab_size=5, block_size=6).eval()
    prompt = ember.tensor([[1, 2], [3, 4]])
    greedy = model.generate(prompt, 7, do_sample=False)
    assert greedy.shape == (2, 9) and greedy[:, :2].tolist() == prompt.tolist()
    assert model.generate(prompt, 7, top_k=1).tolist() == greedy.tolist()  # top-1 sampling is greedy
    # the context is cropped to block_size: continuing past it works
    ember.manual_seed(1)
    sampled = model.generate(prompt, 7, temperature=2.0, top_k=3)
    assert sampled.shape == (2, 9) and int(sampled.max()) < 5 and int(sampled.min()) >= 0
    with pytest.raises(ValueError, match="temperature"):
        model.generate(prompt, 1, temperature=0.0)


def test_sampling_follows_the_distribution():
    probs = ember.tensor([[0.1, 0.6, 0.3]]).expand(20000, 3)
    ember.manual_seed(0)
    draws = gpt._sample(probs).numpy().ravel()
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / len(draws), [0.1, 0.6, 0.3], atol=0.015)


def test_prompted_sequences_mask_the_prompt():
    data = ember.data.load_dataset("sort", split="val", length=6, num_symbols=3, num_samples=4)
    inputs, targets = tasks.PromptedSequences(data)[0]
    source, target = data[0]
    assert inputs.tolist() == source.tolist() + target[:-1].tolist()
    assert targets.tolist() == [tasks.IGNORE] * 5 + target.tolist()
    meta = tasks.LanguageModelTask().describe(data)
    assert meta["model_overrides"] == {"vocab_size": 3, "block_size": 11} and meta["prompt_length"] == 6


def test_lm_loss_ignores_the_prompt():
    ember.manual_seed(0)
    model = gpt.gpt_nano(vocab_size=3, block_size=11)
    inputs = ember.tensor([[0, 1, 2, 0, 1, 2]])
    masked = ember.tensor([[tasks.IGNORE, tasks.IGNORE, 0, 1, 2, 0]])
    logits = model(inputs)[0, 2:]
    expected = torch.nn.functional.cross_entropy(torch.from_numpy(logits.detach().numpy()), torch.tensor([0, 1, 2, 0]))
    assert math.isclose(tasks.lm_loss(model, inputs, masked).item(), expected.item(), rel_tol=1e-5)


def test_unigram_baseline():
    train, test = [0, 0, 0, 1], [0, 1]
    probs = np.array([4, 2, 1]) / 7  # add-one counts over a vocabulary of 3
    expected = -(math.log(probs[0]) + math.log(probs[1])) / 2
    assert math.isclose(tasks.unigram_cross_entropy(train, test, 3), expected)


def test_registry_entries():
    names = ember.zoo.list_models("*")
    assert {"transformer_seq2seq_tiny", "transformer_seq2seq_small", "gpt_nano", "gpt_micro"} <= set(names)
    info = ember.zoo.model_info("transformer_seq2seq_tiny")
    assert info.task == "seq2seq" and info.default_dataset == "reverse" and info.plugin == "transformer"
    model = ember.zoo.create_model("transformer_seq2seq_tiny")
    assert sum(p.numel() for p in model.parameters()) == info.num_params
    assert ember.zoo.get_task("gpt_nano").name == "language-model"
    lm = ember.zoo.create_model("gpt_nano", vocab_size=3, block_size=11)
    assert isinstance(lm, gpt.GPT) and lm.block_size == 11


def test_seq2seq_task_evaluate_and_predict():
    task = ember.zoo.get_task("transformer_seq2seq_tiny")
    data = ember.data.load_dataset("reverse", split="val", num_samples=16)
    meta = task.describe(data)
    assert meta["model_overrides"] == {"num_symbols": 10} and meta["target_length"] == 8
    model = ember.zoo.create_model("transformer_seq2seq_tiny", **meta["model_overrides"])
    result = task.evaluate(model, task.loader(data, 8, train=False))
    assert set(result) >= {"loss", "sequence_accuracy", "symbol_accuracy"} and result["samples"] == 16
    lines = task.predict(model, "reverse:0-1", meta, top_k=2)
    assert len(lines) == 2 and "greedy" in lines[0] and "expected" in lines[0]
