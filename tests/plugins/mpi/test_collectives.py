"""Every collective and ReduceOp of ember-mpi on 2 and 3 ranks (real mpiexec jobs),
float32/float64/int64, against NumPy; the same over TCP (the multi-host path).

Each job runs all the checks of collective_checks.py (one launch costs seconds), and
every rank reports which checks ran and which failed.
"""

import json
import pathlib

import pytest
from mpi_jobs import mpiexec

CHECKS = pathlib.Path(__file__).with_name("collective_checks.py")


@pytest.mark.parametrize("nprocs, tcp", [(2, False), (3, False), (2, True)], ids=["2-ranks", "3-ranks", "2-tcp"])
def test_every_collective_against_numpy(tmp_path, nprocs, tcp):
    job = mpiexec(nprocs, CHECKS, tmp_path, tcp=tcp)
    assert job.returncode == 0, job.stdout + job.stderr
    reports = [json.loads((tmp_path / f"rank-{r}.json").read_text()) for r in range(nprocs)]
    for rank, report in enumerate(reports):
        assert report["size"] == nprocs
        assert report["failures"] == [], f"rank {rank}:\n" + "\n".join(report["failures"])
        # 3 dtypes x (the reductions + 7 others) + the dtype-free checks: nothing was skipped
        assert len(report["checks"]) == 81, report["checks"]
    assert len({tuple(r["checks"]) for r in reports}) == 1
