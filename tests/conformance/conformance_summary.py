"""The conformance suites' closing count: how many of torch's op_db and module_db entries
ember passes, lacks and fails. The root conftest.py calls ``write_counts``: under xdist
only the controller writes the summary, and it never loads this folder's conftest.

PyTorch counterpart: none (test infrastructure).
"""

import pathlib

HERE = pathlib.Path(__file__).parent


def _count(path):
    return sum(1 for line in (HERE / path).read_text().splitlines() if line.strip() and not line.startswith("#"))


def _outcomes(terminalreporter, test):
    """``{passed, failed, xfailed, xpassed: count}`` over the runs of ``test`` (a node id
    part), or None where it did not run."""
    stats = terminalreporter.stats
    runs = [r for key in ("passed", "failed", "xfailed", "xpassed") for r in stats.get(key, [])
            if test in getattr(r, "nodeid", "") and r.when == "call"]
    if not runs:
        return None
    outcome = {}
    for report in runs:
        kind = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
        outcome[kind] = outcome.get(kind, 0) + 1
    return outcome


# (test, title, what agrees, list prefix): one closing line per suite that ran.
SUITES = (
    ("test_op_db.py::test_entry_agrees_with_torch", "torch op_db conformance", "op_db: {} entries", "op_db"),
    ("test_module_db.py::test_module_agrees_with_torch", "torch module_db conformance", "module_db: {} modules",
     "module_db"),
)


def write_counts(terminalreporter):
    for test, title, agree, prefix in SUITES:
        outcome = _outcomes(terminalreporter, test)
        if outcome is None:
            continue
        terminalreporter.write_sep("-", title)
        terminalreporter.write_line(
            f"{agree.format(outcome.get('passed', 0))} agree with torch, {_count(prefix + '_failing.txt')} listed as "
            f"failing ({prefix}_failing.txt), {_count(prefix + '_missing.txt')} missing ({prefix}_missing.txt); "
            f"{outcome.get('failed', 0)} failed this run")
