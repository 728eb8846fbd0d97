"""How a worker that dies is noticed and reported.

PyTorch counterpart: torch/utils/data/_utils/signal_handling.py (v2.13), which installs
C-level handlers (SIGCHLD in the main process; SIGSEGV, SIGBUS, SIGFPE in workers).
ember stays in Python: a worker enables ``faulthandler`` so a crash prints the Python
traceback of the worker to stderr before it dies, and the main process, while it waits
for a batch, looks at its workers every ``STATUS_CHECK_INTERVAL`` seconds and turns a
dead one into a RuntimeError (``check_workers``) within a fraction of a second.
"""

import faulthandler
import signal


def set_worker_signal_handlers():
    """In a worker: on SIGSEGV/SIGBUS/SIGFPE/SIGILL, print the traceback, then die."""
    faulthandler.enable(all_threads=False)
    # A Ctrl-C reaches the whole process group: let the main process decide, and end
    # the workers through its shutdown path.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def describe_exit(pid, exitcode):
    """Why the worker ``pid`` ended, as PyTorch words it."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.strsignal(-exitcode) or signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"DataLoader worker (pid {pid}) is killed by signal: {name}. "
    return (f"DataLoader worker (pid {pid}) exited unexpectedly with exit code {exitcode}. "
            "Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better error trace.")


def check_workers(workers):
    """Raise a RuntimeError if one of the (still wanted) ``workers`` has ended."""
    dead = [w for w in workers if not w.is_alive()]
    if not dead:
        return
    pids = ", ".join(str(w.pid) for w in dead)
    reasons = "".join(describe_exit(w.pid, w.exitcode) for w in dead)
    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly: "
                       f"{reasons.strip()}")
