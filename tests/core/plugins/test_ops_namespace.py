"""Tests for ember/_ops.py: ``ember.ops.aten.<name>`` for every core op and
``ember.ops.<ns>.<name>`` for plugin ops, compared with ``torch.ops``."""

import types

import pytest
import torch

import ember
from ember import dispatcher, library
from ember.plugins import hookimpl, registry
from ember.testing import assert_parity, make_tensor


def test_every_core_op_is_in_ember_ops_aten():
    core = {op.name for op in dispatcher._ALL_OPS if op.namespace == "aten" and op.plugin == "ember"}
    assert core and core <= set(dir(ember.ops.aten))
    for name in core:
        assert getattr(ember.ops.aten, name).qualname == f"aten::{name}"


def test_dir_lists_namespaces_and_ops():
    assert "aten" in dir(ember.ops)
    names = dir(ember.ops.aten)
    assert names == sorted(names) and {"mul", "add", "sum", "exp"} <= set(names)
    assert list(ember.ops.aten) == names


@pytest.mark.parametrize("name, shapes", [("mul", [(2, 1), (2,)]), ("add", [(1, 3, 2), (3, 2)]), ("exp", [(3,)])])
def test_ember_ops_aten_matches_torch_ops_aten(name, shapes):
    inputs = [make_tensor(shape, seed=i) for i, shape in enumerate(shapes)]
    assert_parity(lambda lib, *xs: getattr(lib.ops.aten, name)(*xs), *inputs)


def test_a_missing_op_raises_attribute_error_like_torch():
    with pytest.raises(AttributeError) as expected:
        torch.ops.aten.no_such_op
    with pytest.raises(AttributeError) as got:
        ember.ops.aten.no_such_op
    assert str(got.value) == str(expected.value)
    assert not hasattr(ember.ops.nothing_here, "op")


def test_plugin_ops_appear_in_their_namespace_and_leave_with_their_plugin():
    @library.custom_op("nstest::halve", promote="int_to_float")
    def halve(xp, x):
        return x / 2

    plugin = types.ModuleType("nstest")
    plugin.ember_register_ops = hookimpl(lambda register: register(halve))
    assert "nstest" not in dir(ember.ops)
    ember.plugins.register(plugin)
    try:
        assert "nstest" in dir(ember.ops) and dir(ember.ops.nstest) == ["halve"]
        assert ember.ops.nstest.halve(ember.tensor([3])).tolist() == [1.5]
    finally:
        ember.plugins.unregister(plugin)
    assert "nstest" not in dir(ember.ops)


def test_the_ops_catalogue_is_the_one_the_namespaces_read():
    assert registry.catalogue("ops")["aten::mul"].obj is ember.ops.aten.mul
    assert repr(ember.ops.aten) == "<ember.ops namespace 'aten'>"
