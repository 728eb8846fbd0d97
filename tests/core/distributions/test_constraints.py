"""Constraints against torch: check() on values inside, on the edge and outside, event
dimensions, and reprs (they appear in validation errors)."""

import numpy as np
import pytest
import torch

import ember

VALUES = np.array([[-1.0, 0.0, 0.5], [1.0, 2.0, np.nan]])
MATRICES = np.array([[[2.0, 0.0], [1.0, 3.0]], [[1.0, 0.5], [0.5, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]])

CONSTRAINTS = {
    "real": (lambda c: c.real, VALUES),
    "positive": (lambda c: c.positive, VALUES),
    "nonnegative": (lambda c: c.nonnegative, VALUES),
    "unit_interval": (lambda c: c.unit_interval, VALUES),
    "boolean": (lambda c: c.boolean, VALUES),
    "nonnegative_integer": (lambda c: c.nonnegative_integer, VALUES),
    "positive_integer": (lambda c: c.positive_integer, VALUES),
    "greater_than": (lambda c: c.greater_than(0.5), VALUES),
    "greater_than_eq": (lambda c: c.greater_than_eq(0.5), VALUES),
    "less_than": (lambda c: c.less_than(0.5), VALUES),
    "interval": (lambda c: c.interval(-1.0, 1.0), VALUES),
    "half_open_interval": (lambda c: c.half_open_interval(-1.0, 1.0), VALUES),
    "integer_interval": (lambda c: c.integer_interval(0, 1), VALUES),
    "real_vector": (lambda c: c.real_vector, VALUES),
    "independent": (lambda c: c.independent(c.positive, 1), VALUES),
    "simplex": (lambda c: c.simplex, np.array([[0.2, 0.3, 0.5], [0.5, 0.6, -0.1]])),
    "one_hot": (lambda c: c.one_hot, np.array([[0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])),
    "lower_triangular": (lambda c: c.lower_triangular, MATRICES),
    "lower_cholesky": (lambda c: c.lower_cholesky, MATRICES),
    "square": (lambda c: c.square, MATRICES),
    "symmetric": (lambda c: c.symmetric, MATRICES),
    "positive_definite": (lambda c: c.positive_definite, MATRICES[1:]),
}


@pytest.mark.parametrize("name", CONSTRAINTS)
def test_check_and_repr_match_torch(name):
    build, values = CONSTRAINTS[name]
    t_constraint = build(torch.distributions.constraints)
    e_constraint = build(ember.distributions.constraints)
    expected = t_constraint.check(torch.tensor(values))
    actual = e_constraint.check(ember.tensor(values))
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    assert repr(e_constraint) == repr(t_constraint)
    assert (e_constraint.event_dim, e_constraint.is_discrete) == (t_constraint.event_dim, t_constraint.is_discrete)


def test_dependent_constraints():
    c = ember.distributions.constraints
    assert c.is_dependent(c.dependent) and not c.is_dependent(c.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        c.dependent.check(ember.zeros(1))
    with pytest.raises(NotImplementedError, match=".event_dim cannot be determined statically"):
        c.dependent.event_dim
    assert c.dependent(is_discrete=True, event_dim=1).event_dim == 1
    # On the class a dependent_property is a constraint; on an instance, its value.
    assert c.is_dependent(ember.distributions.Uniform.support)
    assert repr(ember.distributions.Uniform(0.0, 2.0).support) == "Interval(lower_bound=0.0, upper_bound=2.0)"
