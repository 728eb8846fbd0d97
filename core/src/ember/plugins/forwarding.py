"""The namespaces that forward to plugins, in one table: what each module path reads,
which first-party distribution provides each name, and the module-level
``__getattr__``/``__dir__`` every forwarding module is built from.

PyTorch counterpart: none; torch's namespaces import everything eagerly (torch.nn,
torch.optim, torch.utils.data hold their code). See NOTE [ Forwarding modules ].
"""

import importlib
import sys

# NOTE [ Forwarding modules ]
# ember.nn.BatchNorm2d, ember.optim.AdamW, ember.data.DataLoader and PyTorch's module
# paths under them (ember.nn.modules.batchnorm, ember.optim.lr_scheduler,
# ember.utils.data.sampler) name objects the core does not define: plugins register
# them (ember_register_modules, ..._optimizers, ..._data). Each such module is a file,
# so that `import` and `from ... import` find it, whose forwarding is one line,
# `__getattr__, __dir__ = forwarder(__name__)`; what it reads is its row in FORWARDERS:
#   Catalogue: a name registered in a catalogue (of one kind, for the optimizers);
#   Registered: an attribute of a module a plugin registered (ember.data.transforms);
#   Imported: an attribute of a plugin's module imported by path (ember_data.sampler);
#   Alias: every attribute of another namespace (ember.utils.data is ember.data).
# A first-party name that nobody registered raises Python's AttributeError naming the
# distribution to install, or why it is broken (PROVIDED_BY, ember/plugins/lookup.py).

# -- which first-party distribution provides each name --------------------------------
NORM = "ember-norm"
ACTIVATION = "ember-activation"
LOSS = "ember-loss"
OPTIM = "ember-optim"
DATA = "ember-data"
QUANTIZATION = "ember-quantization"
METRICS = "ember-metrics"

_NORM_MODULES = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm",
                 "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "LocalResponseNorm")
_NORM_FUNCTIONALS = ("batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
                     "local_response_norm")

_ACTIVATION_MODULES = ("ReLU", "ReLU6", "LeakyReLU", "PReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish",
                       "Hardswish", "Hardsigmoid", "Hardtanh", "Sigmoid", "Tanh", "Softplus", "Softsign",
                       "Tanhshrink", "Threshold", "GLU", "Softmax", "LogSoftmax", "Softmin", "Hardshrink",
                       "Softshrink", "LogSigmoid", "Softmax2d", "RReLU")
_ACTIVATION_FUNCTIONALS = ("relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "elu", "elu_",
                           "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish", "hardswish",
                           "hardsigmoid", "hardtanh", "hardtanh_", "sigmoid", "tanh", "softplus", "softsign",
                           "tanhshrink", "threshold", "threshold_", "glu", "softmax", "log_softmax", "softmin",
                           "hardshrink", "softshrink", "logsigmoid", "rrelu", "rrelu_", "gumbel_softmax")

