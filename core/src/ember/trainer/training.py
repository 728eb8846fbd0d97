"""The training and evaluation loop behind ``ember train`` and ``ember eval``.

PyTorch counterpart: none in torch; the shape of torchvision's
references/classification/train.py (``train_one_epoch``, ``evaluate``, checkpoint per
epoch, ``--resume``), written generically: everything task-specific comes from the
model's ``Task`` (NOTE [ The task protocol ] in ember/zoo/tasks.py).

# NOTE [ Checkpoints and interruption ]
# After every epoch the loop's ModelCheckpoint
# (ember/trainer/callbacks/model_checkpoint.py) writes ``checkpoint.pt`` (model,
# optimizer and scheduler state, epoch, history, the callbacks' states, and what
# rebuilds the model: name and builder overrides) and ``metrics.json`` into the output
# folder; when the epoch's validation metric is the best so far it also writes
# ``best.pt`` (the same content, for that epoch). ``metrics.json`` has ``final`` (the
# last epoch's validation metrics) and ``best`` (the best epoch's, with its number),
# as trainers' "last" and "best" checkpoints (Lightning's
# ``ModelCheckpoint(save_last=True)``, timm's ``model_best.pth.tar``). Every write is
# atomic (``ember.save`` and ``_write_json`` write a temporary file and rename it), so
# a Ctrl-C at any moment leaves the last complete epoch's files intact; ``--resume``
# continues from ``checkpoint.pt`` (with another ``--epochs``, the learning-rate
# schedule is re-planned over the new total). Each epoch's shuffling and random ops
# are seeded from (seed, epoch), so a resumed run sees the same batches as an
# uninterrupted one. A run that fails or is interrupted before its first epoch ends
# removes the output folder it created, so no empty run folder is left behind. A
# callback may stop a run early (NOTE [ The hooks of a run ] in
# ember/trainer/callbacks/callback.py); the last complete epoch's files stand, and
# metrics.json says why it stopped (``"stopped"``).
"""

import contextlib
import functools
import inspect
import json
import math
import pathlib
import sys
import time

from ember.trainer.callbacks import CallbackList, TrainerState, with_defaults
from ember.trainer.callbacks.model_checkpoint import BEST, LAST, naming
from ember.trainer.validation_metrics import MetricsTask
from ember.zoo.errors import ZooError

CHECKPOINT = LAST
METRICS = "metrics.json"
SCHEDULERS = ("none", "onecycle", "cosine", "warmup", "warmup_cosine")
DEFAULTS = {"epochs": 10, "batch_size": 64, "optimizer": "AdamW", "lr": 1e-3, "weight_decay": 0.0,
            "momentum": 0.9, "nesterov": False, "scheduler": "none", "warmup_steps": 100, "grad_clip": None}


def training_config(model_name, base=None, **given):
    """The options of a run: ``base`` (a resumed run's options) or the model's recipe,
    overridden by ``given`` (None = not given)."""
    from ember.zoo import model_info

    config = dict(DEFAULTS)
    config.update(base if base is not None else model_info(model_name).recipe)
    config.update({key: value for key, value in given.items() if value is not None})
    if config["scheduler"] not in SCHEDULERS:
        raise ZooError(f"unknown scheduler {config['scheduler']!r}; choose from {', '.join(SCHEDULERS)}")
    return config


def build_optimizer(name, params, config):
    """The optimizer registered as ``name`` (any case: ``sgd``, ``AdamW``), given those of
    lr / weight_decay / momentum / nesterov its constructor accepts."""
    import ember

    names = {n.lower(): n for n in dir(ember.optim) if n[:1].isupper() and n != "Optimizer"}
    if name.lower() not in names:
        raise ZooError(f"unknown optimizer {name!r}; installed: {', '.join(sorted(names.values()))}")
    cls = getattr(ember.optim, names[name.lower()])
    accepted = inspect.signature(cls).parameters
    options = {key: config[key] for key in ("lr", "weight_decay", "momentum", "nesterov") if key in accepted}
    if not options.get("momentum"):
        options.pop("nesterov", None)  # SGD refuses Nesterov without momentum
    return cls(params, **options)


