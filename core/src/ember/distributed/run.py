"""``ember run``: start N ranks of a script with mpiexec, and stop them all if one fails.

PyTorch counterpart: torch/distributed/run.py (torchrun: ``--nproc-per-node``,
RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT, the failure summary) (v2.13).

    $ ember run --nproc-per-node 2 train.py --epochs 3
    $ ember run --nproc-per-node 2 --hostfile hosts train.py      # 2 ranks on each host
    $ ember run --nproc-per-node 2 --tcp train.py                 # MPI over TCP even on one host

# NOTE [ No rank outlives a failure ]
# MPI jobs hang when one rank dies while the others sit in a collective (mpiexec ends
# the job on a signal, not on an exception). Each rank runs under launch_rank.py,
# whose parent process records the rank's exit code or signal in the run directory.
# This launcher polls those records; the first failure is reported (rank, pid, exit
# code or signal name, the exception) and the whole mpiexec session gets SIGTERM, then
# SIGKILL after a grace period, so every rank is gone within seconds. SIGINT and
# SIGTERM sent to ``ember run``: NOTE [ Ctrl-C on ember run ].

# NOTE [ The launcher ends the job ]
# Left to itself, MPICH's mpiexec ends every rank when one exits with an error, and
# prints a banner ("BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"); if it wins
# the race against this launcher's 50 ms poll, the launcher finds the job already over
# and the banner follows its own report. Under ``ember run`` the launcher alone ends the
# job: mpiexec gets ``-disable-auto-cleanup``, a rank's parent (launch_rank.py) exits 0
# once it has recorded how its script ended, ember-mpi exits a failing rank instead of
# calling MPI_Abort (it sees EMBER_RUN_DIR), and ``_stop`` ends the other ranks through
# their parents, so mpiexec sees every rank end cleanly and prints nothing. Under a
# bare ``mpiexec`` ember-mpi's MPI_Abort still ends the job.

# NOTE [ Ctrl-C on ember run ]
# SIGINT or SIGTERM sent to ``ember run`` reaches each script once, through its rank's
# parent (mpiexec, in a session of its own, is not signalled: it would print its own
# banner), so a script may catch KeyboardInterrupt and save, as ``ember train`` does;
# the launcher waits for the ranks, then returns 128 + the signal, reporting no rank
# as failed. A signal that arrives before every rank has started, a second one, or
# ranks still running INTERRUPT_GRACE_SECONDS later end the whole job at once.

# NOTE [ MPI over TCP ]
# On one host MPICH moves data through shared memory. ``--tcp`` sets
# MPIR_CVAR_CH4_NETMOD=ofi, FI_PROVIDER=tcp and MPIR_CVAR_NOLOCAL=1 (no shared
# memory between local ranks), the path a multi-host job takes, so it is testable here.
"""

import argparse
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from ember.cli import whole_number

TCP_ENVIRONMENT = {"MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp", "MPIR_CVAR_NOLOCAL": "1"}
GRACE_SECONDS = 3.0
INTERRUPT_GRACE_SECONDS = 15.0  # for the scripts to save and exit after Ctrl-C
POLL_SECONDS = 0.05


def add_arguments(parser):
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=whole_number(1), default=1, dest="nproc_per_node",
                        help="ranks to start on each host (default 1)")
    parser.add_argument("--hostfile", help="MPICH hostfile: one host per line (host or host:slots)")
    parser.add_argument("--master-addr", "--master_addr", dest="master_addr",
                        help="MASTER_ADDR for the ranks (default: the first host, or 127.0.0.1)")
    parser.add_argument("--master-port", "--master_port", type=int, dest="master_port",
                        help="MASTER_PORT for the ranks (default: a free port)")
    parser.add_argument("--tcp", action="store_true", help="force MPI onto TCP (the multi-host path)")
    parser.add_argument("--mpiexec", help="the mpiexec to use (default: the one beside this Python)")
    parser.add_argument("script", help="the Python script every rank runs")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")


