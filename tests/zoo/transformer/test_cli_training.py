"""The Transformer family through the zoo's generic loop (what ``ember train/eval/predict``
run): one epoch of gpt_nano on ``sort`` writes a checkpoint and metrics; evaluating the
reloaded checkpoint gives the same metric; predict answers a prompt; the seq2seq task
goes through the same loop."""

import json

from ember.trainer import training


def test_gpt_train_reload_evaluate_predict(tmp_path):
    metrics = training.train("gpt_nano", "sort", tmp_path, epochs=1, batch_size=128, progress=False,
                             log=lambda line: None)
    assert (tmp_path / "checkpoint.pt").exists()
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["metric"] == "accuracy" and saved["epochs"][0]["steps"] == 79
    final = metrics["final"]
    assert final["loss"] < 2.0  # below the 10-symbol uniform guess (ln 10 = 2.30) after one epoch
    again = training.evaluate("gpt_nano", tmp_path / "checkpoint.pt", "sort", batch_size=128)
    assert again["accuracy"] == final["accuracy"] and abs(again["loss"] - final["loss"]) < 1e-6
    (line,) = training.predict("gpt_nano", tmp_path / "checkpoint.pt", "3 1 4 1 5 9 2 6")
    answer = line.split(":")[1].split()
    assert len(answer) == 8 and all(symbol.isdigit() for symbol in answer)


def test_seq2seq_through_the_generic_loop(tmp_path):
    metrics = training.train("transformer_seq2seq_tiny", "copy", tmp_path, epochs=1, batch_size=256,
                             progress=False, log=lambda line: None)
    assert metrics["metric"] == "sequence_accuracy" and 0.0 <= metrics["final"]["sequence_accuracy"] <= 1.0
    assert metrics["final"]["loss"] < 2.3
    lines = training.predict("transformer_seq2seq_tiny", tmp_path / "checkpoint.pt", "copy:0-1", top_k=2)
    assert len(lines) == 2 and "greedy" in lines[0]
