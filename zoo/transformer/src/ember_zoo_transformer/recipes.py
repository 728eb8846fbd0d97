"""Training recipes for the Transformer family: AdamW with a linear warm-up, gradient
clipping, teacher forcing (seq2seq) or the next-token loss masked on the prompt
(language model), for a given number of steps.

PyTorch counterpart: none in torch; the loops of the Annotated Transformer (Adam,
warm-up) and minGPT's trainer (AdamW betas (0.9, 0.95), weight decay 0.1, clip 1.0),
written with ember.optim. ``ember train`` runs the same losses epoch by epoch with the
recipe registered with each model (``RECIPES`` below); ``fit`` is the step-counted form
used by the acceptance tests and the README's figures.
"""

import math
import time

import ember

# What `ember train` uses unless told otherwise (keys of ember/trainer/training.py DEFAULTS).
RECIPES = {
    # A constant rate after the warm-up made the last epoch land on a loss spike (sequence
    # accuracy 0.986 at epoch 19, 0.714 at epoch 20): the cosine decay ends the run settled.
    "seq2seq": {"epochs": 10, "batch_size": 64, "optimizer": "AdamW", "lr": 2e-3, "weight_decay": 0.0,
                "scheduler": "warmup_cosine", "warmup_steps": 100, "grad_clip": 1.0},
    "language-model": {"epochs": 5, "batch_size": 64, "optimizer": "AdamW", "lr": 5e-3, "weight_decay": 0.1,
                       "scheduler": "warmup", "warmup_steps": 50, "grad_clip": 1.0},
    # epochs of 200 sampled batches (ember_zoo_transformer/sampled_text.py)
    "char-lstm": {"epochs": 5, "batch_size": 32, "optimizer": "AdamW", "lr": 3e-3, "weight_decay": 0.0,
                  "scheduler": "warmup", "warmup_steps": 50, "grad_clip": 1.0},
}


def _batches(dataset, batch_size, seed):
    """Shuffled batches forever (a new order each pass)."""
    epoch = 0
    while True:
        loader = ember.data.DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True,
                                       generator=ember.Generator().manual_seed(seed * 1000 + epoch))
        yield from loader
        epoch += 1


def fit(model, task, train_set, steps, batch_size=64, lr=1e-3, warmup_steps=100, weight_decay=0.0,
        betas=(0.9, 0.98), grad_clip=1.0, seed=0, callback=None, every=100):
    """Train ``model`` with ``task.loss`` for ``steps`` AdamW steps; the learning rate
    rises linearly over ``warmup_steps``, then follows a cosine down to a tenth of ``lr``
    at ``steps`` (a large rate finds the solution, the decay settles on it). ``callback(step, model)`` runs
    every ``every`` steps; returning True stops early. Returns
    ``{"steps", "seconds", "cpu_seconds", "losses"}``."""
    ember.manual_seed(seed)
    model.train()
    optimizer = ember.optim.AdamW(model.parameters(), lr=lr, betas=betas, weight_decay=weight_decay)
    schedule = ember.optim.lr_scheduler.LambdaLR(optimizer, lambda step: warmup_cosine(step, warmup_steps, steps))
    dataset = task_data(task, train_set)
    started, started_cpu, losses = time.perf_counter(), time.process_time(), []
    step = 0
    for step, batch in enumerate(_batches(dataset, batch_size, seed), start=1):
        loss = task.loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        if grad_clip:
            ember.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if callback is not None and step % every == 0 and callback(step, model):
            break
        if step >= steps:
            break
    return {"steps": step, "seconds": time.perf_counter() - started,
            "cpu_seconds": time.process_time() - started_cpu, "losses": losses}


def warmup_cosine(step, warmup_steps, total_steps, floor=0.1):
    """The learning-rate factor at ``step``: linear warm-up, then a cosine to ``floor``."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def task_data(task, dataset):
    """The samples ``task.loss`` expects (prompted sequences for a language model)."""
    from ember_zoo_transformer.tasks import LanguageModelTask, as_language_model_data

    return as_language_model_data(dataset) if isinstance(task, LanguageModelTask) else dataset