def find_mpiexec(explicit=None):
    """The mpiexec of this environment (the mpich wheel installs it beside python)."""
    candidates = [explicit] if explicit else [str(pathlib.Path(sys.executable).parent / "mpiexec"),
                                              shutil.which("mpiexec")]
    for candidate in candidates:
        if candidate and os.path.exists(candidate):
            return candidate
    from ember.plugins.manager import install_hint

    raise SystemExit("ember run: no mpiexec found beside this Python or on PATH; install MPI with "
                     f"`{install_hint('ember-mpi')}` (it brings the mpich wheel)")


def _is_hydra(mpiexec):
    """Whether ``mpiexec`` is MPICH's (Hydra), which takes ``-disable-auto-cleanup``."""
    try:
        found = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "HYDRA" in found.stdout


def _hosts(hostfile):
    hosts = []
    for line in pathlib.Path(hostfile).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            hosts.append(line.split(":")[0])
    if not hosts:
        raise SystemExit(f"ember run: the hostfile {hostfile} names no host")
    return hosts


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(args, run_dir):
    """The mpiexec command line and the environment of the ranks."""
    hosts = _hosts(args.hostfile) if args.hostfile else ["127.0.0.1"]
    world = args.nproc_per_node * len(hosts)
    env = dict(os.environ)
    env.update(EMBER_RUN_DIR=run_dir, MASTER_ADDR=args.master_addr or hosts[0],
               MASTER_PORT=str(args.master_port or _free_port()))
    if args.tcp:
        env.update(TCP_ENVIRONMENT)
    if args.nproc_per_node > 1 and "OMP_NUM_THREADS" not in env:
        # torchrun's default: ranks sharing a host would oversubscribe its cores.
        env["OMP_NUM_THREADS"] = "1"
    mpiexec = find_mpiexec(args.mpiexec)
    cmd = [mpiexec, "-n", str(world)]
    if _is_hydra(mpiexec):  # NOTE [ The launcher ends the job ]
        cmd.append("-disable-auto-cleanup")
    if args.hostfile:
        cmd += ["-f", args.hostfile, "-ppn", str(args.nproc_per_node)]
        # the TCP variables must reach the other hosts' ranks too
        cmd += ["-genvlist", ",".join(["EMBER_RUN_DIR", "MASTER_ADDR", "MASTER_PORT", "OMP_NUM_THREADS",
                                       *TCP_ENVIRONMENT])]
    cmd += [sys.executable, "-m", "ember.distributed.launch_rank", args.script, *args.script_args]
    return cmd, env, world


def _records(run_dir):
    records = {}
    for path in pathlib.Path(run_dir).glob("rank-*.json"):
        try:
            records[path.name[len("rank-"):-len(".json")]] = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # being written: os.replace makes that a rare race
    return records


def _first_failure(records):
    failures = [r for key, r in records.items() if key.isdigit() and (r.get("exitcode") or r.get("signal"))]
    return min(failures, key=lambda r: r["rank"]) if failures else None


def _describe(record, records):
    how = (f"was killed by signal {record['signal']} ({signal.Signals(record['signal']).name})"
           if record.get("signal") else f"exited with code {record['exitcode']}")
    text = f"ember run: rank {record['rank']} (pid {record['pid']} on {record['host']}) {how}"
    error = records.get(f"{record['rank']}.error")
    if error:
        text += f": {error['error']}"
    return text


def _stop(process, run_dir):
    """SIGTERM every recorded rank (its parent passes the signal on to the script,
    records how it ended and exits cleanly: NOTE [ The launcher ends the job ]); after
    a grace period SIGTERM the whole mpiexec session, then SIGKILL it and every rank."""
    _signal_ranks(run_dir, signal.SIGTERM, parents=True)
    try:
        process.wait(GRACE_SECONDS)
        return
    except subprocess.TimeoutExpired:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        if sig == signal.SIGKILL:
            _signal_ranks(run_dir, signal.SIGKILL, parents=True, children=True)
        try:
            process.wait(GRACE_SECONDS)
            if sig == signal.SIGTERM:
                time.sleep(0.2)  # let the proxies' ranks go too; SIGKILL makes sure
        except subprocess.TimeoutExpired:
            continue


