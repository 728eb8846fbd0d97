"""``ember compress``: prune and/or quantize a trained zoo model, fine-tune, measure, save.

PyTorch counterpart: none (torch ships the pieces: torch/nn/utils/prune.py and
torch/ao/quantization/quantize.py); the pieces here are ember.nn.utils.prune and the
ember-quantization plugin.

    $ ember compress resnet8_cifar --weights runs/r8/best.pt --data digits --prune 0.5 --out runs/r8-pruned
    $ ember compress transformer_seq2seq_tiny --weights ckpt.pt --data copy --quantize dynamic --out runs/t8

Pruning is global L1 (``--method l1``) over every Conv2d and Linear weight, or per-layer
L1 structured over output channels (``--method ln``), then ``--finetune-epochs`` of SGD
with the masks held by the pruning hooks, then ``prune.remove`` (plain weights with
zeros, so ``ember eval`` reads the checkpoint like any other). ``--quantize dynamic``
swaps every Linear for a dynamic int8 one; ``--quantize static`` rewrites a CIFAR
ResNet for eager-mode static int8 (NOTE [ Static int8 for the zoo's CIFAR ResNets ]) and
calibrates it on training batches. The checkpoint records either under ``"compression"``
and ``create_model`` rebuilds that structure before loading. ``--quantize qat``
fine-tunes a CIFAR ResNet with fake quantization through ``ember train``'s loop, then
converts it (NOTE [ Quantization-aware training of the zoo's CIFAR ResNets ]).
``--distill-from TEACHER --teacher-weights CKPT`` first trains MODEL
(``--student-overrides '{"width": 4}'``) taught by the teacher, through the zoo's
training loop (ember/zoo/distillation.py), into ``OUT/student``.
"""

import pathlib
import time

from ember.zoo.errors import ZooError


def apply_recorded_compression(model, checkpoint):
    """Rebuild the structure a compressed checkpoint's state dict needs (called by create_model)."""
    quantize = ((checkpoint or {}).get("compression") or {}).get("quantize")
    if quantize is None:
        return model
    record = checkpoint["compression"]
    if quantize == "qat" and record.get("stage") == "prepared":  # a QAT fine-tuning checkpoint
        return prepare_qat_resnet(model)
    if quantize in ("static", "qat"):  # the int8 structure; the state dict then brings weights and qparams
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # observers that saw no data
            return quantize_static(model, calibration=[], classifier=record.get("classifier", "float"))
    if quantize != "dynamic":
        raise ZooError(f"this checkpoint was quantized with {quantize!r}, which ember cannot rebuild")
    return _quantization().quantize_dynamic(model, inplace=True)


# NOTE [ Static int8 for the zoo's CIFAR ResNets ]
# Eager-mode static quantization needs the model to say where tensors enter and leave
# the int8 region and to do its residual additions through a FloatFunctional. The
# zoo's CifarResNet does neither, so ``quantize_static`` rewrites an eval-mode copy:
# every conv-bn(-relu) is fused, each BasicBlock's `out + identity` then ReLU becomes
# `skip_add.add_relu` (a QFunctional after convert), a QuantStub opens the network and
# a DeQuantStub closes it before the average pool, which stays float (ember has no
# quantized pooling); a second pair of stubs, `quant_fc` and `dequant_fc`, puts the
# classifier `fc` back in int8 (``classifier="int8"``, what ``ember compress`` writes;
# ``"float"`` rebuilds checkpoints written before, whose `fc` stayed float). Calibration
# runs the training loader's first batches through the observers.
def quantize_static(model, calibration, batches=8, classifier="int8"):
    """An int8 copy of a zoo CIFAR ResNet (NOTE [ Static int8 for the zoo's CIFAR ResNets ])."""
    import ember

    eq = _quantization()
    prepared = eq.prepare(quantizable_resnet(model, eq.get_default_qconfig("x86"), classifier), inplace=True)
    with ember.no_grad():
        for index, (inputs, _) in enumerate(calibration):
            if index == batches:
                break
            prepared(inputs)
    return eq.convert(prepared, inplace=True)


