"""torch's own operator database as ember's conformance suite: every ``op_db`` entry that
ember implements runs its sample inputs through ember and torch (op_db_runner.py says
what is compared); an entry ember lacks is listed in op_db_missing.txt, an entry that
does not yet agree in op_db_failing.txt with its first difference, and an entry that agrees
on real dtypes but not yet on complex ones in op_db_complex_failing.txt (its complex samples
are left out; a test checks they still differ). The lists are checked
against the code (entry_lists.py): an op that lands must leave the missing list, and a
fixed entry must leave the failing one (its strict xfail turns into a failure). The
counts are printed at the end of the run (conftest.py).

PyTorch counterpart: test/test_ops.py (``TestCommon``, run over ``op_db``) (v2.13).
"""

import pytest
from entry_lists import check_failing, check_missing, implemented_params, listed
from op_db_runner import COMPLEX_DTYPES, DTYPES, REAL_DTYPES, entries, is_implemented, run_entry

ENTRIES = entries()
MISSING = listed("op_db_missing.txt")
FAILING = listed("op_db_failing.txt")
COMPLEX_FAILING = listed("op_db_complex_failing.txt")

# The kernels warn (NumPy's overflow and invalid-value warnings on the samples' extreme
# values) and pytest's recording of every warning made the suite three times slower.
pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.mark.parametrize("entry", implemented_params(ENTRIES, MISSING, FAILING))
def test_entry_agrees_with_torch(entry):
    assert run_entry(ENTRIES[entry], REAL_DTYPES if entry in COMPLEX_FAILING else DTYPES) >= 0


@pytest.mark.parametrize("entry", sorted(COMPLEX_FAILING))
def test_complex_samples_of_a_listed_entry_still_differ(entry):
    # the complex samples alone, as a strict xfail: red once they agree with torch
    with pytest.raises(AssertionError):
        run_entry(ENTRIES[entry], COMPLEX_DTYPES)


def test_the_missing_list_names_exactly_what_ember_lacks():
    check_missing(ENTRIES, is_implemented, MISSING, "op_db_missing.txt")


def test_the_failing_list_names_only_implemented_entries():
    check_failing(ENTRIES, MISSING, FAILING)
    check_failing(ENTRIES, MISSING, COMPLEX_FAILING)
