"""The functional forms of every loss, in one namespace: ``ember_loss.functional.cross_entropy``.

PyTorch counterpart: the loss functions of torch/nn/functional.py (v2.13). The plugin
registers each of these through ``ember_register_functionals``, so they are also
``ember.nn.functional.<name>``.
"""

from ember_loss.binary import binary_cross_entropy, binary_cross_entropy_with_logits
from ember_loss.cross_entropy import cross_entropy
from ember_loss.ctc import ctc_loss
from ember_loss.distillation import distillation_loss
from ember_loss.embedding_losses import cosine_embedding_loss, margin_ranking_loss, triplet_margin_loss
from ember_loss.kl_div import kl_div
from ember_loss.likelihood import gaussian_nll_loss, poisson_nll_loss
from ember_loss.linear_cross_entropy import linear_cross_entropy
from ember_loss.margin import (
    hinge_embedding_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_with_distance_loss,
)
from ember_loss.nll import nll_loss
from ember_loss.regression import huber_loss, l1_loss, mse_loss, smooth_l1_loss

FUNCTIONALS = (l1_loss, mse_loss, smooth_l1_loss, huber_loss, cross_entropy, nll_loss, binary_cross_entropy,
               binary_cross_entropy_with_logits, kl_div, cosine_embedding_loss, margin_ranking_loss,
               triplet_margin_loss, poisson_nll_loss, gaussian_nll_loss, distillation_loss, soft_margin_loss,
               hinge_embedding_loss, multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss,
               triplet_margin_with_distance_loss, ctc_loss, linear_cross_entropy)

__all__ = [fn.__name__ for fn in FUNCTIONALS]
