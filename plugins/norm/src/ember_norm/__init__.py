"""ember-norm: the normalization layers of ember as a plugin.

PyTorch counterpart: torch/nn/modules/batchnorm.py, instancenorm.py and
normalization.py, the normalization part of torch/nn/functional.py (v2.13).

ember imports this module when it first needs a catalogue and calls the hooks below.
Nothing heavy is imported at top level: the op, functional and module files are
imported inside the hooks.
"""

from ember.plugins import hookimpl

__version__ = "0.1.0"


@hookimpl
def ember_register_ops(register):
    from ember_norm.ops import batch_norm, group_norm, layer_norm, rms_norm

    for op in (batch_norm.batch_norm_stats, batch_norm.batch_norm, batch_norm.batch_norm_backward,
               layer_norm.layer_norm_stats, layer_norm.layer_norm, layer_norm.layer_norm_backward,
               group_norm.group_norm, group_norm.group_norm_backward, rms_norm.rms_norm,
               rms_norm.rms_norm_backward):
        register(op)


@hookimpl
def ember_register_functionals(register):
    from ember_norm import functional

    for name in functional.__all__:
        register(getattr(functional, name))


@hookimpl
def ember_register_modules(register):
    from ember_norm import batchnorm, groupnorm, instancenorm, layernorm, lrn, rmsnorm, syncbatchnorm

    for module in (batchnorm, instancenorm, layernorm, groupnorm, rmsnorm, lrn, syncbatchnorm):
        for name in module.__all__:
            register(getattr(module, name))
