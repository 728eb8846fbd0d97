"""ember-zoo-transformer: an encoder-decoder Transformer and a small GPT for ember's zoo.

PyTorch counterpart: torch/nn/modules/transformer.py (v2.13): both models are built
from ``ember.nn.Transformer`` and its layers, keeping PyTorch's parameter names under
``transformer.*``; embeddings, positional encoding, heads, decoding and the tasks are
this package's own.

ember imports this module when it first needs a catalogue and calls the hook below;
the model code is imported only when a model is built.
"""

from ember.plugins import hookimpl

__version__ = "0.1.0"

_VASWANI = "Vaswani et al. Attention Is All You Need. NeurIPS 2017"
_CHAR_RNN = "Karpathy. The Unreasonable Effectiveness of Recurrent Neural Networks. 2015 (char-rnn)"
_GPT = "Radford et al. Language Models are Unsupervised Multitask Learners. 2019 (minGPT sizes)"

# What the default `ember train NAME --threads 1` printed (the model's default dataset and
# recipe, seed 0): value is the best epoch's (best.pt, epoch), last the final epoch's
# (checkpoint.pt); cpu_seconds is the whole command's. gpt_nano and gpt_micro record
# nothing: their default run (5 epochs of every 128-character window of pydoc-text,
# about 33,000 steps) is hours long and was not re-measured; the figures they had came
# from other recipes (zoo/transformer/README.md, tests/zoo/transformer/test_acceptance.py).
MEASURED = {
    # Shared 2-core x86-64 box under load (15 min wall for 112 s of CPU).
    "transformer_seq2seq_tiny": (
        {"metric": "sequence_accuracy", "value": 0.999, "epoch": 10, "last": 0.999,
         "data": "reverse, length 8, val split (1,000)", "cpu_seconds": 112.0,
         "command": "ember train transformer_seq2seq_tiny --threads 1"},
    ),
    # Measured by its author on an idle 16-core host, one thread (epochs not recorded).
    "char_lstm": (
        {"metric": "accuracy", "value": 0.666, "data": "pydoc-text, 1,024 evenly spaced test windows of 128",
         "cpu_seconds": 465.0, "command": "ember train char_lstm --threads 1"},
        {"metric": "loss", "value": 1.259, "data": "pydoc-text, same windows (nats/char; unigram baseline 3.24)",
         "cpu_seconds": 465.0, "command": "ember train char_lstm --threads 1"},
    ),
}


def _lazy(module_name, function_name):
    """A builder that imports its module on first call (the hook stays import-light)."""
    def build(**overrides):
        import importlib

        return getattr(importlib.import_module(module_name), function_name)(**overrides)
    build.__name__ = build.__qualname__ = function_name
    build.__module__ = module_name
    return build


@hookimpl
def ember_register_models(register):
    from ember_zoo_transformer.recipes import RECIPES
    from ember_zoo_transformer.sampled_text import SampledLanguageModelTask
    from ember_zoo_transformer.tasks import LanguageModelTask, Seq2SeqTask

    seq2seq, language_model = Seq2SeqTask(), LanguageModelTask()
    for name, params, description in (
            ("transformer_seq2seq_tiny", 169_674, "post-LN encoder-decoder, d 64, 4 heads, 2+2 layers, ff 128"),
            ("transformer_seq2seq_small", None, "post-LN encoder-decoder, d 128, 4 heads, 3+3 layers, ff 512")):
        register(_lazy("ember_zoo_transformer.seq2seq", name), name=name, task=seq2seq, family="transformer",
                 description=description, input_size=(8,), num_params=params, default_dataset="reverse",
                 paper=_VASWANI, torch_counterpart="torch.nn.Transformer (as transformer.*, batch_first=True)",
                 recipe=dict(RECIPES["seq2seq"]), measured=MEASURED.get(name, ()))
    for name, description in (("gpt_nano", "pre-LN decoder-only, 3 layers, 3 heads, d 48"),
                              ("gpt_micro", "pre-LN decoder-only, 4 layers, 4 heads, d 128")):
        register(_lazy("ember_zoo_transformer.gpt", name), name=name, task=language_model, family="gpt",
                 description=description, default_dataset="pydoc-text", paper=_GPT,
                 torch_counterpart="torch.nn.TransformerEncoder of pre-LN GELU layers with a causal mask "
                                   "(as transformer.*)",
                 recipe=dict(RECIPES["language-model"]), measured=MEASURED.get(name, ()))
    sampled_text = SampledLanguageModelTask()
    for name, description in (("char_lstm", "character embedding 64, 2-layer LSTM of 256, linear decoder"),
                              ("char_lstm_small", "character embedding 32, 1-layer LSTM of 128, linear decoder")):
        register(_lazy("ember_zoo_transformer.char_lstm", name), name=name, task=sampled_text, family="rnn",
                 description=description, default_dataset="pydoc-text", paper=_CHAR_RNN,
                 torch_counterpart="torch.nn.LSTM (batch_first=True, as lstm.*)",
                 recipe=dict(RECIPES["char-lstm"]), measured=MEASURED.get(name, ()))
