"""Which first-party distribution provides each module class and functional name.

PyTorch counterpart: none (every layer ships inside torch); this table is how
``ember.nn.BatchNorm2d`` can say "pip install ember-norm" when the plugin is missing.
Plugin authors: add the names your first-party distribution registers here.
"""

NORM = "ember-norm"
ACTIVATION = "ember-activation"
LOSS = "ember-loss"

_NORM_MODULES = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm",
                 "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "LocalResponseNorm")
_NORM_FUNCTIONALS = ("batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
                     "local_response_norm")

_ACTIVATION_MODULES = ("ReLU", "ReLU6", "LeakyReLU", "PReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish",
                       "Hardswish", "Hardsigmoid", "Hardtanh", "Sigmoid", "Tanh", "Softplus", "Softsign",
                       "Tanhshrink", "Threshold", "GLU", "Softmax", "LogSoftmax", "Softmin", "Hardshrink",
                       "Softshrink", "LogSigmoid", "Softmax2d")
_ACTIVATION_FUNCTIONALS = ("relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "elu", "elu_",
                           "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish", "hardswish",
                           "hardsigmoid", "hardtanh", "hardtanh_", "sigmoid", "tanh", "softplus", "softsign",
                           "tanhshrink", "threshold", "threshold_", "glu", "softmax", "log_softmax", "softmin",
                           "hardshrink", "softshrink", "logsigmoid")

_LOSS_MODULES = ("L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
                 "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
                 "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "DistillationLoss")
_LOSS_FUNCTIONALS = ("l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
                     "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
                     "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss",
                     "poisson_nll_loss", "gaussian_nll_loss", "distillation_loss")


def _table(*groups):
    table = {}
    for names, distribution in groups:
        for name in names:
            table[name] = distribution
    return table


# catalogue name -> {registered name: distribution that provides it}
PROVIDED_BY = {
    "modules": _table((_NORM_MODULES, NORM), (_ACTIVATION_MODULES, ACTIVATION), (_LOSS_MODULES, LOSS)),
    "functionals": _table((_NORM_FUNCTIONALS, NORM), (_ACTIVATION_FUNCTIONALS, ACTIVATION),
                          (_LOSS_FUNCTIONALS, LOSS)),
}
