"""The hooks a plugin may implement: one ``ember_register_*`` hook per catalogue.

PyTorch counterpart: none in one file; the catalogues mirror torch.library (ops),
torch/utils/backend_registration.py (devices), and the registries of torchvision's
models/_api.py (models). The shape follows simonw/llm's hookspecs.py.

Each hook receives ``register``, a callback bound to the calling plugin,
``register(obj, name=None, **extra)`` (``ember_register_kernels``'s takes the op's name
and a device: ``register(kernel, name, device, with_fallback=False)``), so the core knows
which plugin registered what and can name both plugins on a clash. docs/plugins/hooks.md documents every hook; a
test keeps the two in step.
"""

import pluggy

hookspec = pluggy.HookspecMarker("ember")


@hookspec
def ember_register_backends(register):
    """Register device backends: ``register(ember.device.Backend(...))``."""


@hookspec
def ember_register_ops(register):
    """Register operators: ``register(op)`` for an ``ember.library`` op."""


@hookspec
def ember_register_kernels(register):
    """Register kernels for ops any plugin defines, by name: ``register(kernel, name="ns::op", device="cpu")``."""


@hookspec
def ember_register_modules(register):
    """Register nn.Module classes: ``register(cls, name=None)``, reachable as ``ember.nn.<Name>``."""


@hookspec
def ember_register_functionals(register):
    """Register functional forms: ``register(fn, name=None)``, reachable as ``ember.nn.functional.<name>``."""


@hookspec
def ember_register_optimizers(register):
    """Register optimizers and lr schedulers: ``register(cls, name=None)``."""


@hookspec
def ember_register_data(register):
    """Register datasets, samplers and transforms: ``register(obj, name=None)``."""


@hookspec
def ember_register_models(register):
    """Register zoo models: ``register(builder, name="resnet18", **info)``."""


@hookspec
def ember_register_comm_backends(register):
    """Register communication backends: ``register(factory, name="mpi", devices=("cpu",))``."""


@hookspec
def ember_register_tensor_types(register):
    """Register the tensor types checkpoints hold: ``register(rebuild, name="quantized")``."""


@hookspec
def ember_register_metrics(register):
    """Register metric classes: ``register(cls, name=None, short=None, options=None)``; ``ember.metrics.<Name>``."""


# Catalogue name for each hook: the key under which registrations are stored.
CATALOGUES = {
    "ember_register_backends": "backends",
    "ember_register_ops": "ops",
    "ember_register_kernels": "kernels",
    "ember_register_modules": "modules",
    "ember_register_functionals": "functionals",
    "ember_register_optimizers": "optimizers",
    "ember_register_data": "data",
    "ember_register_models": "models",
    "ember_register_comm_backends": "comm_backends",
    "ember_register_tensor_types": "tensor_types",
    "ember_register_metrics": "metrics",
}