# NOTE [ Quantization-aware training of the zoo's CIFAR ResNets ]
# ``ember compress MODEL --weights CKPT --quantize qat`` rewrites the model as static
# quantization does (fused conv-bn(-relu), stubs, ``skip_add``), gives it torch's QAT
# qconfig for x86 and ``prepare_qat``s it: every conv and the classifier fake-quantize
# their weights, every observed output is fake-quantized, and the straight-through
# gradient lets SGD fine-tune the float weights under int8 rounding. The fine-tuning is
# an ordinary ``ember train`` run (option ``quantize="qat"`` with ``init_weights``):
# progress bar, checkpoints of the prepared model (recorded as ``{"quantize": "qat",
# "stage": "prepared"}``, which ``create_model`` rebuilds, so ``--resume`` and ``ember
# eval`` read them), per-epoch validation. Validation freezes the observers
# (``QatTask``), so the validation split never moves the scale and zero point. Then
# ``convert`` gives the same int8 modules as static quantization, and the compressed
# checkpoint records ``{"quantize": "qat"}``. ember fuses BatchNorm before QAT (its
# fusion is eval-mode only), so the fine-tuned convolutions carry the folded BatchNorm;
# torch's ConvBn QAT modules, which keep BatchNorm training, are not ported.
def prepare_qat_resnet(model):
    """A QAT-prepared copy of a zoo CIFAR ResNet (NOTE [ Quantization-aware training of the zoo's CIFAR ResNets ])."""
    eq = _quantization()
    return eq.prepare_qat(quantizable_resnet(model, eq.get_default_qat_qconfig("x86")).train(), inplace=True)


class QatTask:
    """A task whose evaluation leaves a QAT model's observers as training left them."""

    def __init__(self, task):
        self.task = task

    def __getattr__(self, name):
        return getattr(self.task, name)

    def evaluate(self, model, loader):
        fake_quantizers = [m for m in model.modules() if type(m).__name__ == "FakeQuantize"]
        states = [int(m.observer_enabled[0]) for m in fake_quantizers]
        for module in fake_quantizers:
            module.disable_observer()
        try:
            return self.task.evaluate(model, loader)
        finally:
            for module, state in zip(fake_quantizers, states):
                module.enable_observer(bool(state))


def quantizable_resnet(model, qconfig, classifier="int8"):
    """An eval-mode copy of a zoo CIFAR ResNet rewritten for eager-mode quantization, with
    ``qconfig`` (NOTE [ Static int8 for the zoo's CIFAR ResNets ])."""
    import copy

    eq = _quantization()
    if type(model).__name__ != "CifarResNet":
        raise ZooError(f"static quantization and QAT of {type(model).__name__} are not done (CIFAR ResNets only)")
    model = copy.deepcopy(model).eval()
    eq.fuse_modules(model, [["conv1", "bn1", "relu"]], inplace=True)
    for stage in (model.layer1, model.layer2, model.layer3):
        for block in stage:
            _quantizable_block(block, eq)
    int8_classifier = classifier == "int8"
    forward = _quantizable_resnet_forward if int8_classifier else _quantizable_resnet_forward_float_fc
    model.__class__ = _subclass(type(model), "QuantizableCifarResNet" + ("" if int8_classifier else "FloatFc"),
                                forward)
    model.quant, model.dequant = eq.QuantStub(), eq.DeQuantStub()
    if int8_classifier:
        model.quant_fc, model.dequant_fc = eq.QuantStub(), eq.DeQuantStub()
    model.qconfig = qconfig
    if not int8_classifier:
        model.fc.qconfig = None
    model.avgpool.qconfig = None
    return model


def finetune_qat(model_name, model, checkpoint, data, out, epochs, lr, batch_size, seed, log):
    """QAT-fine-tune ``model`` with ``ember train``'s loop into ``out/qat`` and convert the best
    epoch to int8 (NOTE [ Quantization-aware training of the zoo's CIFAR ResNets ])."""
    import ember
    from ember.zoo import create_model, training

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
    return _quantization().convert(prepared, inplace=True)


