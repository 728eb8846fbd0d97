"""Tests for ember/nn/modules/module.py against torch.nn.Module: registration, the
named_* walks, modes, moving and converting, state dicts, lookups, repr and pickling."""

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch
from nn_parity import Net, both, define_classes, error_of, numpy_of, same_error, seed_parameters, to_ember_state

import ember


def nets():
    """(ember Net, torch Net) with the same values."""
    ember_net, torch_net = both(lambda lib: define_classes(lib)[2]())
    seed_parameters(torch_net)
    ember_net.load_state_dict(to_ember_state(torch_net.state_dict()))
    return ember_net, torch_net


def names(pairs):
    return [name for name, _ in pairs]


# --- registration and walks ---------------------------------------------------------

@pytest.mark.parametrize("walk", [
    lambda m: m.named_parameters(),
    lambda m: m.named_parameters(prefix="model"),
    lambda m: m.named_parameters(recurse=False),
    lambda m: m.named_parameters(remove_duplicate=False),
    lambda m: m.named_buffers(),
    lambda m: m.named_buffers(prefix="m", recurse=True, remove_duplicate=False),
    lambda m: m.named_children(),
    lambda m: m.named_modules(),
    lambda m: m.named_modules(prefix="root"),
    lambda m: m.named_modules(remove_duplicate=False),
])
def test_named_walks_match_torch(walk):
    ember_net, torch_net = nets()
    assert names(walk(ember_net)) == names(walk(torch_net))


def test_walks_without_names_match_the_named_ones():
    ember_net, torch_net = nets()
    for net in (ember_net, torch_net):
        assert [p for _, p in net.named_parameters()] == list(net.parameters())
        assert len(list(net.buffers())) == len(list(net.named_buffers()))
        assert list(net.children()) == [m for _, m in net.named_children()]
        assert list(net.modules()) == [m for _, m in net.named_modules()]
    assert [tuple(p.shape) for p in ember_net.parameters()] == [tuple(p.shape) for p in torch_net.parameters()]


def test_setattr_routes_values_into_the_right_dicts():
    def script(lib):
        m = lib.nn.Module()
        m.register_buffer("b", lib.zeros(2))
        m.b = lib.ones(2)                       # a tensor assigned to a buffer name stays a buffer
        m.p = lib.nn.Parameter(lib.zeros(1))
        m.b = lib.nn.Parameter(lib.zeros(3))    # a parameter replaces the buffer
        m.child = lib.nn.Module()
        m.p = None                              # None keeps the name registered
        m.plain = 3
        del m.child
        m.register_parameter("q", None)
        return (list(m._parameters), list(m._buffers), list(m._modules), m.p, m.q, m.plain,
                sorted(k for k in m.__dict__ if not k.startswith("_") and k != "training"))
    assert both(script)[0] == both(script)[1]


@pytest.mark.parametrize("bad", [
    lambda lib: setattr(_with_param(lib), "p", lib.zeros(2)),
    lambda lib: setattr(_with_child(lib), "c", 3),
    lambda lib: _with_buffer(lib).__setattr__("b", 3),
    lambda lib: lib.nn.Module().register_buffer("a.b", None),
    lambda lib: lib.nn.Module().register_buffer("", None),
    lambda lib: lib.nn.Module().register_buffer(3, None),
    lambda lib: lib.nn.Module().register_buffer("x", 3),
    lambda lib: lib.nn.Module().register_parameter("a.b", None),
    lambda lib: lib.nn.Module().register_parameter("x", lib.zeros(1)),
    lambda lib: lib.nn.Module().add_module("a.b", None),
    lambda lib: lib.nn.Module().add_module("", None),
    lambda lib: lib.nn.Module().add_module("x", 3),
    lambda lib: lib.nn.Module().register_buffer("training", None),
    lambda lib: lib.nn.Module().register_parameter("p", lib.nn.Parameter(lib.ones(1)) * 2),
    lambda lib: lib.nn.Module()(1),
    lambda lib: lib.nn.Module().missing,
    lambda lib: lib.nn.Module().train("yes"),
])
def test_registration_errors_match_torch(bad):
    kind, message = error_of(lambda: bad(ember))
    torch_kind, torch_message = error_of(lambda: bad(torch))
    assert kind == torch_kind
    if "Buffer" not in torch_message and "FloatTensor" not in torch_message:
        assert message == torch_message


