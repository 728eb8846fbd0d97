"""The conformance suites' closing count: how many of torch's op_db and module_db entries
ember passes, lacks and fails.

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


def pytest_terminal_summary(terminalreporter):
    _op_db_summary(terminalreporter)
    _module_db_summary(terminalreporter)


def _op_db_summary(terminalreporter):
    outcome = _outcomes(terminalreporter, "test_op_db.py::test_entry_agrees_with_torch")
    if outcome is None:
        return
    terminalreporter.write_sep("-", "torch op_db conformance")
    terminalreporter.write_line(
        f"op_db: {outcome.get('passed', 0)} entries agree with torch, {_count('op_db_failing.txt')} listed as failing "
        f"(op_db_failing.txt), {_count('op_db_missing.txt')} missing (op_db_missing.txt); "
        f"{outcome.get('failed', 0)} failed this run")


def _module_db_summary(terminalreporter):
    outcome = _outcomes(terminalreporter, "test_module_db.py::test_module_agrees_with_torch")
    if outcome is None:
        return
    terminalreporter.write_sep("-", "torch module_db conformance")
    terminalreporter.write_line(
        f"module_db: {outcome.get('passed', 0)} modules agree with torch, {_count('module_db_failing.txt')} listed as "
        f"failing (module_db_failing.txt), {_count('module_db_missing.txt')} missing (module_db_missing.txt); "
        f"{outcome.get('failed', 0)} failed this run")
