"""``ember train MODEL --nproc N``: the training loop, data-parallel over N ranks.

PyTorch counterpart: none in torch, which has no trainer; the shape of torchvision's
references/classification/train.py with ``--distributed`` (torchrun,
``DistributedSampler``, DDP, ``utils.save_on_master``).

``ember train ... --nproc N`` starts N ranks with ``ember run`` (ember/distributed/run.py);
each rank runs this file, which calls the same ``cmd_train`` with a :class:`World`: the
model is wrapped in ``DistributedDataParallel``, the training set is split by a
``DistributedSampler``, and only rank 0 prints and writes checkpoints.

# NOTE [ A run is the same whatever N ]
# ``--batch-size`` stays the *global* batch: each rank takes batch_size / N samples (it
# must divide), from a ``DistributedSampler`` shuffled from the epoch's seed, so each
# epoch covers the training set once over the ranks (torch's padding included) and the
# gradient DDP averages is the global batch's (NOTE [ Why gradients are averaged ] in
# ember/nn/parallel/reducer.py; BatchNorm statistics stay per rank, as in torch's DDP).
# The order of the samples is the sampler's, not the one-process loader's. The
# checkpoint holds the plain model's state dict (no ``module.`` prefix), the optimizer
# and scheduler, and the number of steps per epoch does not depend on N, so a run
# resumes on any N, or in one process.
"""

import os
import sys

from ember.zoo.errors import ZooError


def is_rank():
    """True inside a rank started by ``ember run``."""
    return "EMBER_RUN_DIR" in os.environ and "RANK" in os.environ


class World:
    """What the training loop asks of a data-parallel run (NOTE [ A run is the same whatever N ])."""

    def __init__(self):
        import ember.distributed as dist

        if not dist.is_initialized():
            dist.init_process_group()
        self.rank = dist.get_rank()
        self.size = dist.get_world_size()
        self.is_main = self.rank == 0
        self.model = None

    def wrap(self, model):
        from ember.nn.parallel import DistributedDataParallel

        self.model = DistributedDataParallel(model)
        return self.model

    def train_loader(self, task, dataset, batch_size, workers, seed):
        import ember

        if batch_size % self.size:
            raise ZooError(f"--batch-size {batch_size} does not divide over {self.size} ranks (it is the global "
                           f"batch: each rank takes batch_size / nproc)")
        sampler = ember.data.DistributedSampler(dataset, self.size, self.rank, shuffle=True, seed=seed)
        return ember.data.DataLoader(dataset, batch_size=batch_size // self.size, sampler=sampler,
                                     num_workers=workers)

    def log(self, *args, **kwargs):
        if self.is_main:
            print(*args, **kwargs, flush=True)


def _command_line(args):
    """The ``ember train`` arguments of ``args`` again, for the ranks."""
    argv = ["train", args.model]
    for option in ("data", "epochs", "batch_size", "lr", "optimizer", "scheduler", "weight_decay", "workers",
                   "out", "seed", "threads", "model_overrides", "train_fraction", "distill_from", "teacher_weights",
                   "temperature", "alpha", "metrics", "log", "early_stop", "early_stop_mode",
                   "early_stop_min_delta", "checkpoint_every"):
        value = getattr(args, option, None)
        if value is not None:
            argv += [f"--{option.replace('_', '-')}", str(value)]
    if args.resume is not None:
        argv += ["--resume", str(args.resume)]
    for flag in ("no_progress", "log_lr", "log_grad_norm", "plot", "profile", "detect_anomaly"):
        if getattr(args, flag, False):
            argv.append(f"--{flag.replace('_', '-')}")
    return argv + ["--nproc", str(args.nproc)]


def launch(args):
    """Start ``args.nproc`` ranks of ``ember train`` through ``ember run``; their exit status."""
    from ember.distributed import run

    parser = run.argparse.ArgumentParser(allow_abbrev=False)
    run.add_arguments(parser)
    return run.run(parser.parse_args(["--nproc-per-node", str(args.nproc), __file__, *_command_line(args)]))


def main(argv=None):
    """A rank's entry point: parse the ``ember train`` line and train with a World."""
    from ember import cli

    return cli.main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
