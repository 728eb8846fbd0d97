"""``ember train``'s callback flags and its config file: ``--early-stop val/accuracy:3``,
``--checkpoint-every 2``, ``--log csv,tensorboard``, ``--log-lr``, ``--log-grad-norm``,
``--plot``, ``--profile``, ``--detect-anomaly``, and ``--config run.toml``, whose keys are
the flags' names.

PyTorch counterpart: none in torch; Lightning's ``LightningCLI`` (lightning/pytorch/cli.py:
a YAML file whose keys mirror the command line's, the command line winning) and timm's
train.py (``--config``, a file of defaults the flags override). ember reads TOML with the
standard library's ``tomllib``.

# NOTE [ A config file is the same flags ]
# ``ember train MODEL --config run.toml`` reads each key as the flag of the same name
# (``batch-size = 64`` or ``batch_size = 64`` is ``--batch-size 64``; ``plot = true``
# is ``--plot``; a list, ``log = ["csv", "tensorboard"]``, is ``--log
# csv,tensorboard``) and checks its value with the flag's own argparse type, so a
# value means the same in either place and is refused with the same words. A flag
# given on the command line overrides the file. A key that is no flag, or a bad value,
# is one line naming the file and the key (ember/cli.py's one-line errors);
# ``--threads`` is chosen before the command runs, and ``--config`` itself cannot
# nest, so neither may appear in a file.

# NOTE [ A resumed run keeps its callbacks ]
# ``ember train --resume`` continues a run with its options (the checkpoint's
# ``config``), and its callbacks too: the callback flags a run was given (command line
# or file) are saved in its config as ``callback_flags``, and a resumed run takes each
# one it is not given again, so ``ember train M --resume`` after ``ember train M
# --early-stop val/accuracy:3 --log csv`` stops early and logs as the first run did;
# each callback then takes its counts back from the checkpoint
# (NOTE [ A callback's state in the checkpoint ] in callbacks/callback.py).
# Precedence: the command line, then --config, then the checkpoint. A flag cannot be
# taken away at a resume (argparse has no "not given").
"""

import argparse
import difflib
import importlib.util

from ember.cli import CommandError

LOGGERS = ("csv", "tensorboard")
NOT_IN_FILES = ("help", "config", "threads", "model")


def logger_list(text):
    """An argparse ``type``: ``csv,tensorboard`` -> the same names, checked."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in LOGGERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(LOGGERS)}; "
                                         f"got {text!r}")
    return ",".join(dict.fromkeys(names))


logger_list.__name__ = "logger list"


def early_stop_spec(text):
    """An argparse ``type``: ``MONITOR[:PATIENCE]``, e.g. ``val/accuracy:3`` or ``val/loss``
    (patience 3), checked and returned as given."""
    parse_early_stop(text)
    return text


early_stop_spec.__name__ = "early stopping"


def parse_early_stop(text):
    """``(monitor, patience)`` of an ``--early-stop`` value."""
    monitor, colon, patience = text.rpartition(":")
    if not colon:
        monitor, patience = text, "3"
    usage = "expected METRIC[:PATIENCE], e.g. val/accuracy:3 (a curve name: val/<metric>, train/loss)"
    if not (monitor.startswith("val/") and len(monitor) > 4) and monitor != "train/loss":
        raise argparse.ArgumentTypeError(f"{usage}; got {text!r}")
    if not patience.isdigit() or int(patience) < 1:
        raise argparse.ArgumentTypeError(f"{usage}, with a patience of at least 1 epoch; got {text!r}")
    return monitor, int(patience)


def add_arguments(p):
    """Add the callback flags and ``--config`` to the ``train`` parser ``p``."""
    from ember.cli import whole_number

    p.add_argument("--config", metavar="TOML", help="read options from a TOML file whose keys are these flags' "
                                                    "names (batch-size = 64); flags given here override it")
    p.add_argument("--log", type=logger_list, metavar="csv,tensorboard",
                   help="also write the curves: csv (OUT/metrics.csv per epoch, OUT/steps.csv per step), "
                        "tensorboard (event files in OUT/tensorboard; needs the tensorboard package)")
    p.add_argument("--log-lr", action="store_true", help="log the learning rate of every step (to --log)")
    p.add_argument("--log-grad-norm", action="store_true",
                   help="log the gradients' 2-norm of every step (to --log; the epoch's max and mean to metrics.json)")
    p.add_argument("--plot", action="store_true", help="draw the curves into OUT/curves.png at the end")
    p.add_argument("--early-stop", type=early_stop_spec, metavar="METRIC[:PATIENCE]",
                   help="stop when METRIC (val/accuracy, val/loss, ...) has not improved for PATIENCE epochs "
                        "(default 3)")
    p.add_argument("--early-stop-mode", choices=("min", "max"),
                   help="whether METRIC is better lower or higher (default: min for a loss, else max)")
    p.add_argument("--early-stop-min-delta", type=float, metavar="D",
                   help="an improvement smaller than D does not count (default 0)")
    p.add_argument("--checkpoint-every", type=whole_number(1), metavar="N",
                   help="also keep OUT/epoch-NNNN.pt every N epochs")
    p.add_argument("--profile", action="store_true",
                   help="profile training steps 3-5: OUT/profile/trace.json (chrome://tracing) and ops.txt")
    p.add_argument("--detect-anomaly", action="store_true",
                   help="train under anomaly mode: the first backward that makes a NaN raises, naming it (slow)")


def apply_config_file(args, parser):
    """``args`` with the values of ``args.config`` for every flag not given on the command
    line (NOTE [ A config file is the same flags ])."""
    if not getattr(args, "config", None):
        return args
    for dest, value in read_config(args.config, parser).items():
        if getattr(args, dest) == parser.get_default(dest):
            setattr(args, dest, value)
    return args


def read_config(path, parser):
    """The flags' values in the TOML file ``path``: ``{dest: value}``, each checked as its flag checks it."""
    import tomllib

    try:
        with open(path, "rb") as f:
            table = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise CommandError(f"{path}: not valid TOML ({exc})") from None
    actions = {action.dest: action for action in parser._actions
               if action.option_strings and action.dest not in NOT_IN_FILES}
    values = {}
    for key, value in table.items():
        dest = key.replace("-", "_")
        if dest not in actions:
            raise CommandError(f"{path}: unknown key {key!r}{suggestion(dest, actions)}")
        values[dest] = file_value(actions[dest], value, f"{path}: {key}")
    return values


