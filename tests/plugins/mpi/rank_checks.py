"""The checks a rank of a multi-rank test script runs, and the report it leaves.

Used inside mpiexec jobs (collective_checks.py, tests/core/nn/parallel/ddp_checks.py):
``@checks.run("name")`` runs a function at once; it passes by returning True, anything
else (or an exception) is recorded as a failure. ``checks.write(folder, rank)`` leaves
``rank-<N>.json`` for the test to read."""

import json
import os
import traceback


class RankChecks:
    def __init__(self):
        self.names, self.failures = [], []

    def run(self, name):
        def decorate(fn):
            self.names.append(name)
            try:
                result = fn()
                if result is not True:
                    self.failures.append(f"{name}: {result}")
            except Exception:
                self.failures.append(f"{name}: {traceback.format_exc()}")
            return fn
        return decorate

    def write(self, folder, rank, **extra):
        with open(os.path.join(folder, f"rank-{rank}.json"), "w") as f:
            json.dump({"checks": self.names, "failures": self.failures, **extra}, f)