_LOSS_MODULES = ("L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
                 "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
                 "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "DistillationLoss", "SoftMarginLoss",
                 "HingeEmbeddingLoss", "MultiMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
                 "TripletMarginWithDistanceLoss", "CTCLoss", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions")
_LOSS_FUNCTIONALS = ("l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
                     "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
                     "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss",
                     "poisson_nll_loss", "gaussian_nll_loss", "distillation_loss", "soft_margin_loss",
                     "hinge_embedding_loss", "multi_margin_loss", "multilabel_margin_loss",
                     "multilabel_soft_margin_loss", "triplet_margin_with_distance_loss", "ctc_loss",
                     "linear_cross_entropy")


_OPTIMIZERS = ("Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
               "LBFGS", "SparseAdam")
_LR_SCHEDULERS = ("LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
                  "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
                  "OneCycleLR", "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler")
_SWA_UTILS = ("AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
              "get_ema_avg_fn", "get_swa_avg_fn")

_DATA = ("Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
         "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
         "WeightedRandomSampler", "BatchSampler", "DistributedSampler", "DataLoader", "default_collate",
         "default_convert", "get_worker_info", "WorkerInfo", "DatasetFolder", "ImageFolder", "read_idx",
         "load_dataset", "list_datasets", "transforms", "datasets")

_METRICS = ("Metric", "MetricCollection", "Accuracy", "Precision", "Recall", "F1Score", "FBetaScore", "StatScores",
            "ConfusionMatrix", "AUROC", "AveragePrecision", "MeanSquaredError", "MeanAbsoluteError",
            "MeanAveragePrecision")


def _table(*groups):
    table = {}
    for names, distribution in groups:
        for name in names:
            table[name] = distribution
    return table


# what a namespace resolves (a catalogue, or a kind of optimizer) -> {name: distribution}
PROVIDED_BY = {
    "modules": _table((_NORM_MODULES, NORM), (_ACTIVATION_MODULES, ACTIVATION), (_LOSS_MODULES, LOSS)),
    "functionals": _table((_NORM_FUNCTIONALS, NORM), (_ACTIVATION_FUNCTIONALS, ACTIVATION),
                          (_LOSS_FUNCTIONALS, LOSS)),
    "optimizer": _table((_OPTIMIZERS, OPTIM)),
    "lr_scheduler": _table((_LR_SCHEDULERS, OPTIM)),
    "swa_utils": _table((_SWA_UTILS, OPTIM)),
    "data": _table((_DATA, DATA)),
    "metrics": _table((_METRICS, METRICS)),
}


# -- what each forwarding module reads --------------------------------------------------
class Catalogue:
    """Names registered in ``catalogue``; for "optimizers", only those of ``kind``.
    ``submodules`` are forwarding modules of their own, imported by attribute access;
    ``remember`` writes a found name into the namespace (NOTE [ Remembered lookups ])."""

    def __init__(self, catalogue, kind=None, submodules=(), remember=False):
        self.catalogue = catalogue
        self.kind = kind
        self.submodules = submodules
        self.remember = remember

    def get(self, namespace, name):
        from ember.plugins import lookup

        if name in self.submodules:
            return importlib.import_module(f"{namespace}.{name}")
        accept = None if self.kind is None else (lambda entry: _kind_of(entry) == self.kind)
        obj = lookup.lookup(self.catalogue, name, namespace, PROVIDED_BY[self.kind or self.catalogue], accept)
        return lookup.remember(namespace, name, obj) if self.remember else obj

    def names(self):
        from ember.plugins import registry

        entries = registry.catalogue(self.catalogue)
        return sorted(name for name, entry in entries.items() if self.kind is None or _kind_of(entry) == self.kind)

    def dir(self, namespace):
        return sorted(set(vars(sys.modules[namespace])) | set(self.names()))


def _kind_of(entry):
    return entry.extra.get("kind", "optimizer")


class Registered:
    """The attributes of the module a plugin registered as ``name`` in the "data"
    catalogue; with ``builders``, a registered dataset's builder by its name first
    (``shapes_detect`` for "shapes-detect")."""

    def __init__(self, name, builders=False):
        self.name = name
        self.builders = builders

    def module(self):
        from ember.plugins import lookup

        return lookup.lookup("data", self.name, "ember.data", PROVIDED_BY["data"])

    def get(self, namespace, name):
        module = self.module()  # raises, naming ember-data, when it is missing
        if self.builders:
            from ember.plugins import registry

            entry = registry.catalogue("data").get(name.replace("_", "-"))
            if entry is not None and entry.extra.get("kind") == "dataset":
                return entry.obj
        return getattr(module, name)

    def dir(self, namespace):
        return dir(self.module())


class Imported:
    """The attributes of the module ``target``, imported on first use; an ImportError
    names ``distribution`` when it is missing."""

    def __init__(self, target, distribution):
        self.target = target
        self.distribution = distribution

    def module(self, namespace):
        try:
            return importlib.import_module(self.target)
        except ImportError as exc:
            from ember.plugins.manager import install_hint

            raise ImportError(f"{namespace} is provided by the {self.distribution} distribution ({self.target}), "
                              f"which is not installed: {install_hint(self.distribution)}") from exc

    def get(self, namespace, name):
        try:
            return getattr(self.module(namespace), name)
        except AttributeError:
            raise AttributeError(f"module {namespace!r} has no attribute {name!r}") from None

    def dir(self, namespace):
        return sorted(set(dir(self.module(namespace))))


class Alias:
    """Every attribute of the namespace ``target``."""

    def __init__(self, target):
        self.target = target

    def get(self, namespace, name):
        return getattr(importlib.import_module(self.target), name)

    def dir(self, namespace):
        return dir(importlib.import_module(self.target))


_MODULES = Catalogue("modules")

FORWARDERS = {
    "ember.nn": _MODULES,
    "ember.nn.functional": Catalogue("functionals", remember=True),
    # PyTorch's module paths of the layers plugins provide
    "ember.nn.modules.activation": _MODULES,
    "ember.nn.modules.batchnorm": _MODULES,
    "ember.nn.modules.instancenorm": _MODULES,
    "ember.nn.modules.loss": _MODULES,
    "ember.nn.modules.normalization": _MODULES,
    "ember.optim": Catalogue("optimizers", kind="optimizer"),
    "ember.optim.lr_scheduler": Catalogue("optimizers", kind="lr_scheduler"),
    "ember.optim.swa_utils": Catalogue("optimizers", kind="swa_utils"),
    "ember.optim.optimizer": Imported("ember_optim.optimizer", OPTIM),
    "ember.data": Catalogue("data", submodules=("transforms", "datasets")),
    "ember.data.transforms": Registered("transforms"),
    "ember.data.datasets": Registered("datasets", builders=True),
    "ember.utils.data": Alias("ember.data"),
    "ember.utils.data.dataloader": Imported("ember_data.dataloader", DATA),
    "ember.utils.data.dataset": Imported("ember_data.dataset", DATA),
    "ember.utils.data.distributed": Imported("ember_data.distributed", DATA),
    "ember.utils.data.sampler": Imported("ember_data.sampler", DATA),
    # torch.ao's paths of the quantization API (ember-quantization)
    "ember.ao.quantization": Imported("ember_quantization", QUANTIZATION),
    "ember.quantization": Imported("ember_quantization", QUANTIZATION),
    "ember.ao.nn.quantized": Imported("ember_quantization.nn.quantized", QUANTIZATION),
    "ember.ao.nn.quantized.dynamic": Imported("ember_quantization.nn.quantized.dynamic", QUANTIZATION),
    "ember.ao.nn.qat": Imported("ember_quantization.nn.qat", QUANTIZATION),
    "ember.ao.nn.intrinsic": Imported("ember_quantization.nn.intrinsic", QUANTIZATION),
    # torchmetrics' classes (ember-metrics), as `ember.metrics.Accuracy`
    "ember.metrics": Catalogue("metrics"),
}


# NOTE [ from ember.utils.data import DataLoader ]
# Python turns an AttributeError raised by a module's ``__getattr__`` during
# ``from M import N`` into a bare "cannot import name 'N' from 'M'", dropping the
# message that said which distribution to install. In the namespaces whose every name
# comes from ember-data, a name of a missing (or broken) distribution is therefore an
# ImportError, which ``from`` lets through: in a core-only install,
# ``from ember.utils.data import DataLoader`` names ember-data and the command that
# installs it. Elsewhere (``ember.nn``, ``ember.optim``) it stays an AttributeError, so
# ``hasattr`` keeps answering False.
IMPORT_ERROR_NAMESPACES = frozenset({"ember.data", "ember.utils.data"})


def forwarder(namespace):
    """``(__getattr__, __dir__)`` for the module ``namespace``, as its FORWARDERS row says."""
    source = FORWARDERS[namespace]

    def __getattr__(name):
        if name.startswith("__"):  # dunder probes (hasattr(m, "__wrapped__"), copy, pickle) never reach the registry
            raise AttributeError(f"module {namespace!r} has no attribute {name!r}")
        if namespace not in IMPORT_ERROR_NAMESPACES:
            return source.get(namespace, name)
        from ember.plugins.lookup import NotProvidedError

        try:
            return source.get(namespace, name)
        except NotProvidedError as exc:  # NOTE [ from ember.utils.data import DataLoader ]
            why = str(exc).partition(": ")[2]
            raise ImportError(f"cannot import name {name!r} from {namespace!r}: {why}", name=namespace) from None

    def __dir__():
        return source.dir(namespace)

    return __getattr__, __dir__


def create(namespace, name, *args, **kwargs):
    """Build the class ``namespace`` resolves as ``name``; KeyError if there is none."""
    try:
        cls = FORWARDERS[namespace].get(namespace, name)
    except AttributeError as exc:
        raise KeyError(str(exc)) from None
    return cls(*args, **kwargs)
