"""The zoo's CIFAR ResNets rewritten for eager-mode int8: the structure a compressed
checkpoint records and ``create_model`` rebuilds before loading it.

PyTorch counterpart: torchvision/models/quantization/resnet.py (v0.28: ``QuantizableBasicBlock``
adds through a ``FloatFunctional``, ``QuantizableResNet`` has the stubs and ``fuse_model``);
ember rewrites a trained model's copy instead of defining the classes. ``ember compress``,
which writes these checkpoints, is ember/trainer/compression.py. The quantized modules
are the ember-quantization plugin's, found through the plugin registry (the core imports no plugin).
"""

import copy
import warnings

from ember.zoo.errors import ZooError


def apply_recorded_compression(model, checkpoint):
    """Rebuild the structure a compressed checkpoint's state dict needs (called by create_model)."""
    quantize = ((checkpoint or {}).get("compression") or {}).get("quantize")
    if quantize is None:
        return model
    record = checkpoint["compression"]
    if quantize == "qat" and record.get("stage") == "prepared":  # a QAT fine-tuning checkpoint
        return prepare_qat_resnet(model)
    if quantize in ("static", "qat"):  # the int8 structure; the state dict then brings weights and qparams
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # observers that saw no data
            return quantize_static(model, calibration=[], classifier=record.get("classifier", "float"))
    if quantize != "dynamic":
        raise ZooError(f"this checkpoint was quantized with {quantize!r}, which ember cannot rebuild")
    return quantization_plugin().quantize_dynamic(model, inplace=True)


# NOTE [ Static int8 for the zoo's CIFAR ResNets ]
# Eager-mode static quantization needs the model to say where tensors enter and leave
# the int8 region and to do its residual additions through a FloatFunctional. The
# zoo's CifarResNet does neither, so ``quantize_static`` rewrites an eval-mode copy:
# every conv-bn(-relu) is fused, each BasicBlock's `out + identity` then ReLU becomes
# `skip_add.add_relu` (a QFunctional after convert), a QuantStub opens the network and
# a DeQuantStub closes it before the average pool, which stays float (ember has no
# quantized pooling); a second pair of stubs, `quant_fc` and `dequant_fc`, puts the
# classifier `fc` back in int8 (``classifier="int8"``, what ``ember compress`` writes;
# ``"float"`` rebuilds checkpoints written before, whose `fc` stayed float). Calibration
# runs the training loader's first batches through the observers.
def quantize_static(model, calibration, batches=8, classifier="int8"):
    """An int8 copy of a zoo CIFAR ResNet (NOTE [ Static int8 for the zoo's CIFAR ResNets ])."""
    import ember

    eq = quantization_plugin()
    prepared = eq.prepare(quantizable_resnet(model, eq.get_default_qconfig("x86"), classifier), inplace=True)
    with ember.no_grad():
        for index, (inputs, _) in enumerate(calibration):
            if index == batches:
                break
            prepared(inputs)
    return eq.convert(prepared, inplace=True)


def prepare_qat_resnet(model):
    """A QAT-prepared copy of a zoo CIFAR ResNet (NOTE [ Quantization-aware training of the
    zoo's CIFAR ResNets ] in ember/trainer/qat.py)."""
    eq = quantization_plugin()
    return eq.prepare_qat(quantizable_resnet(model, eq.get_default_qat_qconfig("x86")).train(), inplace=True)


def quantizable_resnet(model, qconfig, classifier="int8"):
    """An eval-mode copy of a zoo CIFAR ResNet rewritten for eager-mode quantization, with
    ``qconfig`` (NOTE [ Static int8 for the zoo's CIFAR ResNets ])."""
    eq = quantization_plugin()
    if type(model).__name__ != "CifarResNet":
        raise ZooError(f"static quantization and QAT of {type(model).__name__} are not done (CIFAR ResNets only)")
    model = copy.deepcopy(model).eval()
    eq.fuse_modules(model, [["conv1", "bn1", "relu"]], inplace=True)
    for stage in (model.layer1, model.layer2, model.layer3):
        for block in stage:
            _quantizable_block(block, eq)
    int8_classifier = classifier == "int8"
    forward = _quantizable_resnet_forward if int8_classifier else _quantizable_resnet_forward_float_fc
    model.__class__ = _subclass(type(model), "QuantizableCifarResNet" + ("" if int8_classifier else "FloatFc"),
                                forward)
    model.quant, model.dequant = eq.QuantStub(), eq.DeQuantStub()
    if int8_classifier:
        model.quant_fc, model.dequant_fc = eq.QuantStub(), eq.DeQuantStub()
    model.qconfig = qconfig
    if not int8_classifier:
        model.fc.qconfig = None
    model.avgpool.qconfig = None
    return model


def _quantizable_block(block, eq):
    eq.fuse_modules(block, [["conv1", "bn1", "relu"], ["conv2", "bn2"]], inplace=True)
    if block.downsample is not None:
        eq.fuse_modules(block.downsample, [["0", "1"]], inplace=True)
    block.skip_add = eq.FloatFunctional()
    block.__class__ = _subclass(type(block), "QuantizableBasicBlock", _quantizable_block_forward)


def _quantizable_block_forward(self, x):
    identity = x if self.downsample is None else self.downsample(x)
    return self.skip_add.add_relu(self.conv2(self.conv1(x)), identity)


def _quantizable_resnet_forward(self, x):
    x = self.conv1(self.quant(x))
    x = self.dequant(self.layer3(self.layer2(self.layer1(x))))
    return self.dequant_fc(self.fc(self.quant_fc(self.avgpool(x).flatten(1))))


def _quantizable_resnet_forward_float_fc(self, x):
    x = self.conv1(self.quant(x))
    x = self.dequant(self.layer3(self.layer2(self.layer1(x))))
    return self.fc(self.avgpool(x).flatten(1))


_SUBCLASSES = {}


def _subclass(base, name, forward):
    """One subclass of ``base`` per (base, name) with ``forward`` replaced (kept for deepcopy and pickle)."""
    key = (base, name)
    if key not in _SUBCLASSES:
        _SUBCLASSES[key] = type(name, (base,), {"forward": forward, "__module__": __name__})
    return _SUBCLASSES[key]


def quantization_plugin():
    """The ember-quantization plugin's module (``prepare``, ``convert``, ``QuantStub``...)."""
    from ember.plugins.lookup import plugin_module

    try:
        return plugin_module("ember-quantization")
    except ImportError as exc:  # a user's missing plugin: one line from the CLI
        raise ZooError(f"quantization: {exc}") from None