def _quantizable_block(block, eq):
    eq.fuse_modules(block, [["conv1", "bn1", "relu"], ["conv2", "bn2"]], inplace=True)
    if block.downsample is not None:
        eq.fuse_modules(block.downsample, [["0", "1"]], inplace=True)
    block.skip_add = eq.FloatFunctional()
    block.__class__ = _subclass(type(block), "QuantizableBasicBlock", _quantizable_block_forward)


def _quantizable_block_forward(self, x):
    identity = x if self.downsample is None else self.downsample(x)
    return self.skip_add.add_relu(self.conv2(self.conv1(x)), identity)


def _quantizable_resnet_forward(self, x):
    x = self.conv1(self.quant(x))
    x = self.dequant(self.layer3(self.layer2(self.layer1(x))))
    return self.dequant_fc(self.fc(self.quant_fc(self.avgpool(x).flatten(1))))


def _quantizable_resnet_forward_float_fc(self, x):
    x = self.conv1(self.quant(x))
    x = self.dequant(self.layer3(self.layer2(self.layer1(x))))
    return self.fc(self.avgpool(x).flatten(1))


_SUBCLASSES = {}


def _subclass(base, name, forward):
    """One subclass of ``base`` per (base, name) with ``forward`` replaced (kept for deepcopy and pickle)."""
    key = (base, name)
    if key not in _SUBCLASSES:
        _SUBCLASSES[key] = type(name, (base,), {"forward": forward, "__module__": __name__})
    return _SUBCLASSES[key]


def _quantization():
    try:
        import ember_quantization
    except ImportError:
        raise ZooError("quantization needs the ember-quantization plugin (pip install ember-quantization)") from None
    return ember_quantization


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


def measure(task, model, loader, path=None):
    """One table row: parameters, non-zeros, bytes on disk, the task's metric, inference seconds."""
    import ember

    tensors = [t for t in list(model.parameters()) + list(model.buffers()) if t.dtype.is_floating_point]
    int8 = [m for m in model.modules() if hasattr(m, "_weight") and hasattr(m._weight, "int_repr")]
    tensors += [m._bias for m in int8 if m._bias is not None]
    count = sum(t.numel() for t in tensors) + sum(m._weight.numel() for m in int8)
    nonzero = sum(int((t != 0).sum()) for t in tensors)
    nonzero += sum(int((m._weight.dequantize() != 0).sum()) for m in int8)
    model.eval()
    started = time.perf_counter()
    with ember.no_grad():
        metrics = task.evaluate(model, loader)
    seconds = time.perf_counter() - started
    return {"parameters": count, "nonzero": nonzero, "bytes": path.stat().st_size if path else None,
            "metric": metrics[task.metric], "seconds": seconds}


