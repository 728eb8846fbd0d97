"""What each rank of ``ember run`` executes: record the rank's fate, then run the script.

PyTorch counterpart: torch/distributed/elastic/multiprocessing/errors/__init__.py (the
``record`` decorator: a rank writes its error to a file its launcher reads) (v2.13).

mpiexec starts ``python -m ember.distributed.launch_rank script.py args``. This process
sets torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE) from MPI's
launcher, then forks: the child runs the script (and joins MPI); the parent only waits
for it, so it learns the exact exit code or signal, which it writes to
``$EMBER_RUN_DIR/rank-<N>.json`` for ``ember run`` (run.py) to report. The child dies
with its parent (PR_SET_PDEATHSIG), so killing a rank's parent leaves nothing behind.
"""

import json
import os
import signal
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2)


def _rank_variables(environ):
    """torchrun's variables from MPICH's (PMI_*) or Open MPI's (OMPI_COMM_WORLD_*)."""
    pairs = {"RANK": ("PMI_RANK", "OMPI_COMM_WORLD_RANK"), "WORLD_SIZE": ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"),
             "LOCAL_RANK": ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK"),
             "LOCAL_WORLD_SIZE": ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")}
    found = {}
    for name, sources in pairs.items():
        for source in sources:
            if environ.get(source):
                found[name] = environ[source]
                break
    found.setdefault("RANK", "0")
    found.setdefault("WORLD_SIZE", "1")
    found.setdefault("LOCAL_RANK", found["RANK"])
    found.setdefault("LOCAL_WORLD_SIZE", found["WORLD_SIZE"])
    return found


def _die_with_parent():
    """Linux: SIGKILL this process when the rank's parent ends (best effort elsewhere)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _forward(child, number):
    """Pass a signal on to the script's process, unless it has ended already."""
    try:
        os.kill(child, number)
    except ProcessLookupError:  # the child ended between the signal and this handler
        pass


def _write(run_dir, rank, record):
    if not run_dir:
        return
    path = os.path.join(run_dir, f"rank-{rank}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(record, f)
    os.replace(path + ".tmp", path)  # the launcher never reads half a record


def _run_script(argv, run_dir, rank):
    """The child: run ``argv[0]`` as ``__main__``; an exception is recorded, then exits 1."""
    import runpy
    import traceback

    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        raise
    except KeyboardInterrupt:  # Ctrl-C on ember run reaches every rank: one traceback each says nothing
        _write(run_dir, f"{rank}.error", {"error": "KeyboardInterrupt"})
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + signal.SIGINT)
    except BaseException as exc:
        traceback.print_exc()
        sys.stderr.write(f"[rank {rank}] {type(exc).__name__}: {exc}\n")
        _write(run_dir, f"{rank}.error", {"error": f"{type(exc).__name__}: {exc}"})
        sys.stdout.flush()
        sys.stderr.flush()
        # os._exit: MPI_Finalize would wait for ranks still inside a collective.
        os._exit(1)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        sys.exit("usage: python -m ember.distributed.launch_rank script.py [args...]")
    os.environ.update(_rank_variables(os.environ))
    rank = int(os.environ["RANK"])
    run_dir = os.environ.get("EMBER_RUN_DIR")
    child = os.fork()
    if child == 0:
        _die_with_parent()
        _run_script(argv, run_dir, rank)
        return
    _write(run_dir, f"{rank}.pid", {"pid": child, "parent": os.getpid()})
    for forwarded in FORWARDED:
        signal.signal(forwarded, lambda number, frame: _forward(child, number))
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    for forwarded in FORWARDED:  # the script has ended: a late signal must not end this process
        signal.signal(forwarded, signal.SIG_IGN)
    record = {"rank": rank, "pid": child, "host": os.uname().nodename}
    if os.WIFSIGNALED(status):
        record["signal"] = os.WTERMSIG(status)
        code = 128 + record["signal"]
    else:
        code = record["exitcode"] = os.WEXITSTATUS(status)
    _write(run_dir, rank, record)
    # NOTE [ The launcher ends the job ] in run.py: the record says how the rank ended;
    # a clean exit keeps mpiexec from ending the other ranks (and printing its banner)
    # before ``ember run`` has read it
    sys.exit(0 if run_dir else code)


if __name__ == "__main__":
    main()