def suggestion(dest, actions):
    close = difflib.get_close_matches(dest, list(actions), n=1)
    if close:
        return f" (did you mean {close[0].replace('_', '-')!r}?)"
    return f"; the keys are the flags of ember train: {', '.join(sorted(d.replace('_', '-') for d in actions))}"


def file_value(action, value, where):
    """``value`` from the file, checked and converted by ``action`` (its argparse flag)."""
    if isinstance(action, argparse._StoreTrueAction):
        if not isinstance(value, bool):
            raise CommandError(f"{where}: expected true or false, got {value!r}")
        return value
    if action.const is not None and value is True:  # a flag with an optional value (--resume)
        return action.const
    if isinstance(value, (bool, dict)) or isinstance(value, list) and not all(isinstance(v, str) for v in value):
        raise CommandError(f"{where}: expected a value as its flag takes, got {value!r}")
    text = ",".join(value) if isinstance(value, list) else str(value)
    try:
        converted = action.type(text) if action.type is not None else text
    except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
        raise CommandError(f"{where}: {exc or f'invalid value {value!r}'}") from None  # (the types name the value)
    if action.choices is not None and converted not in action.choices:
        raise CommandError(f"{where}: expected one of {', '.join(map(str, action.choices))}, got {value!r}")
    return converted


# the flags that make callbacks and that a resumed run keeps (NOTE [ A resumed run keeps
# its callbacks ]); --profile is left out: it profiles three steps of the run it is given to
RESUMED_FLAGS = ("early_stop", "early_stop_mode", "early_stop_min_delta", "log", "log_lr", "log_grad_norm", "plot",
                 "checkpoint_every", "detect_anomaly")


def callback_flags(args):
    """The callback flags given to this run (by the command line, a config file or the
    resumed checkpoint), saved with its options: ``{dest: value}``."""
    return {dest: getattr(args, dest) for dest in RESUMED_FLAGS if getattr(args, dest) not in (None, False)}


def apply_resumed_flags(args, parser, config):
    """``args`` with the callback flags of the resumed run's ``config`` for every flag
    not given now (on the command line or in ``--config``)."""
    for dest, value in (config.get("callback_flags") or {}).items():
        if dest in RESUMED_FLAGS and getattr(args, dest) == parser.get_default(dest):
            setattr(args, dest, value)
    return args


def callbacks_from_args(args):
    """The callbacks the flags ask for (the run adds TerminateOnNaN and ModelCheckpoint itself)."""
    from ember.trainer import callbacks

    chosen = []
    if args.early_stop:
        monitor, patience = parse_early_stop(args.early_stop)
        chosen.append(callbacks.EarlyStopping(monitor, patience, mode=args.early_stop_mode,
                                              min_delta=args.early_stop_min_delta or 0.0))
    elif args.early_stop_mode or args.early_stop_min_delta is not None:
        raise CommandError("--early-stop-mode and --early-stop-min-delta only apply with --early-stop METRIC")
    loggers = args.log.split(",") if args.log else []
    if args.log_lr and not loggers:
        raise CommandError("--log-lr writes a curve per step: add --log csv or --log tensorboard")
    if args.log_lr:
        chosen.append(callbacks.LearningRateMonitor())
    if args.log_grad_norm:
        chosen.append(callbacks.GradientNormMonitor())
    if "tensorboard" in loggers:
        if importlib.util.find_spec("tensorboard") is None:
            raise CommandError("--log tensorboard needs the tensorboard package: pip install tensorboard")
        chosen.append(callbacks.TensorBoardLogger())
    if "csv" in loggers:
        chosen.append(callbacks.CSVLogger())
    if args.plot:
        chosen.append(callbacks.PlotCurves())
    if args.checkpoint_every:
        chosen.append(callbacks.ModelCheckpoint(every_n_epochs=args.checkpoint_every))
    if args.profile:
        chosen.append(callbacks.StepProfiler())
    if args.detect_anomaly:
        chosen.append(callbacks.AnomalyDetection())
    return chosen
