"""CIFAR-style ResNets (depth 6n+2: ResNet-8/20/32/44/56/110) for small images.

PyTorch counterpart: none in torchvision; the architecture of He et al. 2016, section
4.2 ("Deep Residual Learning for Image Recognition"), built from torchvision's
``BasicBlock`` (ember_zoo_resnet/resnet.py) so the names are torchvision's: a 3x3/1 stem
``conv1`` with 16 channels, ``bn1``, ``relu``, three stages ``layer1``..``layer3`` of n
blocks each (16, 32, 64 channels; the second and third start with stride 2), ``avgpool``,
``fc``. There is no max pool and no ``layer4``.

The paper's stage-changing shortcut is parameter-free (option A: subsample and pad with
zeros); ember uses option B, a 1x1 convolution and a norm named ``downsample`` as in
torchvision. Community CIFAR code names the head ``linear`` and the shortcut
``shortcut``: ``remap_community_keys`` renames such a state dict's keys.
"""

from ember import nn
from ember_zoo_resnet.resnet import BasicBlock, conv1x1, conv3x3, init_weights


class CifarResNet(nn.Module):
    """ResNet of depth 6n+2 for small images (32x32, or the 8x8 digits).

    Args:
        depth: 6n+2 (8, 20, 32, 44, 56, 110).
        num_classes: outputs of ``fc``.
        in_channels: image channels.
        width: channels of the first stage (16 in the paper); stages have width, 2x, 4x.
        zero_init_residual: start each block's ``bn2`` at weight 0.
        norm_layer: the normalisation class (``nn.BatchNorm2d``).
        block: the residual block class, called as ``BasicBlock`` is (the attention
            ResNets of attention_cifar.py pass one with a gate after its second norm).
    """

    def __init__(self, depth=20, num_classes=10, in_channels=3, width=16, zero_init_residual=False,
                 norm_layer=None, block=None):
        super().__init__()
        if (depth - 2) % 6 != 0 or depth < 8:
            raise ValueError(f"depth of a CIFAR-style ResNet must be 6n+2 (8, 20, 32, ...), but got {depth}")
        blocks = (depth - 2) // 6
        self._norm_layer = norm_layer or nn.BatchNorm2d
        self._block = block or BasicBlock
        self.inplanes = width
        self.conv1 = conv3x3(in_channels, width)
        self.bn1 = self._norm_layer(width)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = self._make_layer(width, blocks, stride=1)
        self.layer2 = self._make_layer(width * 2, blocks, stride=2)
        self.layer3 = self._make_layer(width * 4, blocks, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 4, num_classes)
        init_weights(self, zero_init_residual)

    def _make_layer(self, planes, blocks, stride):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes, stride), self._norm_layer(planes))
        layers = [self._block(self.inplanes, planes, stride, downsample, norm_layer=self._norm_layer)]
        self.inplanes = planes
        for _ in range(1, blocks):
            layers.append(self._block(planes, planes, norm_layer=self._norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(self.avgpool(x).flatten(1))


def remap_community_keys(state_dict):
    """Rename a community CIFAR ResNet's keys (``linear.*``, ``*.shortcut.*``) to ember's
    torchvision names (``fc.*``, ``*.downsample.*``); other keys pass unchanged."""
    renamed = {}
    for key, value in state_dict.items():
        if key.startswith("linear."):
            key = "fc." + key[len("linear."):]
        key = key.replace(".shortcut.", ".downsample.")
        renamed[key] = value
    return renamed


def _depth_builder(depth):
    def build(**kwargs):
        return CifarResNet(depth=depth, **kwargs)

    build.__name__ = build.__qualname__ = f"resnet{depth}_cifar"
    build.__doc__ = f"CIFAR-style ResNet-{depth} ({(depth - 2) // 6} blocks per stage, 16/32/64 channels)."
    return build


resnet8_cifar = _depth_builder(8)
resnet20_cifar = _depth_builder(20)
resnet32_cifar = _depth_builder(32)
resnet44_cifar = _depth_builder(44)
resnet56_cifar = _depth_builder(56)
resnet110_cifar = _depth_builder(110)
