"""ember-activation: the activation functions as fused ops, functional forms and modules.

PyTorch counterpart: the activations of torch/nn/modules/activation.py,
torch/nn/functional.py and aten/src/ATen/native/Activation.cpp (v2.13).

ember imports this module when it first needs a catalogue and calls the hooks below.
Nothing heavy is imported at top level: each hook imports its modules when called.
After installing, ``ember.nn.GELU`` and ``ember.nn.functional.gelu`` resolve here, as
do ``ember_activation.modules.GELU`` and ``ember_activation.functional.gelu``.
"""

from ember.plugins import hookimpl

__version__ = "0.1.0"


@hookimpl
def ember_register_ops(register):
    from ember_activation.functional import ops

    for op in ops():
        register(op)


@hookimpl
def ember_register_functionals(register):
    from ember_activation.functional import functionals

    for fn in functionals():
        register(fn)


@hookimpl
def ember_register_modules(register):
    from ember_activation.modules import module_classes

    for cls in module_classes():
        register(cls)
