"""The zoo's commands of the ``ember`` CLI: ``models``, ``train``, ``eval``, ``predict``,
``compress``: their arguments, and what they print.

PyTorch counterpart: none in torch; the commands follow timm's ``train.py`` /
``validate.py`` / ``inference.py`` and torchvision's reference scripts, made generic by
the model's ``Task`` (ember/zoo/tasks.py). ember/cli.py adds them with ``add_commands``.
The work is done by ember/trainer/training.py and, for ``compress``, compression.py.

    $ ember models 'resnet*'
    $ ember train resnet8_cifar --data digits --epochs 10 --out runs/digits
    $ ember train resnet8_cifar --config run.toml --early-stop val/accuracy:3 --log csv --plot
    $ ember eval resnet8_cifar --weights runs/digits/checkpoint.pt --data digits --metrics accuracy,f1
    $ ember predict resnet8_cifar --weights runs/digits/checkpoint.pt digits:0-4
    $ ember predict cbam_resnet8_cifar --weights runs/cbam/best.pt digits:0-3 --explain maps.png
    $ ember compress resnet8_cifar --weights runs/digits/best.pt --data digits --prune 0.5 --out runs/pruned
"""

import json
import pathlib
import shutil
import sys

from ember.cli import whole_number
from ember.trainer import run_config
from ember.trainer.validation_metrics import parse_metrics
from ember.zoo.errors import ZooError


def cmd_models(args):
    import ember

    infos = [ember.zoo.model_info(name) for name in ember.zoo.list_models(args.pattern)]
    if args.json:
        print(json.dumps([info.as_dict() for info in infos], indent=2, default=str))
        return 0
    if not infos:
        print(f"no model matches {args.pattern!r}", file=sys.stderr)
        return 1
    rows = [("name", "task", "params", "input", "dataset", "measured")]
    for info in infos:
        rows.append((info.name, info.task, _count(info.num_params), "x".join(map(str, info.input_size or ())) or "-",
                     info.default_dataset or "-", _measured(info.measured)))
    for line in table(rows):
        print(line)
    print(fit("(`ember models NAME --json`: the recipe, the PyTorch counterpart, how each figure was measured)",
              terminal_width()))
    return 0


def table(rows, width=None):
    """Lines of ``rows`` in aligned columns, each at most ``width`` characters (the
    terminal's, 100 when output is not a terminal): the last column is cut to fit."""
    width = width or terminal_width()
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1]
        lines.append(fit(line.rstrip(), width))
    return lines


def terminal_width():
    return shutil.get_terminal_size((100, 24)).columns


def fit(line, width):
    """``line``, cut to ``width`` characters with an ellipsis when longer."""
    return line if len(line) <= width else line[:width - 3] + "..."


def _count(n):
    if n is None:
        return "-"
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.0f}K" if n >= 1e3 else str(n)


def _measured(measured):
    if not measured:
        return "-"
    first = measured[0]
    return f"{first['metric']} {first['value']:.3f}"


def cmd_train(args):
    import ember
    from ember.trainer import distributed_training, run_config, training

    args = run_config.apply_config_file(args, args.train_parser)
    info = ember.zoo.model_info(args.model)
    data = args.data or info.default_dataset
    if data is None:
        raise ZooError(f"model {args.model!r} has no default dataset; pass --data NAME")
    out = pathlib.Path(args.out or f"runs/{args.model}-{data}")
    resume = args.resume
    if resume == "auto":
        resume = out / training.CHECKPOINT
    if resume is not None:  # the resumed run's callback flags, where not given again
        args = run_config.apply_resumed_flags(args, args.train_parser, training.resumed_config(resume, args.model))
    callbacks = run_config.callbacks_from_args(args)  # (checked before any rank starts)
    world = None
    if args.nproc > 1 or distributed_training.is_rank():
        if not distributed_training.is_rank():
            return distributed_training.launch(args)  # this process only launches the ranks
        world = distributed_training.World()

    options = {"epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr, "optimizer": args.optimizer,
               "scheduler": args.scheduler, "weight_decay": args.weight_decay, "train_fraction": args.train_fraction,
               "model_overrides": json_option(args.model_overrides, "--model-overrides"),
               "metrics": parse_metrics(args.metrics), "callback_flags": run_config.callback_flags(args),
               **distillation_options(args)}
    try:
        training.train(args.model, data, out, seed=args.seed, resume=resume, workers=args.workers,
                       progress=not args.no_progress, world=world, callbacks=callbacks, **options)
    except KeyboardInterrupt:
        if world is None or world.is_main:  # (every rank is interrupted; one says so)
            print(f"\n{interrupted_message(out / training.CHECKPOINT)}", file=sys.stderr)
        return 130
    return 0


