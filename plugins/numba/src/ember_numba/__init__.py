"""ember-numba: compiled CPU kernels for ember-norm's LayerNorm, GroupNorm and BatchNorm
ops (InstanceNorm runs on the batch-norm ones), ember-activation's SiLU forward and backward,
ember-optim's fused SGD, Adam/AdamW, RMSprop and Adagrad updates, the core's
log_softmax and ember-loss's nll_loss and cross_entropy (with their backwards), the
transforms of ember's Winograd convolutions (ember_numba/winograd.py), the core's
values-only max pooling on channels_last maps (ember_numba/max_pool.py), the im2col
and col2im of its NCHW convolutions (ember_numba/im2col.py) and the window rows and
col2im of its channels_last ones (ember_numba/nhwc_im2col.py), the direct 3x3
convolution of its NCHW float32 images (ember_numba/direct_conv.py), and the core's
pdist (ember_numba/pdist.py), cummax/cummin (ember_numba/cumulative_extreme.py) and grid
sampling's row picks (ember_numba/grid_sampler_rows.py), gather and scatter_add
(ember_numba/scatter_gather.py) and index_reduce (ember_numba/index_reduce.py).

PyTorch counterpart: aten/src/ATen/native/DispatchStub.h (``REGISTER_DISPATCH``: a
compiled CPU kernel registered for an op's cpu entry) (v2.13).

The plugin registers no ops: its ``ember_register_kernels`` hook registers cpu kernels
for ops the core, ember-norm, ember-activation, ember-optim and ember-loss define, by
their names (``"norm::layer_norm"``), and imports none of those plugins: the registry
puts each kernel on its op once every plugin has registered its ops, whichever loads
first, and hands a kernel the one it replaces (``fallback``) for the inputs its loops do
not take (NOTE [ Kernels for another plugin's ops ] in ember/plugins/manager.py). A
missing op (its plugin not installed, or renamed) is skipped with a warning and listed
by ``ember plugins``. The core's own ops (log_softmax, max pooling) and dispatch stubs
(im2col, the Winograd transforms) are served the same way; their kernels import the
core's NumPy code, which a plugin may.
``EMBER_DISABLE_PLUGINS=ember-numba`` (or ``numba``) keeps their NumPy kernels.
The loops are compiled when the plugin is installed, into ember_numba._compiled
(ember_numba/ahead_of_time.py); numba itself is imported only for a call whose argument
types that build did not compile (ember_numba/jit.py).
"""

from ember.plugins import hookimpl

__version__ = "0.1.0"


def overrides():
    """``[(op name, cpu kernel, with_fallback)]``: every op this plugin serves on the cpu.
    Kernels for other plugins' ops take the kernel they replace first (``with_fallback``);
    those for the core's ops call the core's NumPy code themselves."""
    from ember_numba import (
        batch_norm,
        cross_entropy,
        cumulative_extreme,
        direct_conv,
        fused_adagrad,
        fused_adam,
        fused_rmsprop,
        fused_sgd,
        grid_sampler_rows,
        group_norm,
        im2col,
        index_reduce,
        layer_norm,
        log_softmax,
        max_pool,
        nhwc_im2col,
        nll_loss,
        pdist,
        scatter_gather,
        silu,
        winograd,
    )

    others = (batch_norm, layer_norm, group_norm, silu, fused_sgd, fused_adam, fused_rmsprop, fused_adagrad, nll_loss,
              cross_entropy)
    core = (log_softmax, max_pool, im2col, nhwc_im2col, winograd, pdist, cumulative_extreme,
            grid_sampler_rows, scatter_gather, index_reduce, direct_conv)
    return ([(name, kernel, True) for module in others for name, kernel in module.overrides()]
            + [(op.qualname, kernel, False) for module in core for op, kernel in module.overrides()])


@hookimpl
def ember_register_kernels(register):
    for name, kernel, with_fallback in overrides():
        register(kernel, name=name, device="cpu", with_fallback=with_fallback)