def _with_param(lib):
    m = lib.nn.Module()
    m.p = lib.nn.Parameter(lib.zeros(2))
    return m


def _with_child(lib):
    m = lib.nn.Module()
    m.c = lib.nn.Module()
    return m


def _with_buffer(lib):
    m = lib.nn.Module()
    m.register_buffer("b", lib.zeros(1))
    return m


def test_a_parameter_made_from_a_non_leaf_is_a_leaf_like_torch():
    def script(lib):
        m = lib.nn.Module()
        m.p = lib.nn.Parameter(lib.ones(1, requires_grad=True) * 2)
        return m.p.is_leaf, m.p.requires_grad, m.p.tolist()
    assert both(script)[0] == both(script)[1]


# --- modes, apply, conversions --------------------------------------------------------

def test_train_and_eval_propagate():
    ember_net, torch_net = nets()
    for net in (ember_net, torch_net):
        assert net.eval() is net
        net.body.train()
    assert [m.training for m in ember_net.modules()] == [m.training for m in torch_net.modules()]


def test_apply_visits_children_first_like_torch():
    ember_net, torch_net = nets()
    seen = {"ember": [], "torch": []}
    ember_net.apply(lambda m: seen["ember"].append(type(m).__name__))
    torch_net.apply(lambda m: seen["torch"].append(type(m).__name__))
    assert seen["ember"] == seen["torch"]


def test_to_dtype_converts_floating_tensors_only_and_keeps_parameter_objects():
    ember_net, torch_net = nets()
    before = list(ember_net.parameters())
    ember_net.stem.weight.grad = ember.ones(3, 4)
    for net, lib in ((ember_net, ember), (torch_net, torch)):
        assert net.to(lib.float64) is net
    assert list(ember_net.parameters()) == before
    assert isinstance(ember_net.stem.weight, ember.nn.Parameter)
    ember_dtypes = [str(t.dtype) for t in ember_net.state_dict().values()]
    torch_dtypes = [str(t.dtype).replace("torch", "ember") for t in torch_net.state_dict().values()]
    assert ember_dtypes == torch_dtypes
    assert ember_net.stem.weight.grad.dtype == ember.float64
    assert ember_net.stem.scratch.dtype == ember.float64  # non-persistent buffers move too


def test_float_double_half_and_to_tensor():
    ember_net, torch_net = nets()
    for method in ("double", "half", "float"):
        getattr(ember_net, method)()
        getattr(torch_net, method)()
        assert [str(t.dtype) for t in ember_net.state_dict().values()] == \
            [str(t.dtype).replace("torch", "ember") for t in torch_net.state_dict().values()]
    ember_net.to(ember.zeros(1, dtype=ember.float64))
    assert ember_net.stem.weight.dtype == ember.float64
    ember_net.to("cpu", ember.float32)
    assert ember_net.stem.weight.dtype == ember.float32 and ember_net.stem.weight.device.type == "cpu"
    assert ember_net.cpu() is ember_net


def test_to_integer_dtype_errors_like_torch():
    same_error(lambda lib: lib.nn.Module().to(lib.int64))


def test_requires_grad_and_zero_grad():
    ember_net, torch_net = nets()
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    for net, lib in ((ember_net, ember), (torch_net, torch)):
        net(lib.tensor(x)).sum().backward()
        net.zero_grad(set_to_none=False)
    assert [numpy_of(p.grad).tolist() for p in ember_net.parameters()] == \
        [numpy_of(p.grad).tolist() for p in torch_net.parameters()]
    ember_net.zero_grad()
    assert all(p.grad is None for p in ember_net.parameters())
    assert ember_net.requires_grad_(False) is ember_net
    assert not any(p.requires_grad for p in ember_net.parameters())


def test_forward_matches_torch_after_loading_its_state():
    ember_net, torch_net = nets()
    x = np.random.default_rng(2).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(numpy_of(ember_net(ember.tensor(x))), numpy_of(torch_net(torch.tensor(x))),
                               rtol=1e-5, atol=1e-6)


# --- state dicts ------------------------------------------------------------------------

