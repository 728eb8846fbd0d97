"""``ember train`` run as a user runs it, for the zoo's acceptance tests: in a child
process with one BLAS thread, its CPU time measured as the child's.

PyTorch counterpart: none (test infrastructure).
"""

import os
import resource
import subprocess
import sys


def train_in_child(model_name, data, out):
    """Run ``ember train MODEL --data DATA --out OUT``; return the CPU seconds it took.

    A child process, because inside a pytest worker that has already run thousands of
    tests the same training took about three times the CPU (the garbage collector walks
    everything those tests left alive); one BLAS thread, because threaded BLAS on a loaded
    2-core box spins (about 10x the CPU time). Start-up is included."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "ember.cli", "train", model_name, "--data", data, "--out", str(out),
                    "--no-progress"], env=env, check=True, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
