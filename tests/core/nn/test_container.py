"""Tests for ember/nn/modules/container.py against torch.nn: Sequential, ModuleList,
ModuleDict, ParameterList and ParameterDict (indexing, mutation, keys, reprs, errors)."""

from collections import OrderedDict

import numpy as np
import pytest
import torch
from nn_parity import both, define_classes, same_error

import ember


def layers(lib, n=4):
    """``n`` distinguishable modules: Affine(i + 1, i + 2)."""
    Affine = define_classes(lib)[0]
    return [Affine(i + 1, i + 2) for i in range(n)]


def keys_and_shapes(module):
    """What identifies a container's content: its state-dict keys and shapes."""
    return [(k, tuple(v.shape)) for k, v in module.state_dict().items()]


def summary(value):
    """A library-independent description of a container operation's result."""
    if isinstance(value, (ember.nn.Module, torch.nn.Module)):
        return type(value).__name__, keys_and_shapes(value), repr(value).replace("torch", "ember")
    if isinstance(value, (ember.Tensor, torch.Tensor)):
        return tuple(value.shape), type(value).__name__
    if isinstance(value, (list, tuple)):
        return [summary(v) for v in value]
    return value


def same(script):
    ours, theirs = both(script)
    assert summary(ours) == summary(theirs)


# --- Sequential -----------------------------------------------------------------------

@pytest.mark.parametrize("op", [
    lambda s, lib: s[0],
    lambda s, lib: s[-1],
    lambda s, lib: s[1:3],
    lambda s, lib: s[::-2],
    lambda s, lib: len(s),
    lambda s, lib: list(s),
    lambda s, lib: s.append(layers(lib, 1)[0]),
    lambda s, lib: s.insert(1, layers(lib, 1)[0]),
    lambda s, lib: s.insert(-1, layers(lib, 1)[0]),
    lambda s, lib: s.insert(4, layers(lib, 1)[0]),
    lambda s, lib: s.extend(layers(lib, 2)),
    lambda s, lib: s.pop(1),
    lambda s, lib: [s.__delitem__(1), s][1],
    lambda s, lib: [s.__delitem__(slice(0, 3, 2)), s][1],
    lambda s, lib: [s.__setitem__(-2, layers(lib, 1)[0]), s][1],
    lambda s, lib: s + lib.nn.Sequential(*layers(lib, 1)),
])
def test_sequential_operations_match_torch(op):
    def script(lib):
        seq = lib.nn.Sequential(*layers(lib))
        result = op(seq, lib)
        return [result, seq]
    same(script)


def test_sequential_from_ordered_dict_keeps_names_and_slices_keep_them():
    def script(lib):
        seq = lib.nn.Sequential(OrderedDict([("first", layers(lib)[0]), ("second", layers(lib)[1])]))
        return [seq, seq[1:], seq[-1], seq.append(layers(lib)[2])]
    same(script)


@pytest.mark.parametrize("bad", [
    lambda lib: lib.nn.Sequential(*layers(lib))[4],
    lambda lib: lib.nn.Sequential(*layers(lib))[-5],
    lambda lib: lib.nn.Sequential(*layers(lib)).insert(6, layers(lib)[0]),
    lambda lib: lib.nn.Sequential(*layers(lib)).insert(0, 3),
    lambda lib: lib.nn.Sequential(3),
    lambda lib: lib.nn.Sequential(*layers(lib)) + 1,
])
def test_sequential_errors_match_torch(bad):
    same_error(bad)


