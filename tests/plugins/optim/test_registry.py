"""``ember.optim``, ``ember.optim.lr_scheduler`` and ``ember.optim.swa_utils`` resolve names
through the "optimizers" catalogue (core/src/ember/optim/, ember_optim/__init__.py):
first-party names, ``create``, third-party registrations by kind, and the errors when
ember-optim is missing or disabled."""

import types

import pytest
from plugin_helpers import run_ember

import ember
import ember_optim
from ember.plugins import hookimpl, registry
from ember.plugins.forwarding import PROVIDED_BY as _PROVIDED_BY
from ember_optim import lr_scheduler, swa_utils

PROVIDED_BY = {kind: _PROVIDED_BY[kind] for kind in ("optimizer", "lr_scheduler", "swa_utils")}

NAMESPACES = {"optimizer": ember.optim, "lr_scheduler": ember.optim.lr_scheduler,
              "swa_utils": ember.optim.swa_utils}
SOURCES = {"optimizer": ember_optim, "lr_scheduler": lr_scheduler, "swa_utils": swa_utils}


@pytest.mark.parametrize("kind", list(NAMESPACES))
def test_every_first_party_name_resolves_to_the_plugins_object(kind):
    for name in PROVIDED_BY[kind]:
        assert getattr(NAMESPACES[kind], name) is getattr(SOURCES[kind], name), name
    assert set(PROVIDED_BY[kind]) <= set(dir(NAMESPACES[kind]))


def test_the_table_lists_exactly_what_ember_optim_registers():
    registered = {}
    for name, entry in registry.catalogue("optimizers").items():
        if entry.plugin == "optim":
            registered.setdefault(entry.extra["kind"], set()).add(name)
    assert registered == {kind: set(names) for kind, names in PROVIDED_BY.items()}


def test_each_namespace_resolves_only_its_own_kind():
    with pytest.raises(AttributeError, match="module 'ember.optim' has no attribute 'StepLR'$"):
        ember.optim.StepLR
    with pytest.raises(AttributeError, match="has no attribute 'SGD'$"):
        ember.optim.lr_scheduler.SGD
    with pytest.raises(AttributeError, match="has no attribute 'OneCycleLR'$"):
        ember.optim.swa_utils.OneCycleLR
    with pytest.raises(AttributeError, match="has no attribute 'Lion'$"):
        ember.optim.Lion
    with pytest.raises(AttributeError):
        ember.optim.__wrapped__


def test_create_by_name():
    params = [ember.zeros(3, requires_grad=True)]
    optimizer = ember.optim.create("AdamW", params, lr=0.01, weight_decay=0.1)
    assert type(optimizer) is ember_optim.AdamW and optimizer.defaults["lr"] == 0.01
    scheduler = ember.optim.lr_scheduler.create("StepLR", optimizer, step_size=5, gamma=0.5)
    assert type(scheduler) is lr_scheduler.StepLR and scheduler.step_size == 5
    with pytest.raises(KeyError, match="Lion"):
        ember.optim.create("Lion", params)
    with pytest.raises(KeyError, match="StepLR"):
        ember.optim.create("StepLR", params)


class Lion(ember_optim.Optimizer):
    """A stand-in third-party optimizer: sign of the gradient."""

    def __init__(self, params, lr=1e-4):
        super().__init__(params, dict(lr=lr))

    @ember_optim.optimizer.optimizer_step
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad.sign(), alpha=-group["lr"])


class HalvingLR(lr_scheduler.LRScheduler):
    def get_lr(self):
        return [group["lr"] * (0.5 if self.last_epoch else 1.0) for group in self.optimizer.param_groups]


def test_a_third_party_plugin_registers_by_kind():
    def ember_register_optimizers(register):
        register(Lion)
        register(HalvingLR, kind="lr_scheduler")

    plugin = types.ModuleType("my_optimizers")
    plugin.ember_register_optimizers = hookimpl(ember_register_optimizers)
    name = ember.plugins.register(plugin)
    try:
        assert ember.optim.Lion is Lion and ember.optim.lr_scheduler.HalvingLR is HalvingLR
        p = ember.tensor([1.0, -1.0], requires_grad=True)
        optimizer = ember.optim.create("Lion", [p], lr=0.5)
        scheduler = ember.optim.lr_scheduler.create("HalvingLR", optimizer)
        p.grad = ember.tensor([3.0, -2.0])
        optimizer.step()
        scheduler.step()
        assert p.tolist() == [0.5, -0.5] and scheduler.get_last_lr() == [0.25]
        with pytest.raises(AttributeError):
            ember.optim.HalvingLR
    finally:
        ember.plugins.unregister(name=name)
    with pytest.raises(AttributeError):
        ember.optim.Lion


def test_a_name_clash_with_ember_optim_is_an_error():
    plugin = types.ModuleType("clashing_optimizers")
    plugin.ember_register_optimizers = hookimpl(lambda register: register(Lion, name="SGD"))
    with pytest.raises(ember.plugins.PluginError, match="'SGD' is registered by both plugin 'optim'"):
        ember.plugins.register(plugin)
    assert ember.optim.SGD is ember_optim.SGD


PROBE = """
    import json, warnings
    warnings.simplefilter("ignore")
    import ember
    out = {}
    for space, name in [("optim", "AdamW"), ("lr_scheduler", "OneCycleLR"), ("swa_utils", "AveragedModel"),
                        ("optim", "Lion")]:
        namespace = {"optim": ember.optim, "lr_scheduler": ember.optim.lr_scheduler,
                     "swa_utils": ember.optim.swa_utils}[space]
        try:
            getattr(namespace, name)
            out[name] = "found"
        except AttributeError as exc:
            out[name] = str(exc)
    try:
        ember.optim.create("SGD", [])  # the lookup fails before the optimizer is built
    except KeyError as exc:
        out["create"] = str(exc)
    print(json.dumps(out))
"""


def test_without_ember_optim_the_error_says_what_to_install():
    found = run_ember(PROBE, EMBER_PLUGINS_AUTOLOAD="0")
    from ember.plugins.manager import install_hint

    assert found["AdamW"] == ("module 'ember.optim' has no attribute 'AdamW': 'AdamW' is provided by the distribution "
                              f"ember-optim, which is not installed. Install it with: {install_hint('ember-optim')}")
    assert found["OneCycleLR"].startswith("module 'ember.optim.lr_scheduler' has no attribute 'OneCycleLR': ")
    assert found["AveragedModel"].endswith("/plugins/optim' (ember-optim)")
    assert found["Lion"] == "module 'ember.optim' has no attribute 'Lion'"
    assert install_hint("ember-optim") in found["create"]


def test_a_disabled_ember_optim_is_named():
    found = run_ember(PROBE, EMBER_DISABLE_PLUGINS="optim")
    assert found["AdamW"].endswith("'AdamW' is provided by the plugin 'optim' (distribution ember-optim), "
                                   "which is disabled")


def test_the_hook_module_imports_nothing_heavy():
    found = run_ember("""
        import json, sys
        import ember_optim
        heavy = [m for m in sys.modules if m.startswith("ember_optim.")]
        print(json.dumps({"heavy": heavy, "torch": "torch" in sys.modules}))
    """)
    assert found == {"heavy": [], "torch": False}
