"""The two lists a conformance suite keeps beside it, shared by test_op_db.py and
test_module_db.py: ``*_missing.txt`` (entries ember has no counterpart for) and
``*_failing.txt`` (entries that do not agree with torch yet, each with its first
difference), and the checks that keep both exact.

PyTorch counterpart: none (test infrastructure; torch's suites mark expected failures
with ``DecorateInfo(unittest.expectedFailure, ...)`` in the database itself).
"""

import pathlib

import pytest

HERE = pathlib.Path(__file__).parent


def listed(name):
    """``{entry id: reason}`` from one of the lists beside this file."""
    rows = {}
    for line in (HERE / name).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            entry, _, reason = line.partition("\t")
            rows[entry.strip()] = reason.strip()
    return rows


def implemented_params(entries, missing, failing):
    """One pytest param per entry not listed missing; a listed failure is a strict xfail,
    so fixing it turns the test red until the line is removed."""
    return [pytest.param(entry, marks=[pytest.mark.xfail(strict=True, reason=failing[entry])] if entry in failing
                         else [], id=entry)
            for entry in entries if entry not in missing]


def check_missing(entries, is_implemented, missing, name):
    """The missing list ``name`` names exactly the entries ember lacks."""
    lacking = {entry for entry, info in entries.items() if not is_implemented(info)}
    assert not lacking - set(missing), f"add to {name}: {sorted(lacking - set(missing))}"
    landed = set(missing) - lacking
    assert not landed, f"implemented now, remove from {name}: {sorted(landed)}"


def check_failing(entries, missing, failing):
    """The failing list names only entries that exist and are not missing."""
    assert not set(failing) - set(entries), f"not in the database: {sorted(set(failing) - set(entries))}"
    both = set(failing) & set(missing)
    assert not both, f"listed as both failing and missing: {sorted(both)}"
