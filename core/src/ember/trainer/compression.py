"""The compression workflow behind ``ember compress``: prune, quantize and/or distill a
trained zoo model, fine-tune it, measure it before and after, and save it.

PyTorch counterpart: none (torch ships the pieces: torch/nn/utils/prune.py and
torch/ao/quantization/quantize.py); the pieces here are ember.nn.utils.prune and the
ember-quantization plugin. The command (its arguments and the printed table) is in
ember/trainer/commands.py; the int8 structure a compressed checkpoint records, which
``create_model`` rebuilds, is in ember/zoo/quantizable.py.

Pruning is global L1 (``method="l1"``) over every Conv2d and Linear weight, or per-layer
L1 structured over output channels (``"ln"``), then ``finetune_epochs`` of SGD with the
masks held by the pruning hooks, then ``prune.remove`` (plain weights with zeros, so
``ember eval`` reads the checkpoint like any other). ``quantize="dynamic"`` swaps every
Linear for a dynamic int8 one; ``"static"`` rewrites a CIFAR ResNet for eager-mode
static int8 (NOTE [ Static int8 for the zoo's CIFAR ResNets ] in ember/zoo/quantizable.py)
and calibrates it on training batches. The checkpoint records either under
``"compression"`` and ``create_model`` rebuilds that structure before loading.
``"qat"`` fine-tunes a CIFAR ResNet with fake quantization through the training loop,
then converts it (NOTE [ Quantization-aware training of the zoo's CIFAR ResNets ] in
ember/trainer/qat.py).
``distill_from=TEACHER`` first trains the model (built with ``student_overrides``)
taught by the teacher, through the same loop (ember/trainer/distillation.py), into
``out/student``.
"""

import pathlib
import time

from ember.zoo.errors import ZooError
from ember.zoo.quantizable import quantization_plugin, quantize_static


def finetune_qat(model_name, model, checkpoint, data, out, epochs, lr, batch_size, seed, log):
    """QAT-fine-tune ``model`` with ``ember train``'s loop into ``out/qat`` and convert the best
    epoch to int8 (NOTE [ Quantization-aware training of the zoo's CIFAR ResNets ])."""
    import ember
    from ember.trainer import training
    from ember.zoo import create_model

    if type(model).__name__ != "CifarResNet":  # before any training: say so at once
        raise ZooError(f"--quantize qat of {type(model).__name__} is not done (CIFAR ResNets only)")
    overrides = (checkpoint or {}).get("model_overrides", {})
    start = out / "qat-start.pt"  # the (pruned, distilled) float model the fine-tuning starts from
    ember.save({"model_name": model_name, "model": model.state_dict(), "model_overrides": overrides,
                "data": (checkpoint or {}).get("data", {"name": data})}, start)
    training.train(model_name, data, out / "qat", seed=seed, log=log, epochs=max(epochs, 1), batch_size=batch_size,
                   lr=lr, optimizer="sgd", momentum=0.9, weight_decay=0.0, scheduler="cosine",
                   init_weights=str(start), quantize="qat", model_overrides=overrides)
    prepared = create_model(model_name, pretrained=out / "qat" / training.BEST).eval()
    return quantization_plugin().convert(prepared, inplace=True)


def distill(teacher, teacher_weights, student, data, out, student_overrides=None, fraction=1.0, epochs=10,
            batch_size=64, lr=0.05, temperature=4.0, alpha=0.9, seed=0, log=print, progress=False):
    """Train ``student`` on ``fraction`` of ``data`` taught by ``teacher`` (alone if ``teacher`` is None)
    through the training loop; returns the run's metrics (``metrics["final"]`` is the last
    epoch's validation). Writes ``out/checkpoint.pt`` and ``out/best.pt``.

    The recipe is SGD with Nesterov momentum, weight decay 5e-4 and a cosine schedule, the
    same for both runs of a comparison.
    """
    from ember.trainer import training

    options = {"epochs": epochs, "batch_size": batch_size, "lr": lr, "optimizer": "sgd", "momentum": 0.9,
               "nesterov": True, "weight_decay": 5e-4, "scheduler": "cosine", "train_fraction": fraction,
               "model_overrides": student_overrides}
    if teacher is not None:
        options.update(distill_from=teacher, teacher_weights=str(teacher_weights), temperature=temperature,
                       alpha=alpha)
    return training.train(student, data, out, seed=seed, progress=progress, log=log, **options)


def _prunable(model):
    import ember

    return [(m, "weight") for m in model.modules() if isinstance(m, (ember.nn.Conv2d, ember.nn.Linear))]


def prune_model(model, amount, method):
    """Attach pruning masks: global L1 over all Conv2d/Linear weights, or L1 channels per layer."""
    from ember.nn.utils import prune

    targets = _prunable(model)
    if method == "l1":
        prune.global_unstructured(targets, pruning_method=prune.L1Unstructured, amount=amount)
    elif method == "ln":
        for module, name in targets:
            prune.ln_structured(module, name, amount=amount, n=1, dim=0)
    else:
        raise ZooError(f"unknown pruning method {method!r}: use 'l1' (global unstructured) or 'ln' (channels)")
    return targets