def _interrupt(process, run_dir, world, number, again):
    """NOTE [ Ctrl-C on ember run ]: pass SIGINT or SIGTERM to the scripts once, through
    the ranks' parents; before every rank has started, or on a second signal, end the
    whole job at once."""
    started = sum(key.endswith(".pid") for key in _records(run_dir)) == world
    if started and not again:
        _signal_ranks(run_dir, number, parents=True)
        return
    print("ember run: interrupted; ending every rank now", file=sys.stderr, flush=True)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _signal_ranks(run_dir, number, parents=False, children=False):
    """Send ``number`` to the recorded processes of every rank still running."""
    records = _records(run_dir)
    for key, record in records.items():
        if key.endswith(".pid") and key[:-len(".pid")] not in records:  # (no final record yet)
            chosen = ([record["parent"]] if parents else []) + ([record["pid"]] if children else [])
            for pid in chosen:
                try:
                    os.kill(pid, number)
                except (ProcessLookupError, PermissionError):
                    pass


def run(args):
    """Start the job; returns the exit status (0, or the failing rank's)."""
    if not os.path.isfile(args.script):
        what = "is a folder" if os.path.isdir(args.script) else "does not exist"
        raise FileNotFoundError(f"no script to run: {args.script!r} {what}")
    run_dir = tempfile.mkdtemp(prefix="ember-run-")
    cmd, env, world = command(args, run_dir)
    process = subprocess.Popen(cmd, env=env, start_new_session=True)
    interrupted = []  # (signal number, when) of each SIGINT or SIGTERM received

    def forward(number, frame):
        interrupted.append((number, time.monotonic()))
        _interrupt(process, run_dir, world, number, again=len(interrupted) > 1)
    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while process.poll() is None:
            if interrupted:  # the ranks end as the signal tells them (NOTE [ Ctrl-C on ember run ])
                if time.monotonic() - interrupted[0][1] > INTERRUPT_GRACE_SECONDS:
                    _stop(process, run_dir)
                time.sleep(POLL_SECONDS)
                continue
            records = _records(run_dir)
            failure = _first_failure(records)
            if failure is not None:
                print(_describe(failure, records), file=sys.stderr, flush=True)
                others = sorted(set(range(world)) - {failure["rank"]})
                print(f"ember run: stopping the other ranks {others}", file=sys.stderr, flush=True)
                _stop(process, run_dir)
                return failure.get("exitcode") or 128 + failure["signal"]
            time.sleep(POLL_SECONDS)
        if interrupted:
            return 128 + interrupted[0][0]
        records = _records(run_dir)
        failure = _first_failure(records)
        if failure is not None:
            print(_describe(failure, records), file=sys.stderr, flush=True)
            return failure.get("exitcode") or 128 + failure["signal"]
        return process.returncode
    finally:
        if process.poll() is None:
            _stop(process, run_dir)
        for s, handler in previous.items():
            signal.signal(s, handler)
        shutil.rmtree(run_dir, ignore_errors=True)


def add_commands(sub):
    """``ember run`` (NOTE [ Adding a subcommand ] in ember/cli.py)."""
    # allow_abbrev=False: the script's own options (e.g. --nproc) must not match ours.
    parser = sub.add_parser("run", help="start N ranks of a script with mpiexec (torchrun's counterpart)",
                            allow_abbrev=False)
    add_arguments(parser)
    # The ranks pick their own threads (OMP_NUM_THREADS=1 when several share a host).
    parser.set_defaults(func=run, computes=False)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ember run", description=__doc__.split("\n\n")[0], allow_abbrev=False)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except FileNotFoundError as exc:
        print(f"ember run: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
