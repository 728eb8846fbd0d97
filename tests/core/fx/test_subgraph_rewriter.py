"""ember.fx.replace_pattern, checked against torch.fx.replace_pattern on the same program.

PyTorch counterpart: test/fx/test_subgraph_rewriter.py (v2.13).
"""

import numpy as np
import torch
import torch.fx

import ember
import ember.fx as fx


def _program(lib):
    def forward(x, y):
        a = lib.relu(x) + y
        b = lib.relu(a) + y
        return b * 2
    return forward


def _pattern(lib):
    def pattern(x, y):
        return lib.relu(x) + y
    return pattern


def _replacement(lib):
    def replacement(x, y):
        return lib.sigmoid(x) - y
    return replacement


def test_replace_pattern_matches_torch():
    gm = fx.symbolic_trace(_program(ember))
    matches = fx.replace_pattern(gm, _pattern(ember), _replacement(ember))
    torch_gm = torch.fx.symbolic_trace(_program(torch))
    torch_matches = torch.fx.replace_pattern(torch_gm, _pattern(torch), _replacement(torch))
    assert len(matches) == len(torch_matches) == 2
    assert [n.op for n in gm.graph.nodes] == [n.op for n in torch_gm.graph.nodes]
    x = np.random.default_rng(0).standard_normal(5).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(5).astype(np.float32)
    np.testing.assert_allclose(gm(ember.tensor(x), ember.tensor(y)).numpy(),
                               torch_gm(torch.tensor(x), torch.tensor(y)).numpy(), rtol=1e-6)
    assert "relu" not in gm.code


def test_a_match_whose_inner_value_escapes_is_left_alone():
    def forward(x, y):
        r = ember.relu(x)
        return (r + y) * r  # relu's result is also used outside the pattern

    gm = fx.symbolic_trace(forward)
    assert fx.replace_pattern(gm, _pattern(ember), _replacement(ember)) == []
    x, y = ember.randn(4), ember.randn(4)
    np.testing.assert_array_equal(gm(x, y).numpy(), forward(x, y).numpy())
