"""Tests for ember/distributed/run.py and launch_rank.py: ``ember run`` starts the ranks
with torchrun's variables, and when one rank fails (an exception, SIGKILL, a collective
that never completes) every rank is gone within seconds, the failing rank named, and no
process of the job is left (checked with psutil). Also over TCP."""

import argparse
import re
import signal
import subprocess
import sys
import time
import uuid

import pytest
from mpi_jobs import ember_run, leftovers

import ember.distributed.run as run

SCRIPT = __file__.replace("test_run.py", "rank_faults.py")


def test_ember_run_sets_torchruns_variables():
    job = ember_run(2, SCRIPT, "ok", uuid.uuid4().hex)
    assert job.returncode == 0, job.stderr
    lines = sorted(line for line in job.stdout.splitlines() if line.startswith("rank "))
    port = re.search(r"MASTER_PORT=(\d+)", lines[0]).group(1)
    assert lines == [f"rank {r}: RANK={r} LOCAL_RANK={r} WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT={port} "
                     f"sum=[2.0, 2.0, 2.0]" for r in range(2)]


FAULTS = {
    "raise": (1, r"ember run: rank 1 \(pid \d+ on .+\) exited with code 1: ValueError: rank one gives up"),
    "kill": (137, r"ember run: rank 1 \(pid \d+ on .+\) was killed by signal 9 \(SIGKILL\)"),
    "timeout": (1, r"ember run: rank 0 \(pid \d+ on .+\) exited with code 1: DistBackendError: \[rank 0\] "
                   r"all_reduce timed out after 2 s"),
    # NOTE [ The launcher ends the job ]: under ember run, ember-mpi's end of a stuck job
    # is this rank's exit, not MPI_Abort, so the launcher reports it and stops rank 1
    "swallowed": (1, r"\[ember-mpi\] rank 0: a collective never completed .*; ember run stops the other ranks\n"
                     r"(.*\n)*ember run: rank 0 \(pid \d+ on .+\) exited with code 1\n"),
}


@pytest.mark.parametrize("tcp", [False, True], ids=["shm", "tcp"])
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_failing_rank_stops_the_job(fault, tcp):
    marker = uuid.uuid4().hex
    start = time.monotonic()
    job = ember_run(2, SCRIPT, fault, marker, tcp=tcp)
    elapsed = time.monotonic() - start
    status, message = FAULTS[fault]
    assert job.returncode == status, job.stderr
    assert re.search(message, job.stderr), job.stderr
    assert re.search(r"ember run: stopping the other ranks \[[01]\]", job.stderr)
    assert "BAD TERMINATION" not in job.stdout + job.stderr  # mpiexec left the job to the launcher
    assert "YOUR APPLICATION TERMINATED" not in job.stdout + job.stderr
    assert elapsed < 40, f"the job took {elapsed:.1f} s to end"
    time.sleep(0.5)
    assert leftovers(marker) == []


def test_ctrl_c_on_ember_run_reaches_every_rank(tmp_path):
    from mpi_jobs import environment

    marker = str(tmp_path)
    launcher = subprocess.Popen([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", SCRIPT,
                                 "sleep", marker], env=environment(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while not all((tmp_path / f"ready-{r}").exists() for r in range(2)):
        assert time.monotonic() < deadline and launcher.poll() is None, launcher.communicate()
        time.sleep(0.1)
    launcher.send_signal(signal.SIGINT)
    launcher.communicate(timeout=30)
    assert launcher.returncode != 0
    time.sleep(0.5)
    assert leftovers(marker) == []


def test_command_line(tmp_path, monkeypatch):
    hostfile = tmp_path / "hosts"
    hostfile.write_text("# two machines\nnode-a:2\nnode-b\n")
    parser = argparse.ArgumentParser()
    run.add_arguments(parser)
    args = parser.parse_args(["--nproc-per-node", "2", "--hostfile", str(hostfile), "--tcp", "train.py", "--lr",
                              "0.1"])
    cmd, env, world = run.command(args, str(tmp_path))
    assert world == 4 and env["MASTER_ADDR"] == "node-a" and env["FI_PROVIDER"] == "tcp"
    assert cmd[1:4] == ["-n", "4", "-disable-auto-cleanup"] and cmd[4:8] == ["-f", str(hostfile), "-ppn", "2"]
    assert cmd[-6:] == [sys.executable, "-m", "ember.distributed.launch_rank", "train.py", "--lr", "0.1"]
    # torchrun's default of one thread per rank, unless the user chose
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert run.command(args, str(tmp_path))[1]["OMP_NUM_THREADS"] == "1"


def test_launch_rank_reads_mpich_and_open_mpi_variables():
    from ember.distributed.launch_rank import _rank_variables

    assert _rank_variables({"PMI_RANK": "3", "PMI_SIZE": "4", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2"}) == {
        "RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}
    assert _rank_variables({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"})["LOCAL_RANK"] == "1"
    assert _rank_variables({}) == {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"}


def test_no_mpiexec_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="no mpiexec found"):
        run.find_mpiexec(str(tmp_path / "missing"))
