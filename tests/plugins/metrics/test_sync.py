"""Metrics synced across 2 ranks of a real mpiexec job equal torchmetrics (or one
process) on all the ranks' data concatenated; the checks are in sync_checks.py."""

import json
import os
import pathlib
import subprocess
import sys

from mpi_jobs import BIN, environment

CHECKS = pathlib.Path(__file__).with_name("sync_checks.py")
MPI_TESTS = pathlib.Path(__file__).parents[1] / "mpi"  # rank_checks.py


def test_metrics_synced_over_two_ranks_equal_torchmetrics_on_all_the_data(tmp_path):
    env = environment()
    env["PYTHONPATH"] = os.pathsep.join([str(MPI_TESTS), str(CHECKS.parent), env.get("PYTHONPATH", "")])
    cmd = [str(BIN / "mpiexec"), "-n", "2", sys.executable, str(CHECKS), str(tmp_path)]
    job = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert job.returncode == 0, job.stdout + job.stderr
    reports = [json.loads((tmp_path / f"rank-{rank}.json").read_text()) for rank in range(2)]
    for rank, report in enumerate(reports):
        assert report["size"] == 2
        assert report["failures"] == [], f"rank {rank}:\n" + "\n".join(report["failures"])
        # 3 tasks x (4 stat metrics x 4 averages + ConfusionMatrix) + the curves' 14 + 7 others: nothing skipped
        assert len(report["checks"]) == 3 * 17 + 2 * (1 + 3 + 3) + 7, report["checks"]
    assert reports[0]["checks"] == reports[1]["checks"]
