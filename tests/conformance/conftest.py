"""The conformance suites' closing count: how many of torch's op_db entries ember passes,
lacks and fails.

PyTorch counterpart: none (test infrastructure).
"""

import pathlib

HERE = pathlib.Path(__file__).parent


def _count(path):
    return sum(1 for line in (HERE / path).read_text().splitlines() if line.strip() and not line.startswith("#"))


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    runs = [r for key in ("passed", "failed", "xfailed", "xpassed") for r in stats.get(key, [])
            if "test_op_db.py::test_entry_agrees_with_torch" in getattr(r, "nodeid", "") and r.when == "call"]
    if not runs:
        return
    outcome = {}
    for report in runs:
        kind = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
        outcome[kind] = outcome.get(kind, 0) + 1
    terminalreporter.write_sep("-", "torch op_db conformance")
    terminalreporter.write_line(
        f"op_db: {outcome.get('passed', 0)} entries agree with torch, {_count('op_db_failing.txt')} listed as failing "
        f"(op_db_failing.txt), {_count('op_db_missing.txt')} missing (op_db_missing.txt); "
        f"{outcome.get('failed', 0)} failed this run")