def finetune(task, model, loader, epochs, lr):
    """Plain SGD with momentum; the pruning hooks keep the pruned weights at zero."""
    import ember

    optimizer = ember.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    model.train()
    for _ in range(epochs):
        for batch in loader:
            loss = task.loss(model, batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


# NOTE [ Like with like in the compression table ]
# Both rows of ``ember compress``'s table measure the model alone. "parameters" counts
# what ``ember train`` counts, ``model.parameters()``, plus the weights and biases of
# int8 layers (packed, they are not Parameters); buffers such as BatchNorm's running
# statistics are not parameters, in either. "bytes" is the size of the model's state
# dict written as ``compressed.pt`` writes it (NOTE [ One storage per dtype in a
# compressed checkpoint ]): a training checkpoint's file also holds the optimizer's
# state (AdamW's two moments double it), which is no part of the model, so its size
# would make any compression look twice as good as it is.
def measure(task, model, loader, path=None):
    """One table row: parameters, non-zeros, the weights' bytes, the task's metric,
    inference seconds (NOTE [ Like with like in the compression table ]); with ``path``,
    also ``file_bytes``, the size of that file."""
    import ember

    int8 = [m for m in model.modules() if hasattr(m, "_weight") and hasattr(m._weight, "int_repr")]
    tensors = list(model.parameters()) + [m._bias for m in int8 if m._bias is not None]
    count = sum(t.numel() for t in tensors) + sum(m._weight.numel() for m in int8)
    nonzero = sum(int((t != 0).sum()) for t in tensors)
    nonzero += sum(int((m._weight.dequantize() != 0).sum()) for m in int8)
    model.eval()
    started = time.perf_counter()
    with ember.no_grad():
        metrics = task.evaluate(model, loader)
    seconds = time.perf_counter() - started
    return {"parameters": count, "nonzero": nonzero, "bytes": weights_bytes(model), "metric": metrics[task.metric],
            "seconds": seconds, "file_bytes": path.stat().st_size if path else None}


def weights_bytes(model):
    """The bytes of ``model``'s state dict as ``compressed.pt`` stores it."""
    import io

    import ember

    buffer = io.BytesIO()
    ember.save(share_storages(model.state_dict()), buffer)
    return buffer.tell()


def compress(model_name, weights, data, out, prune=None, method="l1", quantize=None, finetune_epochs=1,
             lr=0.01, batch_size=64, seed=0, distill_from=None, teacher_weights=None, student_overrides=None,
             log=print, **distill_options):
    """Compress ``weights`` of ``model_name``; writes ``out/compressed.pt`` and returns the before/after
    rows (``ember compress`` prints them as a table, ember/trainer/commands.py).

    With ``distill_from``, ``model_name`` (built with ``student_overrides``) is first trained
    for ``finetune_epochs`` taught by that teacher, through the training loop into
    ``out/student`` (ember/trainer/distillation.py; ``distill_options``: ``temperature``,
    ``alpha``), and the "before" row is the teacher's. ``log`` receives those training runs' lines.
    """
    from ember.trainer.training import _removed_if_left_empty

    if quantize not in (None, "dynamic", "static", "qat"):
        raise ZooError(f"--quantize {quantize}: choose dynamic (int8 Linear layers), static or qat (CIFAR ResNets)")
    if prune is None and quantize is None and distill_from is None:
        raise ZooError("nothing to do: pass --prune AMOUNT, --quantize dynamic|static|qat and/or --distill-from "
                       "TEACHER")
    if prune is not None and not 0 <= prune <= 1:
        raise ZooError(f"--prune takes the fraction of weights to remove, in [0, 1]; got {prune}")
    if finetune_epochs < 0:
        raise ZooError(f"--finetune-epochs must be 0 or more, got {finetune_epochs}")
    if distill_from is None and weights is None:
        raise ZooError("--weights CKPT is needed (unless --distill-from trains the model)")
    if weights is not None:
        _check_checkpoint_of(model_name, weights)
    out = pathlib.Path(out)
    with _removed_if_left_empty(out):  # a run that fails before writing leaves no empty folder
        return _compress(model_name, weights, data, out, prune, method, quantize, finetune_epochs, lr, batch_size,
                         seed, distill_from, teacher_weights, student_overrides, log, distill_options)


def _check_checkpoint_of(model_name, weights):
    """Refuse a checkpoint of another zoo model at once, in one line."""
    from ember.zoo.weights import read_checkpoint

    trained = ((read_checkpoint(weights)[1]) or {}).get("model_name")
    if trained is not None and trained != model_name:
        raise ZooError(f"{str(weights)!r} is a checkpoint of model {trained!r}, not {model_name!r}")


def _compress(model_name, weights, data, out, prune, method, quantize, finetune_epochs, lr, batch_size, seed,
              distill_from, teacher_weights, student_overrides, log, distill_options):
    import ember
    from ember.trainer.training import check_fits, fitting
    from ember.zoo import create_model, get_task
    from ember.zoo.weights import read_checkpoint

    task = get_task(model_name)
    train_set, val_set = task.datasets(data, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    val_loader = task.loader(val_set, 256, train=False)
    if distill_from is not None:  # the training loop with the distillation criterion
        if teacher_weights is None:
            raise ZooError("--distill-from needs --teacher-weights CKPT")
        before = measure(task, create_model(distill_from, pretrained=teacher_weights), val_loader)
        distill(distill_from, teacher_weights, model_name, data, out / "student", student_overrides=student_overrides,
                epochs=max(finetune_epochs, 1), seed=seed, log=log, **distill_options)
        weights = out / "student" / "best.pt"
    _, checkpoint = read_checkpoint(weights)
    model = create_model(model_name, pretrained=weights)
    with fitting(task, model_name, data):  # data the model cannot take: one line, before any work
        check_fits(task, model, val_loader, model_name, data)
    if distill_from is None:
        before = measure(task, model, val_loader)
    record = {"distilled_from": distill_from} if distill_from else {}
    if prune is not None:
        targets = prune_model(model, prune, method)
        if finetune_epochs:
            finetune(task, model, task.loader(train_set, batch_size, train=True, seed=seed), finetune_epochs, lr)
        for module, name in targets:
            ember.nn.utils.prune.remove(module, name)
        record.update(prune=prune, method=method, finetune_epochs=finetune_epochs)
    if quantize == "dynamic":
        model = quantization_plugin().quantize_dynamic(model.eval())
        record["quantize"] = "dynamic"
    if quantize == "static":
        model = quantize_static(model, task.loader(train_set, batch_size, train=True, seed=seed))
        record.update(quantize="static", classifier="int8")
    if quantize == "qat":
        model = finetune_qat(model_name, model, checkpoint, data, out, finetune_epochs, lr, batch_size, seed, log)
        record.update(quantize="qat", classifier="int8")
    path = out / "compressed.pt"
    ember.save({"model_name": model_name, "model_overrides": (checkpoint or {}).get("model_overrides", {}),
                "data": {**task.describe(train_set), "name": data, **((checkpoint or {}).get("data") or {})},
                "model": share_storages(model.state_dict()),
                "compression": record}, path)
    after = measure(task, model, val_loader, path)
    return [("before", before), ("after", after)]


# NOTE [ One storage per dtype in a compressed checkpoint ]
# A checkpoint is a zip with one record per storage, and each record costs about 100
# bytes of zip headers and 64-byte alignment plus its line in data.pkl, whatever its
# size. A statically quantized ResNet-8 has ~70 tensors, most of them tiny (a conv's
# float bias, its per-channel scales and zero points, 0-d output scales and zero
# points): written one storage each, those records were ~15% of the file. So
# ``share_storages`` lays every tensor of one dtype end to end in one storage and
# puts views of it in the state dict; ``ember.save`` writes each view as torch does,
# (storage, offset, size, stride), so the keys, shapes and dtypes are the state dict's
# and ``torch.load`` gives back ordinary tensors (views with a storage offset), which
# ``load_state_dict`` copies as usual (tests/core/trainer/test_compression.py loads the
# file in torch). Quantized weights share one Q*Storage per qdtype the same way.
def share_storages(state):
    """``state`` with each dtype's tensors as views of one storage (NOTE [ One storage per dtype in a
    compressed checkpoint ])."""
    import collections

    import ember

    groups = collections.defaultdict(dict)  # storage kind -> {id: tensor}

    def collect(value):
        if isinstance(value, ember.Tensor):
            groups[value.dtype][id(value)] = value
        elif getattr(value, "is_quantized", False) is True:  # a QTensor: integers, and its per-channel qparams
            groups[value.dtype][id(value._int_repr)] = value._int_repr
            if value._axis is not None:
                collect(value._scale)
                collect(value._zero_point)
        elif isinstance(value, tuple):
            for item in value:
                collect(item)

    for value in state.values():
        collect(value)
    views = {}
    for tensors in groups.values():
        flat = ember.cat([t.detach().reshape(-1) for t in tensors.values()])
        offset = 0
        for key, tensor in tensors.items():
            views[key] = flat[offset:offset + tensor.numel()].view(tensor.shape)
            offset += tensor.numel()

    def rebuild(value):
        if isinstance(value, ember.Tensor):
            return views[id(value)]
        if getattr(value, "is_quantized", False) is True:
            per_channel = value._axis is not None
            return type(value)(views[id(value._int_repr)], value.dtype,
                               rebuild(value._scale) if per_channel else value._scale,
                               rebuild(value._zero_point) if per_channel else value._zero_point, value._axis)
        if isinstance(value, tuple):
            return tuple(rebuild(item) for item in value)
        return value

    shared = type(state)((key, rebuild(value)) for key, value in state.items())
    if hasattr(state, "_metadata"):
        shared._metadata = state._metadata
    return shared

