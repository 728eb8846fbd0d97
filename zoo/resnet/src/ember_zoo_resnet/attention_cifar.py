"""CIFAR-style ResNets with an attention module in every residual block: SE-, CBAM-, ECA-
and CA-ResNet-8 (and any depth 6n+2).

PyTorch counterpart: none in torch or torchvision; the modules follow their authors'
reference code (ember_zoo_resnet/attention/), the network is cifar.py's ``CifarResNet``.

# NOTE [ Where the attention goes in a residual block ]
# Every paper gates the residual branch, after its last norm and before the shortcut
# is added, so a block stays the identity when its branch is switched off: SE (Hu et
# al., fig. 3 "SE-ResNet module"), CBAM (the reference's MODELS/model_resnet.py
# BasicBlock), ECA (the reference's models/eca_resnet.py ECABasicBlock); coordinate
# attention's reference code has only MobileNetV2, where it also sits inside the
# residual branch. The module is the block's attribute named as those ResNets name it
# (``se``, ``cbam``, ``eca``; ``ca`` for coordinate attention), so keys read
# ``layer2.0.cbam.SpatialGate...``. The widths here are 16, 32 and 64 channels, so the
# papers' reduction ratio of 16 would leave SE and CBAM one hidden unit in the first
# stage: both use r = 4. ECA's kernel size comes from the width (3 at every stage
# here); coordinate attention keeps its reference's reduction of 32 (so its shared
# convolution has 8 channels, the reference's minimum). As the CBAM reference
# initialises its ResNets, every spatial gate's norm starts at weight 0, so each
# spatial map starts uniform (0.5) and the channel gate learns first.
"""

import functools

from ember import nn
from ember_zoo_resnet.attention import CBAM, CoordinateAttention, EfficientChannelAttention, SqueezeExcitation
from ember_zoo_resnet.cifar import CifarResNet
from ember_zoo_resnet.resnet import BasicBlock

REDUCTION = 4  # SE's and CBAM's ratio at these widths (NOTE [ Where the attention goes in a residual block ])


def squeeze_excitation(planes):
    return SqueezeExcitation(planes, planes // REDUCTION)


def cbam(planes):
    return CBAM(planes, reduction_ratio=REDUCTION)


def eca(planes):
    return EfficientChannelAttention(planes)


def coordinate_attention(planes):
    return CoordinateAttention(planes, planes)


# The block attribute's name -> the module built for a block of ``planes`` channels.
ATTENTIONS = {"se": squeeze_excitation, "cbam": cbam, "eca": eca, "ca": coordinate_attention}


class AttentionBasicBlock(BasicBlock):
    """torchvision's ``BasicBlock`` with an attention module on the residual branch, after
    ``bn2``; the module is the attribute named ``attention`` ("se", "cbam", "eca" or "ca")."""

    def __init__(self, inplanes, planes, stride=1, downsample=None, norm_layer=None, attention="se"):
        super().__init__(inplanes, planes, stride, downsample, norm_layer=norm_layer)
        if attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {', '.join(ATTENTIONS)}, but got {attention!r}")
        self.attention = attention
        # (registered under the mechanism's name, as the reference ResNets name it)
        setattr(self, attention, ATTENTIONS[attention](planes))

    def gate(self):
        """The block's attention module."""
        return getattr(self, self.attention)

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.gate()(self.bn2(self.conv2(out)))
        return self.relu(out + identity)


class AttentionCifarResNet(CifarResNet):
    """``CifarResNet`` built from ``AttentionBasicBlock``; ``attention_maps`` gives what
    ``ember predict --explain`` draws (ember_zoo_resnet/explain.py).

    Args:
        attention: "se", "cbam", "eca" or "ca".
        depth and the rest: as ``CifarResNet``.
    """

    def __init__(self, attention, depth=8, **kwargs):
        if attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {', '.join(ATTENTIONS)}, but got {attention!r}")
        super().__init__(depth=depth, block=functools.partial(AttentionBasicBlock, attention=attention), **kwargs)
        self.attention = attention
        for module in self.modules():
            if isinstance(module, CBAM) and not module.no_spatial:
                nn.init.zeros_(module.SpatialGate.spatial.bn.weight)

    def attention_maps(self, images):
        """``(maps, how)``: one (N, 1, H, W) map in [0, 1] per image of ``images``, and
        a line saying which map it is (NOTE [ Which attention map is drawn ])."""
        from ember_zoo_resnet.explain import attention_maps

        return attention_maps(self, images)


def _builder(attention, title, depth=8):
    def build(**kwargs):
        return AttentionCifarResNet(attention, depth=depth, **kwargs)

    build.__name__ = build.__qualname__ = f"{attention}_resnet{depth}_cifar"
    build.__doc__ = f"CIFAR-style ResNet-{depth} with {title} in every residual block."
    return build


se_resnet8_cifar = _builder("se", "Squeeze-and-Excitation")
cbam_resnet8_cifar = _builder("cbam", "CBAM (channel and spatial gates)")
eca_resnet8_cifar = _builder("eca", "Efficient Channel Attention")
ca_resnet8_cifar = _builder("ca", "coordinate attention")
