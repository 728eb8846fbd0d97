"""The zoo tasks of the Transformer family: ``seq2seq`` (encoder-decoder on the
sequence tasks) and ``language-model`` (decoder-only, on text or on a sequence task
written as prompt + answer with the loss masked on the prompt).

PyTorch counterpart: none in torch; the loss and metrics of the Annotated Transformer
(teacher forcing, greedy decoding) and of minGPT's sort demo and char LM. They follow
ember's task protocol (NOTE [ The task protocol ] in ember/zoo/tasks.py), so
``ember train/eval/predict`` drive them.
"""

import math

import numpy as np

import ember
import ember.nn.functional as F
from ember.zoo.tasks import Task, parse_sample_spec, samples_of
from ember_data.dataset import Dataset

IGNORE = -100  # targets the loss skips (the prompt of a prompted sequence)


def seq2seq_loss(model, source, target):
    """Teacher forcing: cross-entropy of ``model(source, [BOS] + target[:-1])`` against
    ``target``."""
    logits = model(source, model.shift_right(target))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


def lm_loss(model, inputs, targets):
    """Next-token cross-entropy, skipping targets equal to ``IGNORE``."""
    logits = model(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE)


def _symbols(text):
    """``"3 1 4"`` or ``"314"`` -> ``[3, 1, 4]``."""
    return [int(ch) for ch in text if ch.isdigit()]


class Seq2SeqTask(Task):
    """Source symbols to target symbols with ``Seq2SeqTransformer``; metric: the share of
    validation sequences decoded (greedily) without a single wrong symbol."""

    name = "seq2seq"
    metric = "sequence_accuracy"

    def describe(self, dataset):
        return {"model_overrides": {"num_symbols": int(dataset.num_symbols)},
                "task": getattr(dataset, "task", None), "target_length": int(dataset[0][1].shape[0])}

    def loss(self, model, batch):
        source, target = batch
        return seq2seq_loss(model, source, target)

    def evaluate(self, model, loader, beam_size=None):
        was_training = model.training
        model.eval()
        total_loss, exact, symbols_right, count, symbols = 0.0, 0, 0, 0, 0
        with ember.no_grad():
            for source, target in loader:
                total_loss += seq2seq_loss(model, source, target).item() * len(target)
                if beam_size:
                    decoded, _ = model.beam_search(source, beam_size, max_len=target.shape[1])
                else:
                    decoded = model.greedy_decode(source, max_len=target.shape[1])
                right = (decoded == target).numpy()
                exact += int(right.all(axis=1).sum())
                symbols_right += int(right.sum())
                count += len(target)
                symbols += right.size
        model.train(was_training)
        return {"loss": total_loss / max(count, 1), "sequence_accuracy": exact / max(count, 1),
                "symbol_accuracy": symbols_right / max(symbols, 1), "samples": count}

    def predict(self, model, input, meta, out_dir=None, top_k=5):
        """``input``: symbols (``"3 1 4 1 5 9 2 6"``) or samples ``reverse:0-4``; prints
        the greedy and beam decodings."""
        model.eval()
        parsed = parse_sample_spec(input)
        if parsed is not None:
            name, indices = parsed
            dataset = samples_of(name, indices)  # (refuses indices outside the split)
            samples = [(f"{name}[{i}]", dataset[i][0], dataset[i][1]) for i in indices]
        else:
            samples = [(input, ember.tensor(_symbols(input)), None)]
        lines = []
        for label, source, target in samples:
            source = source.unsqueeze(0)
            length = meta.get("target_length") or source.shape[1]
            greedy = model.greedy_decode(source, max_len=length)[0].tolist()
            beam, _ = model.beam_search(source, beam_size=max(top_k, 1), max_len=length)
            truth = "" if target is None else f" (expected {' '.join(map(str, target.tolist()))})"
            lines.append(f"{label}: greedy {' '.join(map(str, greedy))}; beam "
                         f"{' '.join(map(str, beam[0].tolist()))}{truth}")
        return lines


class PromptedSequences(Dataset):
    """A ``(source, target)`` sequence task as language-model samples: the tokens
    ``source + target`` shifted by one, with the targets inside the prompt set to IGNORE
    (the model is trained to write the answer, not to predict the random prompt)."""

    def __init__(self, pairs):
        self.pairs = pairs

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, index):
        source, target = self.pairs[index]
        tokens = ember.cat([source, target])
        inputs, targets = tokens[:-1], tokens[1:].clone()
        targets[:source.shape[0] - 1] = IGNORE
        return inputs, targets