def compress(model_name, weights, data, out, prune=None, method="l1", quantize=None, finetune_epochs=1,
             lr=0.01, batch_size=64, seed=0, distill_from=None, teacher_weights=None, student_overrides=None,
             log=print, **distill_options):
    """Compress ``weights`` of ``model_name``; writes ``out/compressed.pt`` and returns the before/after rows.

    With ``distill_from``, ``model_name`` (built with ``student_overrides``) is first trained
    for ``finetune_epochs`` taught by that teacher, through the zoo's training loop into
    ``out/student`` (ember/zoo/distillation.py; ``distill_options``: ``temperature``,
    ``alpha``), and the "before" row is the teacher's.
    """
    from ember.zoo.training import _removed_if_left_empty

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
    from ember.zoo import create_model, get_task
    from ember.zoo.training import check_fits, fitting
    from ember.zoo.weights import read_checkpoint

    task = get_task(model_name)
    train_set, val_set = task.datasets(data, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    val_loader = task.loader(val_set, 256, train=False)
    if distill_from is not None:  # the zoo's training loop with the distillation criterion
        from ember.zoo.distillation import distill

        if teacher_weights is None:
            raise ZooError("--distill-from needs --teacher-weights CKPT")
        before = measure(task, create_model(distill_from, pretrained=teacher_weights), val_loader,
                         pathlib.Path(teacher_weights))
        distill(distill_from, teacher_weights, model_name, data, out / "student", student_overrides=student_overrides,
                epochs=max(finetune_epochs, 1), seed=seed, log=log, **distill_options)
        weights = out / "student" / "best.pt"
    _, checkpoint = read_checkpoint(weights)
    model = create_model(model_name, pretrained=weights)
    with fitting(task, model_name, data):  # data the model cannot take: one line, before any work
        check_fits(task, model, val_loader, model_name, data)
    if distill_from is None:
        before = measure(task, model, val_loader, pathlib.Path(weights))
    record = {"distilled_from": distill_from} if distill_from else {}
    if prune is not None:
        targets = prune_model(model, prune, method)
        if finetune_epochs:
            finetune(task, model, task.loader(train_set, batch_size, train=True, seed=seed), finetune_epochs, lr)
        for module, name in targets:
            ember.nn.utils.prune.remove(module, name)
        record.update(prune=prune, method=method, finetune_epochs=finetune_epochs)
    if quantize == "dynamic":
        model = _quantization().quantize_dynamic(model.eval())
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
    rows = [("before", before), ("after", after)]
    log(format_table(rows, task.metric))
    return rows


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
# ``load_state_dict`` copies as usual (tests/core/zoo/test_compression.py loads the
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


def format_table(rows, metric):
    width = max(12, len(metric) + 2)
    header = f"{'':8}{'parameters':>12}{'non-zeros':>12}{'bytes':>12}{metric:>{width}}{'eval s':>10}"
    lines = [header]
    for name, row in rows:
        lines.append(f"{name:8}{row['parameters']:>12,}{row['nonzero']:>12,}{row['bytes'] or 0:>12,}"
                     f"{row['metric']:>{width}.4f}{row['seconds']:>10.2f}")
    return "\n".join(lines)


def cmd_compress(args):
    from ember.zoo.commands import distillation_options, json_option

    given = distillation_options(args)  # (refuses --temperature/--alpha/--teacher-weights without --distill-from)
    options = {key: given[key] for key in ("temperature", "alpha") if given.get(key) is not None}
    compress(args.model, args.weights, args.data, args.out, prune=args.prune, method=args.method,
             quantize=args.quantize, finetune_epochs=args.finetune_epochs, lr=args.lr, seed=args.seed,
             distill_from=args.distill_from, teacher_weights=args.teacher_weights,
             student_overrides=json_option(args.student_overrides, "--student-overrides"), **options)
    return 0


def add_commands(sub):
    """Add ``compress`` to the ``ember`` parser's subcommands."""
    from ember.zoo.commands import add_distillation_arguments

    p = sub.add_parser("compress", help="prune and/or quantize a trained zoo model")
    p.add_argument("model")
    p.add_argument("--weights", help="the trained checkpoint (not needed with --distill-from)")
    p.add_argument("--data", required=True, help="dataset to fine-tune and evaluate on")
    p.add_argument("--prune", type=float, metavar="AMOUNT", help="fraction of weights to prune, in [0, 1]")
    p.add_argument("--method", default="l1", choices=("l1", "ln"), help="global L1 (default) or L1 channels")
    p.add_argument("--quantize", choices=("dynamic", "static", "qat"),
                   help="int8: dynamic (Linear layers), static or qat (quantization-aware fine-tuning; CIFAR ResNets)")
    add_distillation_arguments(p)
    p.add_argument("--student-overrides", metavar="JSON",
                   help='builder keywords for the student, e.g. \'{"width": 4}\'')
    p.add_argument("--finetune-epochs", type=int, default=1, help="fine-tune (or, distilling, training) epochs")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="folder for compressed.pt")
    p.set_defaults(func=cmd_compress)