def build_scheduler(name, optimizer, config, total_steps):
    """A per-step learning-rate schedule over ``total_steps``, or None: "onecycle"
    (torch's OneCycleLR), "cosine" (CosineAnnealingLR), "warmup" (a linear warm-up to a
    constant rate) or "warmup_cosine" (the warm-up, then a cosine to a tenth of the rate,
    as the Transformer recipes of ember_zoo_transformer/recipes.py ``fit``)."""
    from ember.optim import lr_scheduler

    if name == "none":
        return None
    if name == "onecycle":
        return lr_scheduler.OneCycleLR(optimizer, max_lr=config["lr"], total_steps=total_steps)
    if name == "cosine":
        return lr_scheduler.CosineAnnealingLR(optimizer, T_max=total_steps)
    warmup = max(1, min(config["warmup_steps"], total_steps))
    if name == "warmup_cosine":  # a linear warm-up, then a cosine down to a tenth: the run ends settled
        return lr_scheduler.LambdaLR(optimizer, functools.partial(warmup_cosine, warmup=warmup, total=total_steps))
    return lr_scheduler.LinearLR(optimizer, start_factor=1.0 / warmup, end_factor=1.0, total_iters=warmup)


def warmup_cosine(step, warmup, total, floor=0.1):
    """The learning-rate factor of the "warmup_cosine" schedule at ``step``."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def train(model_name, data, out, seed=0, resume=None, workers=0, progress=True, log=print, world=None,
          tensorboard=False, callbacks=(), **options):
    """Train ``model_name`` on the ember.data dataset ``data``; returns the metrics dict.
    ``callbacks`` (ember/trainer/callbacks/) are called around the loop's steps and may stop
    it; with ``tensorboard``, a ``TensorBoardLogger`` among them writes each epoch's losses
    and validation metrics to ``out/tensorboard`` as TensorBoard event files.

    ``options`` are the run's options (``epochs``, ``batch_size``, ``lr``, ``optimizer``,
    ``scheduler``, ...; see ``training_config``). ``resume`` is a checkpoint path to
    continue from, with its run's options unless ``options`` change them. Writes
    ``checkpoint.pt``, ``best.pt`` and ``metrics.json`` into ``out``
    (NOTE [ Checkpoints and interruption ]). Options beyond the recipe's, saved with the
    run's config so ``resume`` keeps them: ``model_overrides`` (builder keywords),
    ``train_fraction`` (a seeded subset of the training split), ``distill_from`` /
    ``teacher_weights`` / ``temperature`` / ``alpha`` (ember/trainer/distillation.py),
    ``init_weights`` (a checkpoint to start from) and ``quantize="qat"``
    (quantization-aware fine-tuning, ember/trainer/qat.py).
    ``world`` (ember/trainer/distributed_training.py) makes the run data-parallel: DDP, a
    DistributedSampler, rank 0 alone logs and writes.
    """
    out = pathlib.Path(out)
    if world is not None:
        log, progress = world.log, progress and world.is_main
    with _removed_if_left_empty(out):
        return _train(model_name, data, out, seed, resume, workers, progress, log, options, world,
                      with_defaults(callbacks, tensorboard))


def _train_loader(task, train_set, config, workers, seed, world):
    if world is None:
        return task.loader(train_set, config["batch_size"], train=True, workers=workers, seed=seed)
    return world.train_loader(task, train_set, config["batch_size"], workers, seed)


def _train(model_name, data, out, seed, resume, workers, progress, log, options, world, hooks):
    import ember
    from ember.zoo import get_task

    saved = _load_checkpoint(resume, model_name) if resume is not None else None
    config = training_config(model_name, base=saved and saved["config"], **options)
    task = get_task(model_name)
    if config.get("metrics"):  # --metrics (NOTE [ Metrics of a validation ] in ember/trainer/validation_metrics.py)
        task = MetricsTask(task, config["metrics"], model_name)
    if config.get("distill_from"):  # the teacher's loss is the criterion (ember/trainer/distillation.py)
        from ember.trainer.distillation import distilling

        task = distilling(task, config, data)  # (built before seeding: the student's init is a plain run's)
    if config.get("quantize") == "qat":  # observers frozen while validating (ember/trainer/qat.py)
        from ember.trainer.qat import QatTask

        task = QatTask(task)
    ember.manual_seed(seed)
    train_set, val_set = task.datasets(data, seed=seed)
    with fitting(task, model_name, data):
        meta = dict(task.describe(train_set), name=data)
        model = _create(model_name, meta, config.get("model_overrides") or {})
        val_loader = task.loader(val_set, config["batch_size"], train=False, workers=workers)
        check_fits(task, model, val_loader, model_name, data)
    train_set = fraction_of(train_set, config.get("train_fraction", 1.0), seed)
    model = _starting_point(model, config, resuming=saved is not None)
    optimizer = build_optimizer(config["optimizer"], model.parameters(), config)
    steps_per_epoch = len(_train_loader(task, train_set, config, workers, seed, world))
    scheduler = build_scheduler(config["scheduler"], optimizer, config, config["epochs"] * steps_per_epoch)
    history, start_epoch = [], 0
    if saved is not None:
        start_epoch, history = _restore(saved, model, optimizer, scheduler)
        log(f"resumed from {resume} after epoch {start_epoch}")
    net = model if world is None else world.wrap(model)
    num_params = sum(p.numel() for p in model.parameters())
    log(f"{model_name}: {num_params:,} parameters; {data}: {len(train_set):,} train / {len(val_set):,} validation "
        f"samples{split_note(val_set)}; {config['optimizer']} lr {config['lr']}, {config['scheduler']} schedule, "
        f"batch {config['batch_size']}, {config['epochs']} epochs")
    if config.get("distill_from"):
        log(f"distilled from {config['distill_from']} ({config['teacher_weights']}): temperature "
            f"{task.temperature}, alpha {task.alpha}")
    progress = progress and _is_terminal(sys.stdout) and _is_terminal(sys.stderr)

    def checkpoint():  # what --resume continues from, and what create_model rebuilds the model from
        contents = {"model": model.state_dict(), "model_name": model_name, "model_overrides": meta["model_overrides"],
                    "data": meta, "epoch": len(history), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict() if scheduler is not None else None,
                    "config": config, "seed": seed, "history": history, "callbacks": hooks.state_dicts()}
        if config.get("quantize") == "qat":
            contents["compression"] = {"quantize": "qat", "stage": "prepared"}
        return contents

    trainer = TrainerState(model, optimizer, scheduler, config, out, task.metric, history, start_epoch,
                           steps_per_epoch, log, world is None or world.is_main, checkpoint,
                           1 if world is None else world.size)
    trainer.loggers = [callback for callback in hooks if hasattr(callback, "log_metrics")]
    try:
        hooks.call("on_train_start", trainer)
        if saved is not None:  # the callbacks' counts (callbacks/callback.py:
            # NOTE [ A callback's state in the checkpoint ])
            hooks.load_state_dicts(saved.get("callbacks") or {})
        for epoch in range(start_epoch, config["epochs"]):
            if trainer.should_stop:  # (before any epoch: a resumed run's early stopping)
                break
            trainer.epoch = epoch
            hooks.call("on_epoch_start", trainer)
            ember.manual_seed(seed * 100_003 + epoch)
            loader = _train_loader(task, train_set, config, workers, seed * 100_003 + epoch,
                                   world)
            record = train_one_epoch(task, net, optimizer, scheduler, loader, epoch, config,
                                     progress, hooks=hooks, trainer=trainer)
            if trainer.should_stop:  # stopped inside the epoch: not validated, not saved
                break
            started = time.perf_counter()
            record["val"] = task.evaluate(model, val_loader)
            record["val_seconds"] = time.perf_counter() - started
            if world is not None:  # each rank saw its share of the epoch (its rate: _rate)
                record["ranks"] = world.size
            hooks.call("on_validation_end", trainer, record["val"])
            history.append(record)
            log(_epoch_line(record, config["epochs"], task.metric,
                            config.get("metrics") or ()))
            hooks.call("on_epoch_end", trainer, record)  # ModelCheckpoint saves here
            _write_metrics(trainer, model_name, data, seed, num_params)
    except BaseException as exception:  # (Ctrl-C too) callbacks put back what they changed
        hooks.call("on_exception", trainer, exception)
        raise
    stopped = trainer.stopped()
    if stopped:
        log(stopped["reason"])
        _write_metrics(trainer, model_name, data, seed, num_params)
    hooks.call("on_train_end", trainer)
    metrics = _metrics(model_name, data, config, seed, num_params, history, task.metric, stopped)
    if history:
        best = metrics["best"]
        log(f"validation {task.metric}: {metrics['final'][task.metric]:.4f} (last epoch, {out / CHECKPOINT}); "
            f"best {best[task.metric]:.4f} (epoch {best['epoch']}, {out / BEST})")
    return metrics


def _write_metrics(trainer, model_name, data, seed, num_params):
    """metrics.json, from the run's history so far (rank 0 only)."""
    if not trainer.is_main:
        return
    metrics = _metrics(model_name, data, trainer.config, seed, num_params, trainer.history, trainer.metric,
                       trainer.stopped())
    with naming(trainer.out):
        trainer.out.mkdir(parents=True, exist_ok=True)
    with naming(trainer.out / METRICS):
        _write_json(trainer.out / METRICS, metrics)


