"""Forward-mode AD over torch's op_db: every entry torch runs in forward AD
(``supports_forward_ad``) that ember implements is run on dual tensors in both, and the
tangents are compared (forward_ad_runner.py). An entry that reaches an ember op without a
forward-derivative rule is listed in forward_ad_no_rule.txt with that op, and each listed
line is checked to still raise the NotImplementedError (a rule that lands turns its line
red); an entry whose tangents disagree is in forward_ad_failing.txt (strict xfail).

PyTorch counterpart: test/test_ops.py ``TestFwdGradients`` (v2.13).
"""

import pytest
from entry_lists import implemented_params, listed
from forward_ad_runner import NoRule, run_forward_entry, supports_forward_ad
from op_db_runner import entries

ENTRIES = entries()
MISSING = listed("op_db_missing.txt")
FAILING = listed("op_db_failing.txt")
NO_RULE = listed("forward_ad_no_rule.txt")
FORWARD_FAILING = listed("forward_ad_failing.txt")
RUN = {name: op for name, op in ENTRIES.items()
       if name not in MISSING and name not in FAILING and supports_forward_ad(op)}

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.mark.parametrize("entry", implemented_params(RUN, NO_RULE, FORWARD_FAILING))
def test_entry_tangents_agree_with_torch(entry):
    assert run_forward_entry(RUN[entry]) >= 0


@pytest.mark.parametrize("entry", sorted(NO_RULE))
def test_a_listed_entry_still_lacks_a_rule(entry):
    with pytest.raises(NoRule, match=f"with {NO_RULE[entry]} that does not support it"):
        run_forward_entry(RUN[entry])


def test_the_lists_name_only_entries_that_run():
    assert not set(NO_RULE) - set(RUN), f"not run in forward AD: {sorted(set(NO_RULE) - set(RUN))}"
    assert not set(FORWARD_FAILING) - set(RUN)
    assert not set(NO_RULE) & set(FORWARD_FAILING)
