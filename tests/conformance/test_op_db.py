"""torch's own operator database as ember's conformance suite: every ``op_db`` entry that
ember implements runs its sample inputs through ember and torch (op_db_runner.py says
what is compared); an entry ember lacks is listed in op_db_missing.txt, an entry that
does not yet agree in op_db_failing.txt with its first difference. Both lists are checked
against the code: an op that lands must leave the missing list, and a fixed entry must
leave the failing one (its strict xfail turns into a failure). The counts are printed at
the end of the run (conftest.py).

PyTorch counterpart: test/test_ops.py (``TestCommon``, run over ``op_db``) (v2.13).
"""

import pathlib

import pytest
from op_db_runner import entries, is_implemented, run_entry

HERE = pathlib.Path(__file__).parent
ENTRIES = entries()


def listed(name):
    """``{entry id: reason}`` from one of the lists beside this file."""
    rows = {}
    for line in (HERE / name).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            entry, _, reason = line.partition("\t")
            rows[entry.strip()] = reason.strip()
    return rows


# The kernels warn (NumPy's overflow and invalid-value warnings on the samples' extreme
# values) and pytest's recording of every warning made the suite three times slower.
pytestmark = pytest.mark.filterwarnings("ignore")

MISSING = listed("op_db_missing.txt")
FAILING = listed("op_db_failing.txt")


def implemented_entries():
    for entry in ENTRIES:
        if entry in MISSING:
            continue
        marks = [pytest.mark.xfail(strict=True, reason=FAILING[entry])] if entry in FAILING else []
        yield pytest.param(entry, marks=marks, id=entry)


@pytest.mark.parametrize("entry", implemented_entries())
def test_entry_agrees_with_torch(entry):
    assert run_entry(ENTRIES[entry]) >= 0


def test_the_missing_list_names_exactly_what_ember_lacks():
    lacking = {entry for entry, op in ENTRIES.items() if not is_implemented(op)}
    assert not lacking - set(MISSING), f"add to op_db_missing.txt: {sorted(lacking - set(MISSING))}"
    landed = set(MISSING) - lacking
    assert not landed, f"implemented now, remove from op_db_missing.txt: {sorted(landed)}"


def test_the_failing_list_names_only_implemented_entries():
    assert not set(FAILING) - set(ENTRIES), f"not in op_db: {sorted(set(FAILING) - set(ENTRIES))}"
    assert not set(FAILING) & set(MISSING), f"listed as both failing and missing: {sorted(set(FAILING) & set(MISSING))}"