def _create(model_name, meta, overrides):
    """The model, built with the data's overrides and the run's ``model_overrides`` (recorded in ``meta``)."""
    from ember.zoo import create_model

    meta["model_overrides"] = {**meta["model_overrides"], **overrides}
    try:
        return create_model(model_name, **meta["model_overrides"])
    except TypeError as exc:
        if not overrides:
            raise
        raise ZooError(f"model overrides {json.dumps(overrides)} do not fit {model_name!r}: {exc}") from None


def _starting_point(model, config, resuming):
    """The model a run trains: ``init_weights`` loaded (fine-tuning; a resumed run loads its
    checkpoint instead), then QAT-prepared when ``quantize`` is "qat" (ember/zoo/quantizable.py)."""
    if config.get("init_weights") and not resuming:
        from ember.zoo.weights import read_checkpoint

        state_dict, _ = read_checkpoint(config["init_weights"])
        try:
            model.load_state_dict(state_dict)
        except RuntimeError as exc:
            raise ZooError(f"the starting weights {config['init_weights']!r} do not fit the model: {exc}") from None
    if config.get("quantize") == "qat":
        from ember.zoo.quantizable import prepare_qat_resnet

        model = prepare_qat_resnet(model)
    elif config.get("quantize") is not None:
        raise ZooError(f"a training run can only quantize with 'qat', not {config['quantize']!r}")
    return model