def interrupted_message(checkpoint):
    """What ``ember train`` says on Ctrl-C: ``--resume`` only where a checkpoint exists to
    resume from (training.train removed the output folder if it made it and nothing was
    written)."""
    if checkpoint.exists():
        return f"interrupted: the last complete checkpoint is {checkpoint} (continue with --resume)"
    return "interrupted before the first epoch ended: nothing was saved (run the command again to start over)"


def json_option(text, flag):
    """The JSON object given to ``flag``, or None; bad JSON is one line naming the flag."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ZooError(f"{flag} takes a JSON object such as '{{\"width\": 4}}'; {text!r} is not JSON ({exc.msg})") \
            from None
    if not isinstance(value, dict):
        raise ZooError(f"{flag} takes a JSON object such as '{{\"width\": 4}}', not {text!r}")
    return value


def distillation_options(args):
    """``--distill-from``, ``--teacher-weights``, ``--temperature``, ``--alpha`` as run options
    (ember/trainer/distillation.py checks them)."""
    given = {"teacher_weights": args.teacher_weights, "temperature": args.temperature, "alpha": args.alpha}
    if args.distill_from is None:
        named = [f"--{key.replace('_', '-')}" for key, value in given.items() if value is not None]
        if named:
            raise ZooError(f"{', '.join(named)} only appl{'y' if len(named) > 1 else 'ies'} with --distill-from "
                           "TEACHER")
        return {}
    return {"distill_from": args.distill_from, **given}


def add_metrics_argument(p):
    p.add_argument("--metrics", metavar="NAMES", help="also report these ember.metrics on the validation split, "
                                                      "e.g. accuracy,f1 (also precision, recall, auroc, "
                                                      "average_precision; classification models)")


def add_distillation_arguments(p):
    p.add_argument("--distill-from", metavar="TEACHER", help="train taught by this zoo model (a classifier)")
    p.add_argument("--teacher-weights", metavar="CKPT", help="the teacher's trained checkpoint")
    p.add_argument("--temperature", type=float, help="softening temperature T (default 4)")
    p.add_argument("--alpha", type=float, help="weight of the teacher's soft targets, in [0, 1] (default 0.9)")


def cmd_eval(args):
    import ember
    from ember.trainer import training

    chosen = parse_metrics(args.metrics)  # (an unknown name, before any file is read)
    data = args.data or _checkpoint_data(args.weights) or ember.zoo.model_info(args.model).default_dataset
    metrics = training.evaluate(args.model, args.weights, data, batch_size=args.batch_size, workers=args.workers,
                                seed=args.seed, metrics=chosen)
    if args.json:
        print(json.dumps(metrics, indent=2))
    else:
        shown = ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in metrics.items())
        print(f"{args.model} on {data}, validation{training.validation_note(args.model, data, args.seed)}: {shown}")
    return 0


def _checkpoint_data(path):
    """The dataset name a training checkpoint was trained on, if it records one."""
    from ember.zoo.weights import read_checkpoint

    _, checkpoint = read_checkpoint(path)
    return (checkpoint or {}).get("data", {}).get("name")


def cmd_predict(args):
    from ember.trainer import explain, training

    # (the picture first: a model without attention maps is refused before anything prints)
    drawn = explain.explain(args.model, args.weights, args.input, args.explain) if args.explain else None
    for line in training.predict(args.model, args.weights, args.input, out_dir=args.out, top_k=args.top_k):
        print(line)
    if drawn:
        print(drawn)
    return 0


def cmd_compress(args):
    import ember
    from ember.trainer import compression

    given = distillation_options(args)  # (refuses --temperature/--alpha/--teacher-weights without --distill-from)
    options = {key: given[key] for key in ("temperature", "alpha") if given.get(key) is not None}
    rows = compression.compress(args.model, args.weights, args.data, args.out, prune=args.prune, method=args.method,
                                quantize=args.quantize, finetune_epochs=args.finetune_epochs, lr=args.lr,
                                seed=args.seed, distill_from=args.distill_from, teacher_weights=args.teacher_weights,
                                student_overrides=json_option(args.student_overrides, "--student-overrides"),
                                **options)
    print(compression_table(rows, ember.zoo.get_task(args.model).metric))
    return 0


def compression_table(rows, metric):
    """The before/after table of ``ember compress``: parameters, non-zeros, bytes on disk,
    the task's metric, evaluation seconds."""
    width = max(12, len(metric) + 2)
    header = f"{'':8}{'parameters':>12}{'non-zeros':>12}{'bytes':>12}{metric:>{width}}{'eval s':>10}"
    lines = [header]
    for name, row in rows:
        lines.append(f"{name:8}{row['parameters']:>12,}{row['nonzero']:>12,}{row['bytes'] or 0:>12,}"
                     f"{row['metric']:>{width}.4f}{row['seconds']:>10.2f}")
    return "\n".join(lines)