def test_state_dict_keys_shapes_and_metadata_match_torch():
    ember_net, torch_net = nets()
    ours, theirs = ember_net.state_dict(), torch_net.state_dict()
    assert isinstance(ours, OrderedDict)
    assert list(ours) == list(theirs)
    assert [tuple(t.shape) for t in ours.values()] == [tuple(t.shape) for t in theirs.values()]
    assert ours._metadata == theirs._metadata
    assert not any(t.requires_grad for t in ours.values())
    assert all(isinstance(v, ember.nn.Parameter) for k, v in ember_net.state_dict(keep_vars=True).items()
               if k.endswith("weight"))
    assert list(ember_net.state_dict(prefix="net.")) == list(torch_net.state_dict(prefix="net."))


def test_state_dict_tensors_share_memory_with_the_parameters():
    ember_net, _ = nets()
    ember_net.state_dict()["stem.weight"].fill_(7.0)
    assert float(ember_net.stem.weight[0, 0]) == 7.0


def _broken_state(lib, net):
    state = net.state_dict()
    del state["stem.bias"]
    state["stem.extra"] = lib.zeros(1)
    state["body.9.weight"] = lib.zeros(1)
    return state


def test_load_state_dict_strict_error_matches_torch():
    ember_net, torch_net = nets()
    ours = error_of(lambda: ember_net.load_state_dict(_broken_state(ember, ember_net)))
    theirs = error_of(lambda: torch_net.load_state_dict(_broken_state(torch, torch_net)))
    assert ours == theirs


def test_load_state_dict_non_strict_returns_the_keys_like_torch():
    ember_net, torch_net = nets()
    ours = ember_net.load_state_dict(_broken_state(ember, ember_net), strict=False)
    theirs = torch_net.load_state_dict(_broken_state(torch, torch_net), strict=False)
    assert ours.missing_keys == theirs.missing_keys and ours.unexpected_keys == theirs.unexpected_keys
    assert repr(ours) == repr(theirs)
    assert repr(ember_net.load_state_dict(ember_net.state_dict())) == "<All keys matched successfully>"


def test_size_mismatch_error_matches_torch():
    def load(lib):
        net = define_classes(lib)[2]()
        state = net.state_dict()
        state["body.0.weight"] = lib.zeros(5, 3)
        state["stem.weight"] = 3.0
        net.load_state_dict(state)
    same_error(load)


def test_load_state_dict_copies_into_existing_tensors_and_assign_replaces_them():
    ember_net, torch_net = nets()
    layer = ember_net.body[0]
    weight = layer.weight
    state = to_ember_state(torch_net.state_dict())
    ember_net.load_state_dict(state)
    assert layer.weight is weight
    assert not np.shares_memory(weight.detach().numpy(), state["body.0.weight"].numpy())
    ember_net.load_state_dict(state, assign=True)
    assert layer.weight is not weight
    assert isinstance(layer.weight, ember.nn.Parameter) and layer.weight.requires_grad
    assert np.shares_memory(layer.weight.detach().numpy(), state["body.0.weight"].numpy())
    assert layer.steps is state["body.0.steps"]


def test_load_state_dict_rejects_non_mappings():
    same_error(lambda lib: lib.nn.Module().load_state_dict([1, 2]))


def test_load_from_state_dict_is_the_hook_point_for_old_checkpoints():
    def script(lib):
        class Renamed(lib.nn.Module):
            _version = 2

            def __init__(self):
                super().__init__()
                self.scale = lib.nn.Parameter(lib.zeros(2))

            def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, *args):
                if local_metadata.get("version", 1) < 2 and prefix + "gamma" in state_dict:
                    state_dict[prefix + "scale"] = state_dict.pop(prefix + "gamma")
                super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, *args)

        outer = lib.nn.Sequential(Renamed())
        old = OrderedDict([("0.gamma", lib.tensor([1.0, 2.0]))])
        old._metadata = {"": {"version": 1}, "0": {"version": 1}}
        result = outer.load_state_dict(old)
        return outer[0].scale.tolist(), outer.state_dict()._metadata["0"], repr(result)
    assert both(script)[0] == both(script)[1]


