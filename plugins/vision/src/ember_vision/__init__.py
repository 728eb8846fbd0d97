"""ember-vision: torchvision's operators (``torchvision.ops``) as an ember plugin.

PyTorch counterpart: torchvision/__init__.py and torchvision/extension.py (torchvision
0.28), which load the compiled operator library and register its ops as
``torchvision::<name>``.

ember imports this module when it first needs a catalogue and calls the hooks below;
they import the operator modules only then, so ``ember plugins`` stays fast.
"""

from ember.plugins import hookimpl

__version__ = "0.1.0"


@hookimpl
def ember_register_ops(register):
    from ember_vision.ops import OPS

    for op in OPS:
        register(op)
