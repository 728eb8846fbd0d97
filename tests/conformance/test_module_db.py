"""torch's module database as ember's conformance suite: every ``module_db`` entry whose
class ember.nn has runs its module inputs through ember and torch with the same
constructor arguments and state (module_db_runner.py says what is compared); an entry
ember lacks is listed in module_db_missing.txt, an entry that does not yet agree in
module_db_failing.txt with its first difference. Both lists are checked against the code:
a module that lands must leave the missing list, and a fixed entry must leave the failing
one (its strict xfail turns into a failure). The counts are printed at the end of the run
(conftest.py).

PyTorch counterpart: test/test_modules.py (``TestModule``, run over ``module_db``) (v2.13).
"""

import pathlib

import pytest
from module_db_runner import entries, is_implemented, run_entry

HERE = pathlib.Path(__file__).parent
ENTRIES = entries()

# The kernels warn on some inputs (NumPy's overflow and invalid-value warnings) and
# pytest's recording of every warning slows the suite down several times.
pytestmark = pytest.mark.filterwarnings("ignore")


def listed(name):
    """``{entry id: reason}`` from one of the lists beside this file."""
    rows = {}
    for line in (HERE / name).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            entry, _, reason = line.partition("\t")
            rows[entry.strip()] = reason.strip()
    return rows


MISSING = listed("module_db_missing.txt")
FAILING = listed("module_db_failing.txt")


def implemented_entries():
    for entry in ENTRIES:
        if entry in MISSING:
            continue
        marks = [pytest.mark.xfail(strict=True, reason=FAILING[entry])] if entry in FAILING else []
        yield pytest.param(entry, marks=marks, id=entry)


@pytest.mark.parametrize("entry", list(implemented_entries()))
def test_module_agrees_with_torch(entry):
    assert run_entry(ENTRIES[entry]) > 0


def test_the_missing_list_names_exactly_what_ember_lacks():
    lacking = {entry for entry, info in ENTRIES.items() if not is_implemented(info)}
    assert not lacking - set(MISSING), f"add to module_db_missing.txt: {sorted(lacking - set(MISSING))}"
    landed = set(MISSING) - lacking
    assert not landed, f"implemented now, remove from module_db_missing.txt: {sorted(landed)}"


def test_the_failing_list_names_only_implemented_entries():
    assert not set(FAILING) - set(ENTRIES), f"not in module_db: {sorted(set(FAILING) - set(ENTRIES))}"
    both = set(FAILING) & set(MISSING)
    assert not both, f"listed as both failing and missing: {sorted(both)}"