def test_extra_state_round_trips():
    class WithExtra(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.note = "a"

        def get_extra_state(self):
            return {"note": self.note}

        def set_extra_state(self, state):
            self.note = state["note"]

    m = WithExtra()
    m.note = "b"
    state = m.state_dict()
    assert list(state) == ["_extra_state"]
    fresh = WithExtra()
    fresh.load_state_dict(state)
    assert fresh.note == "b"


def test_load_state_dict_pre_hook_sees_the_prefix():
    calls = []
    net = ember.nn.Sequential(ember.nn.Module())
    handle = net[0].register_load_state_dict_pre_hook(lambda module, sd, prefix, *rest: calls.append(prefix))
    net.load_state_dict({})
    handle.remove()
    net.load_state_dict({})
    assert calls == ["0."]


# --- lookups, dir, repr, pickling -------------------------------------------------------

@pytest.mark.parametrize("lookup", [
    lambda m: m.get_submodule("body.2.0"),
    lambda m: m.get_submodule(""),
    lambda m: m.get_parameter("body.0.weight"),
    lambda m: m.get_buffer("stem.steps"),
])
def test_get_submodule_parameter_buffer(lookup):
    ember_net, torch_net = nets()
    found, expected = lookup(ember_net), lookup(torch_net)
    assert type(found).__name__ == type(expected).__name__
    if isinstance(expected, torch.Tensor):
        np.testing.assert_array_equal(numpy_of(found), numpy_of(expected))


@pytest.mark.parametrize("lookup", [
    lambda m: m.get_submodule("body.7"),
    lambda m: m.get_submodule("stem.weight"),
    lambda m: m.get_parameter("stem.steps"),
    lambda m: m.get_parameter("stem.nothing"),
    lambda m: m.get_buffer("stem.weight"),
])
def test_lookup_errors_match_torch(lookup):
    same_error(lambda lib: lookup(define_classes(lib)[2]()))


def test_dir_lists_parameters_buffers_and_children():
    ember_net, torch_net = nets()
    ours = set(dir(ember_net))
    assert {"stem", "body", "heads", "tied", "scale", "forward", "state_dict"} <= ours
    assert {"weight", "bias", "steps", "scratch"} <= set(dir(ember_net.stem))
    assert "0" not in dir(ember_net.body)
    torch_specific = {n for n in dir(torch_net) if not n.startswith("_")} - {n for n in ours if not n.startswith("_")}
    # ember leaves out some compatibility API, but every user-defined name is there
    assert not ({"stem", "body", "heads", "tied", "scale", "extra"} & torch_specific)


def test_repr_matches_torch():
    ember_net, torch_net = nets()
    assert repr(ember_net) == repr(torch_net).replace("torch", "ember")


def test_repr_of_a_module_with_none_child_and_multiline_extra_repr():
    def script(lib):
        class Multi(lib.nn.Module):
            def extra_repr(self):
                return "first line\nsecond line"
        m = lib.nn.Module()
        m.add_module("empty", None)
        m.add_module("multi", Multi())
        m.add_module("one", define_classes(lib)[0](2, 1))
        return repr(m), repr(Multi())
    assert both(script)[0] == both(script)[1]


def test_missing_forward_errors_like_torch():
    same_error(lambda lib: lib.nn.Module()(lib.zeros(1)))


def test_deepcopy_keeps_ties_values_and_gradients():
    ember_net, _ = nets()
    ember_net.stem.weight.grad = ember.ones(3, 4)
    clone = copy.deepcopy(ember_net)
    assert clone.tied is clone.stem and clone.stem is not ember_net.stem
    assert clone.stem.weight.grad.tolist() == ember_net.stem.weight.grad.tolist()
    assert list(clone.state_dict()) == list(ember_net.state_dict())
    x = ember.randn(2, 4)
    assert clone(x).tolist() == ember_net(x).tolist()
    clone.stem.weight.data.fill_(0.0)
    assert float(ember_net.stem.weight.abs().sum()) > 0


def test_pickle_round_trip():
    ember_net = Net()  # a class pickle can import
    ember_net.load_state_dict(nets()[0].state_dict())
    clone = pickle.loads(pickle.dumps(ember_net))
    x = ember.randn(2, 4)
    assert clone(x).tolist() == ember_net(x).tolist()
    assert clone.tied is clone.stem
    assert isinstance(clone.stem.weight, ember.nn.Parameter)
    assert "scratch" in clone.stem._non_persistent_buffers_set


def test_setstate_fills_in_missing_hook_dicts():
    m = ember.nn.Module()
    state = dict(m.__dict__)
    del state["_forward_hooks_always_called"]
    fresh = ember.nn.Module.__new__(ember.nn.Module)
    fresh.__setstate__(state)
    assert fresh._forward_hooks_always_called == set()
