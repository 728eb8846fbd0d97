"""ember-loss: the loss functions of ``ember.nn`` as a plugin.

PyTorch counterpart: torch/nn/modules/loss.py and the loss functions of
torch/nn/functional.py (v2.13).

ember imports this module when it first needs a catalogue and calls the hooks below;
they import the loss modules only then, so ``ember plugins`` stays fast.
"""

from ember.plugins import hookimpl

__version__ = "0.1.0"


@hookimpl
def ember_register_ops(register):
    from ember_loss import binary, cross_entropy, ctc, kl_div, likelihood, nll, regression

    for op in (cross_entropy.cross_entropy_op, cross_entropy.cross_entropy_backward_op,
               cross_entropy.coefficients_op, nll.nll_loss_op, nll.nll_coefficients_op, nll.nll_backward_op,
               regression.MSE_LOSS,
               binary.BINARY_CROSS_ENTROPY, binary.BINARY_CROSS_ENTROPY_WITH_LOGITS,
               kl_div.XLOGX, likelihood.clamp_min_pass_through, ctc.ctc_loss_op, ctc.ctc_backward_op):
        register(op)


@hookimpl
def ember_register_functionals(register):
    from ember_loss.functional import FUNCTIONALS

    for fn in FUNCTIONALS:
        register(fn)


@hookimpl
def ember_register_modules(register):
    from ember_loss.modules import MODULES, OPTIONS

    for cls in MODULES + OPTIONS:
        register(cls)