def add_commands(sub):
    """Add ``models``, ``train``, ``eval``, ``predict`` and ``compress`` to the ``ember``
    parser's subcommands."""
    p = sub.add_parser("models", help="list the zoo's models")
    p.add_argument("pattern", nargs="?", default="*", help="fnmatch pattern, e.g. 'resnet*'")
    p.add_argument("--json", action="store_true", help="print every field as JSON")
    p.set_defaults(func=cmd_models, computes=False)

    p = sub.add_parser("train", help="train a zoo model on an ember.data dataset")
    p.add_argument("model")
    p.add_argument("--data", help="dataset name (default: the model's default dataset)")
    p.add_argument("--epochs", type=whole_number(1))
    p.add_argument("--batch-size", type=whole_number(1))
    p.add_argument("--lr", type=float, help="learning rate (the peak, for onecycle)")
    p.add_argument("--optimizer", help="an ember.optim name: sgd, adamw, ...")
    p.add_argument("--scheduler", help="none, onecycle, cosine or warmup (per step)")
    p.add_argument("--weight-decay", type=float)
    p.add_argument("--workers", type=whole_number(0), default=0, help="DataLoader worker processes")
    p.add_argument("--out", help="folder for checkpoint.pt (last epoch), best.pt (best validation metric) "
                                 "and metrics.json (default: runs/MODEL-DATA)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", nargs="?", const="auto", metavar="CKPT",
                   help="continue from CKPT (default: OUT/checkpoint.pt)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--nproc", type=whole_number(1), default=1, help="train data-parallel on N ranks (ember run + DDP)")
    p.add_argument("--model-overrides", metavar="JSON", help='builder keywords, e.g. \'{"width": 4}\'')
    p.add_argument("--train-fraction", type=float, metavar="F", help="train on a seeded fraction F of the split")
    add_distillation_arguments(p)
    add_metrics_argument(p)
    run_config.add_arguments(p)  # --config, --log, --early-stop, --checkpoint-every, --plot, ...
    p.set_defaults(func=cmd_train, train_parser=p)
    # (The model's recipe, `ember models --json`, gives every default these options override.)

    p = sub.add_parser("eval", help="evaluate a checkpoint on a dataset's validation split (its \"val\" split, or "
                                    "\"test\" where it has none)")
    p.add_argument("model")
    p.add_argument("--weights", required=True, help="checkpoint file (ember or PyTorch)")
    p.add_argument("--data", help="dataset name (default: the one the checkpoint was trained on)")
    p.add_argument("--batch-size", type=whole_number(1), default=256)
    p.add_argument("--workers", type=whole_number(0), default=0)
    p.add_argument("--seed", type=int, default=0, help="the dataset's split seed")
    p.add_argument("--json", action="store_true")
    add_metrics_argument(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("predict", help="run a checkpoint on an input and show the prediction")
    p.add_argument("model")
    p.add_argument("--weights", required=True, help="a training checkpoint")
    p.add_argument("input", help="an image file, DATASET:INDICES (e.g. digits:0-4), or what the model's task reads; "
                                 "an image may have at most 4096x4096 pixels (a detector, which runs at the "
                                 "image's own size: 2048x2048)")
    p.add_argument("--top-k", type=whole_number(1), default=5)
    p.add_argument("--out", help="folder for files the prediction writes, e.g. images with boxes "
                                 "(default: predictions/ beside the checkpoint)")
    p.add_argument("--explain", metavar="PNG", help="also draw each image beside the model's attention map into PNG "
                                                    "(models with attention, e.g. cbam_resnet8_cifar)")
    p.set_defaults(func=cmd_predict)
    add_compress_command(sub)


def add_compress_command(sub):
    """Add ``compress`` (ember/trainer/compression.py does the work)."""
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
