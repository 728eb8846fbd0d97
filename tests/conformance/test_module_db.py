"""torch's module database as ember's conformance suite: every ``module_db`` entry whose
class ember.nn has runs its module inputs through ember and torch with the same
constructor arguments and state (module_db_runner.py says what is compared); an entry
ember lacks is listed in module_db_missing.txt, an entry that does not yet agree in
module_db_failing.txt with its first difference. Both lists are checked against the code
(entry_lists.py): a module that lands must leave the missing list, and a fixed entry must
leave the failing one (its strict xfail turns into a failure). The counts are printed at
the end of the run (conftest.py).

PyTorch counterpart: test/test_modules.py (``TestModule``, run over ``module_db``) (v2.13).
"""

import pytest
from entry_lists import check_failing, check_missing, implemented_params, listed
from module_db_runner import entries, is_implemented, run_entry

ENTRIES = entries()
MISSING = listed("module_db_missing.txt")
FAILING = listed("module_db_failing.txt")

# The kernels warn on some inputs (NumPy's overflow and invalid-value warnings) and
# pytest's recording of every warning slows the suite down several times.
pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.mark.parametrize("entry", implemented_params(ENTRIES, MISSING, FAILING))
def test_module_agrees_with_torch(entry):
    assert run_entry(ENTRIES[entry]) > 0


def test_the_missing_list_names_exactly_what_ember_lacks():
    check_missing(ENTRIES, is_implemented, MISSING, "module_db_missing.txt")


def test_the_failing_list_names_only_implemented_entries():
    check_failing(ENTRIES, MISSING, FAILING)