def as_language_model_data(dataset):
    """Text windows pass through; a sequence task becomes ``PromptedSequences``."""
    return PromptedSequences(dataset) if hasattr(dataset, "num_symbols") else dataset


class LanguageModelTask(Task):
    """Next-token prediction with ``GPT``. On text (``pydoc-text``) the metric is the
    next-character accuracy (and ``bits_per_token`` is reported); on a sequence task the
    metric is the share of answers generated (greedily) exactly right after the prompt."""

    name = "language-model"
    metric = "accuracy"

    def describe(self, dataset):
        if hasattr(dataset, "num_symbols"):
            source, target = dataset[0]
            length = int(source.shape[0] + target.shape[0] - 1)
            return {"model_overrides": {"vocab_size": int(dataset.num_symbols), "block_size": length},
                    "prompt_length": int(source.shape[0])}
        return {"model_overrides": {"vocab_size": int(dataset.vocab_size), "block_size": int(dataset.block_size)},
                "vocab": list(dataset.vocab)}

    def loader(self, dataset, batch_size, train, workers=0, seed=0):
        return super().loader(as_language_model_data(dataset), batch_size, train, workers, seed)

    def loss(self, model, batch):
        inputs, targets = batch
        return lm_loss(model, inputs, targets)

    def evaluate(self, model, loader, max_batches=None):
        was_training = model.training
        model.eval()
        total_loss, tokens, right, exact, sequences = 0.0, 0, 0, 0, 0
        prompted = False
        with ember.no_grad():
            for step, (inputs, targets) in enumerate(loader):
                if max_batches is not None and step >= max_batches:
                    break
                logits = model(inputs)
                flat_targets = targets.reshape(-1)
                scored = int((flat_targets != IGNORE).sum().item())
                total_loss += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), flat_targets,
                                              ignore_index=IGNORE, reduction="sum").item()
                tokens += scored
                target_np = targets.numpy()
                if (target_np == IGNORE).any():  # prompted: generate the answer after the prompt
                    prompted = True
                    prompt = int((target_np[0] == IGNORE).sum()) + 1
                    answer = target_np[:, prompt - 1:]
                    generated = model.generate(inputs[:, :prompt], answer.shape[1], do_sample=False)
                    exact += int((generated[:, prompt:].numpy() == answer).all(axis=1).sum())
                    sequences += len(answer)
                else:
                    right += int((logits.argmax(-1).numpy() == target_np).sum())
        model.train(was_training)
        loss = total_loss / max(tokens, 1)
        result = {"loss": loss, "bits_per_token": loss / math.log(2), "tokens": tokens}
        result["accuracy"] = exact / max(sequences, 1) if prompted else right / max(tokens, 1)
        return result

    def predict(self, model, input, meta, out_dir=None, top_k=5):
        """Text models continue ``input`` (characters); prompted models answer the symbols
        in ``input`` (``"2 0 1 1 0 2"``)."""
        model.eval()
        vocab = meta.get("vocab")
        if vocab is None:
            prompt = ember.tensor([_symbols(input)])
            answer = model.generate(prompt, prompt.shape[1], do_sample=False)[0, prompt.shape[1]:]
            return [f"{input}: {' '.join(map(str, answer.tolist()))}"]
        stoi = {ch: i for i, ch in enumerate(vocab)}
        unknown = sorted({ch for ch in input if ch not in stoi})
        if unknown:
            raise ValueError(f"characters not in the model's vocabulary: {unknown!r}")
        ember.manual_seed(0)
        out = model.generate(ember.tensor([[stoi[ch] for ch in input]]), 200, temperature=0.8, top_k=top_k)
        return ["".join(vocab[i] for i in out[0].tolist())]


def unigram_cross_entropy(train_ids, test_ids, vocab_size):
    """Cross-entropy (nats per token) on ``test_ids`` of the unigram distribution of
    ``train_ids`` (add-one smoothed): the baseline a language model must beat."""
    counts = np.bincount(np.asarray(train_ids), minlength=vocab_size).astype(np.float64) + 1.0
    log_probs = np.log(counts / counts.sum())
    return float(-log_probs[np.asarray(test_ids)].mean())
