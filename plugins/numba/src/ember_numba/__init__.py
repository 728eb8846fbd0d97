"""ember-numba: compiled CPU kernels for ember-norm's LayerNorm, GroupNorm and BatchNorm
ops (InstanceNorm runs on the batch-norm ones), ember-activation's SiLU forward and backward,
ember-optim's fused SGD, Adam/AdamW, RMSprop and Adagrad updates, the core's
log_softmax and ember-loss's nll_loss and cross_entropy (with their backwards), the
transforms of ember's Winograd convolutions (ember_numba/winograd.py), the core's
values-only max pooling on channels_last maps (ember_numba/max_pool.py), the im2col
and col2im of its NCHW convolutions (ember_numba/im2col.py) and the window rows and
col2im of its channels_last ones (ember_numba/nhwc_im2col.py).

PyTorch counterpart: aten/src/ATen/native/DispatchStub.h (``REGISTER_DISPATCH``: a
compiled CPU kernel registered for an op's cpu entry) (v2.13).

The plugin registers no new names: its ``ember_register_ops`` hook registers kernels
for the cpu device on the core's, ember-norm's, ember-activation's, ember-optim's and
ember-loss's ops (``Op.register_kernel``), which the dispatcher resolves once per
device and caches, as it does every kernel. The op objects are module-level in those
plugins, so the override holds whichever plugin loads first.
``EMBER_DISABLE_PLUGINS=ember-numba`` (or ``numba``) keeps their NumPy kernels.
The loops are compiled when the plugin is installed, into ember_numba._compiled
(ember_numba/ahead_of_time.py); numba itself is imported only for a call whose argument
types that build did not compile (ember_numba/jit.py).
"""

from ember.plugins import hookimpl

__version__ = "0.1.0"


def overrides():
    """``[(op, cpu kernel)]``: every op of the core's, ember-norm's, ember-activation's,
    ember-optim's and ember-loss's this plugin serves on the cpu, each module's own."""
    from ember.native.pooling.pooling import MAX_POOL2D_VALUES
    from ember_activation.sigmoid_family import SILU, SILU_BACKWARD
    from ember_norm.ops import batch_norm as norm_batch_norm
    from ember_norm.ops import group_norm as norm_group_norm
    from ember_norm.ops import layer_norm as norm_layer_norm
    from ember_numba import (
        batch_norm,
        cross_entropy,
        fused_adagrad,
        fused_adam,
        fused_rmsprop,
        fused_sgd,
        group_norm,
        im2col,
        layer_norm,
        log_softmax,
        max_pool,
        nhwc_im2col,
        nll_loss,
        silu,
        winograd,
    )

    norms = [
        (norm_batch_norm.batch_norm_stats, batch_norm.batch_norm_stats),
        (norm_batch_norm.batch_norm, batch_norm.batch_norm),
        (norm_batch_norm.batch_norm_backward, batch_norm.batch_norm_backward),
        (norm_layer_norm.layer_norm_stats, layer_norm.layer_norm_stats),
        (norm_layer_norm.layer_norm, layer_norm.layer_norm),
        (norm_layer_norm.layer_norm_backward, layer_norm.layer_norm_backward),
        (norm_group_norm.group_norm, group_norm.group_norm),
        (norm_group_norm.group_norm_backward, group_norm.group_norm_backward),
    ]
    modules = (fused_sgd, fused_adam, fused_rmsprop, fused_adagrad, log_softmax, nll_loss, cross_entropy, im2col,
               nhwc_im2col, winograd)
    activations = [(SILU, silu.silu), (SILU_BACKWARD, silu.silu_backward)]
    return norms + activations + [(MAX_POOL2D_VALUES, max_pool.max_pool2d)] + [
        pair for module in modules for pair in module.overrides()]


@hookimpl
def ember_register_ops(register):
    for op, kernel in overrides():
        op.register_kernel("cpu", kernel)