def test_sequential_forward_chains_its_layers():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 1)).astype(np.float32)

    def script(lib):
        seq = lib.nn.Sequential(*layers(lib, 3))
        for p in seq.parameters():
            p.data = lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32))
        return seq(lib.tensor(x)).detach().numpy()

    rng = np.random.default_rng(0)
    ours = script(ember)
    rng = np.random.default_rng(0)
    theirs = script(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_sequential_dir_hides_indices():
    seq = ember.nn.Sequential(*layers(ember, 2))
    assert "0" not in dir(seq) and "append" in dir(seq)


# --- ModuleList -----------------------------------------------------------------------

@pytest.mark.parametrize("op", [
    lambda m, lib: m[-1],
    lambda m, lib: m[1:],
    lambda m, lib: m.append(layers(lib, 1)[0]),
    lambda m, lib: m.extend(layers(lib, 2)),
    lambda m, lib: m.insert(1, layers(lib, 1)[0]),
    lambda m, lib: m.pop(-1),
    lambda m, lib: [m.__delitem__(slice(1, None)), m][1],
    lambda m, lib: [m.__delitem__(0), m][1],
    lambda m, lib: [m.__setitem__(0, layers(lib, 1)[0]), m][1],
    lambda m, lib: m + lib.nn.ModuleList(layers(lib, 1)),
    lambda m, lib: m.__iadd__(layers(lib, 1)),
    lambda m, lib: [len(m), list(m)],
])
def test_module_list_operations_match_torch(op):
    def script(lib):
        modules = lib.nn.ModuleList(layers(lib, 3))
        result = op(modules, lib)
        return [result, modules]
    same(script)


def test_module_list_repr_groups_repeated_modules_like_torch():
    def script(lib):
        Affine, Square, _ = define_classes(lib)
        return lib.nn.ModuleList([Affine(2, 2), Affine(2, 2), Affine(2, 2), Square(), Affine(2, 2), Square(),
                                  Square(), lib.nn.Sequential(Affine(1, 1), Affine(1, 1))])
    same(script)
    same(lambda lib: lib.nn.ModuleList())


@pytest.mark.parametrize("bad", [
    lambda lib: lib.nn.ModuleList(layers(lib))[4],
    lambda lib: lib.nn.ModuleList(3),
    lambda lib: lib.nn.ModuleList([3]),
    lambda lib: lib.nn.ModuleList(layers(lib))(lib.zeros(1)),
])
def test_module_list_errors_match_torch(bad):
    same_error(bad)


# --- ModuleDict -----------------------------------------------------------------------

@pytest.mark.parametrize("op", [
    lambda d, lib: d["b"],
    lambda d, lib: list(d.keys()),
    lambda d, lib: list(d.values()),
    lambda d, lib: [k for k, _ in d.items()],
    lambda d, lib: ["a" in d, "zz" in d, len(d), list(d)],
    lambda d, lib: d.pop("a"),
    lambda d, lib: [d.update([("c", layers(lib, 1)[0]), ("a", layers(lib, 2)[1])]), d][1],
    lambda d, lib: [d.update(lib.nn.ModuleDict({"x": layers(lib, 1)[0]})), d][1],
    lambda d, lib: [d.clear(), d][1],
    lambda d, lib: [d.__delitem__("b"), d][1],
    lambda d, lib: [d.__setitem__("new", layers(lib, 1)[0]), d][1],
])
def test_module_dict_operations_match_torch(op):
    def script(lib):
        all_layers = layers(lib, 3)
        modules = lib.nn.ModuleDict({"b": all_layers[0], "a": all_layers[1]})  # insertion order, not sorted
        result = op(modules, lib)
        return [result, modules]
    same(script)


@pytest.mark.parametrize("bad", [
    lambda lib: lib.nn.ModuleDict(3),
    lambda lib: lib.nn.ModuleDict([3]),
    lambda lib: lib.nn.ModuleDict([("a", layers(lib)[0], 1)]),
    lambda lib: lib.nn.ModuleDict({"a.b": layers(lib)[0]}),
    lambda lib: lib.nn.ModuleDict()["missing"],
])
def test_module_dict_errors_match_torch(bad):
    same_error(bad)


# --- ParameterList / ParameterDict ----------------------------------------------------

@pytest.mark.parametrize("op", [
    lambda p, lib: p[0],
    lambda p, lib: p[-1],
    lambda p, lib: p[1:],
    lambda p, lib: p.append(lib.zeros(5)),
    lambda p, lib: p.extend([lib.zeros(1), lib.nn.Parameter(lib.zeros(2, dtype=lib.float64))]),
    lambda p, lib: p.__iadd__([lib.ones(3)]),
    lambda p, lib: [p.__setitem__(0, lib.zeros(7)), p][1],
    lambda p, lib: [len(p), list(p), list(p.parameters())],
    lambda p, lib: p.append(layers(lib, 1)[0]),
    lambda p, lib: p.append("text"),
])
def test_parameter_list_operations_match_torch(op):
    def script(lib):
        params = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(4)])
        result = op(params, lib)
        return [result, params]
    same(script)


def test_parameter_list_turns_tensors_into_parameters():
    params = ember.nn.ParameterList([ember.zeros(2)])
    assert isinstance(params[0], ember.nn.Parameter) and params[0].requires_grad


@pytest.mark.parametrize("bad", [
    lambda lib: lib.nn.ParameterList([lib.zeros(1)])[1],
    lambda lib: lib.nn.ParameterList(lib.zeros(3)),
    lambda lib: lib.nn.ParameterList(3),
    lambda lib: lib.nn.ParameterList()(1),
    lambda lib: lib.nn.ParameterDict()(1),
    lambda lib: lib.nn.ParameterDict({1: lib.zeros(1)}),
    lambda lib: lib.nn.ParameterDict(3),
    lambda lib: lib.nn.ParameterDict([("a",)]),
    lambda lib: lib.nn.ParameterDict()["missing"],
])
def test_parameter_container_errors_match_torch(bad):
    same_error(bad)


@pytest.mark.parametrize("op", [
    lambda d, lib: d["b"],
    lambda d, lib: [list(d.keys()), list(d), list(reversed(d)), len(d), "a" in d],
    lambda d, lib: list(d.values()),
    lambda d, lib: [k for k, _ in d.items()],
    lambda d, lib: d.pop("b"),
    lambda d, lib: d.popitem(),
    lambda d, lib: d.get("zz", 3),
    lambda d, lib: d.setdefault("new", lib.zeros(3)),
    lambda d, lib: d.copy(),
    lambda d, lib: d.fromkeys(["p", "q"], lib.zeros(1)),
    lambda d, lib: [d.update(OrderedDict([("z", lib.ones(1)), ("m", lib.ones(2))])), d][1],
    lambda d, lib: [d.update([("y", lib.ones(1)), ("c", lib.ones(1))]), d][1],
    lambda d, lib: [d.clear(), d][1],
    lambda d, lib: [d.__delitem__("a"), d][1],
    lambda d, lib: [d.__setitem__("o", "an object"), d][1],
])
def test_parameter_dict_operations_match_torch(op):
    def script(lib):
        params = lib.nn.ParameterDict({"b": lib.nn.Parameter(lib.ones(3)), "a": lib.zeros(2, 2)})  # sorted
        result = op(params, lib)
        return [result, params]
    same(script)


def test_containers_inside_a_module_give_torchs_state_dict_keys():
    def script(lib):
        root = lib.nn.Module()
        root.layers = lib.nn.ModuleList([lib.nn.Sequential(*layers(lib, 2))])
        root.named = lib.nn.ModuleDict({"head": layers(lib, 1)[0]})
        root.plist = lib.nn.ParameterList([lib.zeros(2)])
        root.pdict = lib.nn.ParameterDict({"w": lib.zeros(3)})
        return root
    same(script)
