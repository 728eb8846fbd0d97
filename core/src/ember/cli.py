"""The ``ember`` command: its parser, the subcommands' registry, and the one place where a
user's mistake becomes a one-line message instead of a traceback.

PyTorch counterpart: none (``python -m torch.utils.collect_env`` is the closest); the
subcommand layout follows git's and pip's (one module per group of commands).

    $ ember plugins            # name, distribution, version, status, what each registered
    $ ember explain mul        # schema, and the file:line of its kernels and backward
    $ ember train resnet8_cifar --data digits --out runs/digits

# NOTE [ Adding a subcommand ]
# A group of subcommands lives in its own module, which defines
# ``add_commands(subparsers)``: it adds its parsers and sets ``func`` (called with the
# parsed ``args``, returns the exit status). Registering it is one line in
# ``COMMAND_MODULES``. A command that does no numeric work (a listing) also sets
# ``computes=False``; every other command gets ``--threads N`` and runs under NOTE [ The
# CLI's thread policy ] (ember/utils/threads.py), announced in one line. ``main`` reports
# every exception type in ``USER_ERRORS`` (and missing files) as one line
# ``ember <command>: <message>`` with exit status 2, and so are writes the machine
# refuses (``REFUSED_WRITES``: a read-only or full disk); raise one of them (or
# ``CommandError``) for a user's mistake, and anything else stays a traceback (a bug).
"""

import argparse
import contextlib
import errno
import importlib
import os
import sys

# Modules that add subcommands (NOTE [ Adding a subcommand ]), in ``ember --help`` order.
COMMAND_MODULES = (
    "ember.plugins.commands",  # plugins, explain
    "ember.trainer.commands",  # models, train, eval, predict, compress
    "ember.distributed.run",  # run
    "ember.onnx.commands",  # export
)

# "module:Class" of the exceptions that mean the user asked for something impossible.
USER_ERRORS = (
    "ember.cli:CommandError",
    "ember.serialization.errors:CheckpointError",
    "ember.plugins.manager:PluginError",
    "ember.zoo.errors:ZooError",
)

# A missing, unreadable or misplaced file named on the command line.
FILE_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)

# Writes the machine refuses (a read-only or full file system, a quota): the user's to
# fix, so one line too. Other OSErrors stay tracebacks.
REFUSED_WRITES = frozenset({errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


class CommandError(Exception):
    """A user's mistake on the command line; ``main`` prints it as one line (status 2)."""


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors are one line like every other mistake (argparse
    prints the whole usage first; ``--help`` still shows it)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {' '.join(message.split())} (see {self.prog} --help)\n")


def build_parser():
    from ember import __version__

    parser = Parser(prog="ember", description="ember: a small PyTorch-like framework")
    parser.add_argument("--version", action="version", version=f"ember {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_commands(sub)
    for command in sub.choices.values():
        if command.get_default("computes") is not False:
            command.add_argument("--threads", type=_positive_int, metavar="N",
                                 help="BLAS/OpenMP threads (default: auto, from the free cores; "
                                      "see ember/utils/threads.py)")
    return parser


def _positive_int(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of threads, at least 1, got {text!r}")
    return int(text)


def whole_number(minimum):
    """An argparse ``type``: a whole number at least ``minimum`` (``--epochs -1`` is refused
    by argparse, in one line, before any work)."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number of at least {minimum}, got {value}")
        return value

    parse.__name__ = "whole number"  # (argparse names the type in its message)
    return parse


def user_errors():
    """The exception types ``main`` reports as one line."""
    types = []
    for spec in USER_ERRORS:
        module, name = spec.split(":")
        types.append(getattr(importlib.import_module(module), name))
    return tuple(types) + FILE_ERRORS


def main(argv=None):
    """Entry point of the ``ember`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if getattr(args, "computes", True) is False:
            return args.func(args)
        with _thread_policy(args):
            return args.func(args)
    except user_errors() as exc:
        print(f"ember {args.command}: {_one_line(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `ember models | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:
        if exc.errno not in REFUSED_WRITES:
            raise
        print(f"ember {args.command}: {_one_line(exc)}", file=sys.stderr)
        return 2


@contextlib.contextmanager
def _thread_policy(args):
    """Run the command under NOTE [ The CLI's thread policy ], saying what it chose (on
    stderr, so stdout stays the command's output), then put things back (``main`` is
    also called in-process, by tests and notebooks)."""
    from ember.utils.threads import THREAD_VARIABLES, apply_threads, choose_threads

    try:
        choice = choose_threads(getattr(args, "threads", None))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    print(choice, file=sys.stderr)
    saved = {variable: os.environ.get(variable) for variable in THREAD_VARIABLES}
    limiter = apply_threads(choice.threads)
    try:
        yield choice
    finally:
        limiter.restore_original_limits()
        for variable, value in saved.items():
            if value is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = value


def _one_line(exc):
    """The message of ``exc`` on one line (a KeyError's repr quotes drop, OSError keeps its path)."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        message = f"{exc.strerror}: {exc.filename}"
    elif isinstance(exc, KeyError) and exc.args:
        message = str(exc.args[0])
    else:
        message = str(exc) or type(exc).__name__
    return " ".join(message.split())


if __name__ == "__main__":
    sys.exit(main())