def fraction_of(dataset, fraction, seed):
    """A seeded random ``fraction`` of ``dataset`` (the option ``train_fraction``; all of it at 1)."""
    import numpy as np

    import ember

    if not 0 < fraction <= 1:
        raise ZooError(f"the training fraction must be in (0, 1], got {fraction}")
    if fraction == 1:
        return dataset
    count = max(1, round(len(dataset) * fraction))
    return ember.data.Subset(dataset, np.random.default_rng(seed).permutation(len(dataset))[:count].tolist())


@contextlib.contextmanager
def _removed_if_left_empty(out):
    """Remove ``out`` (and the parents made for it) if the block fails before writing anything there."""
    made = [folder for folder in (out, *out.parents) if not folder.exists()]
    try:
        yield
    except BaseException:
        for folder in made:  # innermost first
            try:
                folder.rmdir()  # only if still empty
            except OSError:
                break
        raise


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def fitting(task, model_name, data):
    """Errors inside the block mean the dataset does not fit the model (a detection
    dataset given to a classifier, 3-channel images to a 1-channel checkpoint): they
    become a ZooError naming both, not a traceback from deep inside a layer."""
    try:
        yield
    except ZooError:
        raise
    except (RuntimeError, ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        raise ZooError(f"dataset {data!r} does not fit model {model_name!r} ({task.name} task): "
                       f"{type(exc).__name__}: {exc}") from exc


def check_fits(task, model, loader, model_name, data):
    """Run one validation batch through the model (inside ``fitting``), so that samples
    the model cannot take are refused before training or evaluation starts."""
    import ember

    batch = next(iter(loader), None)
    if batch is None:
        raise ZooError(f"dataset {data!r} has no validation samples")
    was_training = model.training
    model.eval()
    try:
        with ember.no_grad():
            task.loss(model, batch)
    finally:
        model.train(was_training)


def best_epoch(history, metric):
    """The number of the epoch with the highest validation ``metric`` (the first of equals)."""
    if not history:
        return None
    best = max(history, key=lambda record: (record["val"][metric], -record["epoch"]))
    return best["epoch"]


def train_one_epoch(task, model, optimizer, scheduler, loader, epoch, config,
                    progress=True, hooks=CallbackList(()), trainer=None):
    """One pass over ``loader``: forward, loss, backward, (clip), step; returns the
    epoch record. ``hooks`` are called with ``trainer`` around each step (NOTE [ The
    hooks of a run ]); the pass ends early when one of them stops the run."""
    from tqdm import tqdm

    import ember

    model.train()
    total_loss, seen, steps = 0.0, 0, 0
    started_wall, started_cpu = time.perf_counter(), time.process_time()
    # (off when output is not a terminal)
    bar = tqdm(total=len(loader), desc=f"epoch {epoch + 1}/{config['epochs']}",
               unit="batch", disable=not progress, leave=False, dynamic_ncols=True)
    for index, batch in enumerate(loader):
        loss = task.loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        if hooks.before_step(trainer, index, loss):
            break  # stopped before the step: the parameters stay the bad loss's
        if config["grad_clip"]:
            ember.nn.utils.clip_grad_norm_(model.parameters(), config["grad_clip"])
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        size, value = task.batch_size(batch), loss.item()
        total_loss += value * size
        seen += size
        steps += 1
        if hooks.batch_end(trainer, value):
            break
        rate = seen / max(time.perf_counter() - started_wall, 1e-9)
        bar.set_postfix(loss=f"{total_loss / seen:.4f}", rate=f"{rate:.0f}/s",
                        refresh=False)
        bar.update(1)
    # the final loss and rate, even for an epoch shorter than tqdm's refresh interval
    bar.refresh()
    bar.close()
    seconds = time.perf_counter() - started_wall
    return {"epoch": epoch + 1, "train_loss": total_loss / max(seen, 1), "steps": steps,
            "samples": seen, "seconds": seconds,
            "cpu_seconds": time.process_time() - started_cpu,
            "samples_per_second": seen / max(seconds, 1e-9),
            "lr": optimizer.param_groups[0]["lr"]}


def evaluate(model_name, weights, data, batch_size=256, workers=0, seed=0, metrics=None):
    """Load ``weights`` (a checkpoint) into ``model_name`` and evaluate it on ``data``'s
    validation split; returns the task's metrics dict, with ``metrics`` (short names:
    ember/trainer/validation_metrics.py) among them."""
    from ember.zoo import create_model, get_task

    task = get_task(model_name)
    if metrics:
        task = MetricsTask(task, metrics, model_name)
    model = create_model(model_name, pretrained=weights)
    _, val_set = task.datasets(data, seed=seed)
    loader = task.loader(val_set, batch_size, train=False, workers=workers)
    with fitting(task, model_name, data):
        check_fits(task, model, loader, model_name, data)
    return task.evaluate(model, loader)


def split_note(dataset):
    """`` (the 'test' split)``: which split of an ember.data dataset is validated on (the CLI
    says "validation", the Python name is the split's), or "" for a task's own data."""
    split = getattr(dataset, "split", None)
    return f" (the {split!r} split)" if isinstance(split, str) else ""


def validation_note(model_name, data, seed=0):
    """``split_note`` of the validation set ``evaluate`` uses."""
    from ember.zoo import get_task

    return split_note(get_task(model_name).datasets(data, seed=seed)[1])


def predict(model_name, weights, input, out_dir=None, top_k=5):
    """The lines ``ember predict`` prints for ``input`` (the task decides what it may be).

    Files the prediction writes (a detector's pictures) go to ``out_dir``, by default
    ``predictions/`` beside the checkpoint (in the run's folder), never the current one.
    """
    from ember.zoo import create_model, get_task
    from ember.zoo.weights import read_checkpoint

    task = get_task(model_name)
    model = create_model(model_name, pretrained=weights)
    _, checkpoint = read_checkpoint(weights)
    meta = (checkpoint or {}).get("data", {})
    if out_dir is None:
        out_dir = pathlib.Path(weights).parent / "predictions"
    return task.predict(model, input, meta, out_dir=str(out_dir), top_k=top_k)


def resumed_config(path, model_name):
    """The options of the run whose training checkpoint is ``path`` (what ``--resume`` keeps)."""
    return _load_checkpoint(path, model_name)["config"]


def _load_checkpoint(path, model_name):
    from ember.zoo.weights import read_checkpoint

    _, checkpoint = read_checkpoint(path)
    found = (checkpoint or {}).get("model_name")
    if found != model_name or "optimizer" not in checkpoint:
        what = f"a training checkpoint of {found!r}" if found else "not a training checkpoint of ember train"
        raise ZooError(f"cannot resume {model_name!r} from {str(path)!r}: it is {what}")
    return checkpoint


def _restore(checkpoint, model, optimizer, scheduler):
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if scheduler is not None and checkpoint.get("scheduler") is not None:
        scheduler.load_state_dict(_progress_over_new_plan(scheduler.state_dict(), checkpoint["scheduler"]))
    return checkpoint["epoch"], list(checkpoint.get("history", []))


# How far a schedule has come, as against its plan (total_steps, T_max, ...), which a
# resumed run with another --epochs re-plans over its new total.
_PROGRESS = ("last_epoch", "_step_count", "_last_lr", "_get_lr_called_within_step", "_is_initial")


def _progress_over_new_plan(planned, saved):
    """The freshly built scheduler's state with the saved run's progress: resuming with
    more epochs stretches the schedule and carries on from the step reached. (torch's
    ``load_state_dict`` restores the old plan too, and OneCycleLR then refuses to step past
    its old ``total_steps``.)"""
    return dict(planned, **{key: saved[key] for key in _PROGRESS if key in saved})


def _epoch_line(record, epochs, metric, extra=()):
    val = record["val"]
    others = "".join(f", val {name} {val[name]:.4f}" for name in extra if name != metric and name in val)
    return (f"epoch {record['epoch']}/{epochs}: train loss {record['train_loss']:.4f}, "
            f"val loss {val['loss']:.4f}, val {metric} {val[metric]:.4f}{others} "
            f"({record['seconds']:.1f} s, {_rate(record)})")


def _rate(record):
    """Samples per second: of the job, and per rank in a data-parallel run (whose ranks
    each train on ``1 / ranks`` of the epoch in the same time)."""
    ranks = record.get("ranks", 1)
    if ranks == 1:
        return f"{record['samples_per_second']:.0f} samples/s"
    return f"{record['samples_per_second'] * ranks:.0f} samples/s in all, {record['samples_per_second']:.0f} per rank"


def _metrics(model_name, data, config, seed, num_params, history, metric, stopped=None):
    final = dict(history[-1]["val"]) if history else {}
    number = best_epoch(history, metric)
    best = next((dict(r["val"], epoch=number) for r in history if r["epoch"] == number), {})
    return {"model": model_name, "data": data, "metric": metric, "seed": seed, "parameters": num_params,
            "config": config, "epochs": history, "final": final, "best": best,
            "train_seconds": sum(r["seconds"] for r in history),
            "train_cpu_seconds": sum(r["cpu_seconds"] for r in history), "checkpoint": CHECKPOINT,
            "best_checkpoint": BEST, **({"stopped": stopped} if stopped else {})}


def _write_json(path, obj):
    """Write JSON atomically, as ``ember.save`` writes (ember/serialization/atomic.py)."""
    from ember.serialization.atomic import atomic_write

    with atomic_write(path, "w") as f:
        f.write(json.dumps(obj, indent=2) + "\n")
