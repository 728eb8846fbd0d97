"""ResNet, ResNeXt and Wide ResNet with torchvision's layout and parameter names.

PyTorch counterpart: torchvision/models/resnet.py (v0.28). The module tree, attribute
names and initialisation follow torchvision, so a torchvision state dict loads with
``load_state_dict`` and gives torchvision's logits: ``conv1``, ``bn1``, ``relu``,
``maxpool``, ``layer1``..``layer4`` (each a ``Sequential`` of blocks), ``avgpool``,
``fc``; a block's projection shortcut is ``downsample`` (``Sequential(conv1x1, norm)``).

Two additions, both off by default so the default models are torchvision's:
``in_channels`` (torchvision fixes 3) and ``small_input=True``, which swaps the 7x7/2
stem and the max pool for a 3x3/1 stem and no pool (the usual "ResNet-18 for CIFAR"
layout, for 32x32 inputs; the keys stay the same, only ``conv1.weight`` changes shape).
Left out: the pretrained-weight enums (ember never downloads; see ember.zoo.weights).
"""

from ember import nn


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution without bias (the norm after it has one); padding keeps the size."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups,
                     bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution without bias."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions and an identity (or projected) shortcut; the first carries
    the stride."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1,
                 base_width=64, dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (carrying the stride: "ResNet v1.5"), 1x1 expand by 4, plus the shortcut.

    ``groups`` and ``base_width`` make the 3x3 a grouped convolution of
    ``planes * base_width / 64 * groups`` channels (ResNeXt, Wide ResNet).
    """

    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """A stem, four stages of ``block`` (64, 128, 256, 512 planes; stride 2 from the second
    on), global average pooling and a linear classifier ``fc``.

    Args:
        block: ``BasicBlock`` or ``Bottleneck``.
        layers: blocks per stage, e.g. ``[2, 2, 2, 2]`` for ResNet-18.
        num_classes: outputs of ``fc``.
        zero_init_residual: start each block's last norm at weight 0, so every residual
            branch starts as zero and each block as the identity (Goyal et al. 2017).
        groups, width_per_group: the grouped 3x3 of ResNeXt / Wide ResNet bottlenecks.
        replace_stride_with_dilation: three bools, one per stage 2-4: dilate instead of
            striding (for dense prediction).
        norm_layer: the normalisation class (``nn.BatchNorm2d``).
        in_channels: image channels (an ember addition; torchvision fixes 3).
        small_input: a 3x3/1 stem and no max pool, for 32x32 inputs (an ember addition).
    """

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1, width_per_group=64,
                 replace_stride_with_dilation=None, norm_layer=None, in_channels=3, small_input=False):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, "
                             f"got {replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        if small_input:
            self.conv1 = nn.Conv2d(in_channels, self.inplanes, kernel_size=3, stride=1, padding=1, bias=False)
        else:
            self.conv1 = nn.Conv2d(in_channels, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.Identity() if small_input else nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        init_weights(self, zero_init_residual)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups,
                        self.base_width, previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, dilation=self.dilation,
                                norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.avgpool(x).flatten(1)
        return self.fc(x)


def init_weights(model, zero_init_residual=False):
    """torchvision's initialisation: He-normal (fan_out) convolutions, norms at weight 1 and
    bias 0, and optionally each residual branch's last norm at weight 0."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)) and m.weight is not None:
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)
    if zero_init_residual:
        for m in model.modules():
            last_norm = getattr(m, "bn3", None) if isinstance(m, Bottleneck) else getattr(m, "bn2", None)
            if isinstance(m, (BasicBlock, Bottleneck)) and last_norm is not None and last_norm.weight is not None:
                nn.init.constant_(last_norm.weight, 0)


def resnet18(**kwargs):
    """ResNet-18 (He et al. 2016): BasicBlock, [2, 2, 2, 2]; 11,689,512 parameters."""
    return ResNet(BasicBlock, [2, 2, 2, 2], **kwargs)


def resnet34(**kwargs):
    """ResNet-34: BasicBlock, [3, 4, 6, 3]; 21,797,672 parameters."""
    return ResNet(BasicBlock, [3, 4, 6, 3], **kwargs)


def resnet50(**kwargs):
    """ResNet-50 (v1.5): Bottleneck, [3, 4, 6, 3]; 25,557,032 parameters."""
    return ResNet(Bottleneck, [3, 4, 6, 3], **kwargs)


def resnet101(**kwargs):
    """ResNet-101 (v1.5): Bottleneck, [3, 4, 23, 3]; 44,549,160 parameters."""
    return ResNet(Bottleneck, [3, 4, 23, 3], **kwargs)


def resnet152(**kwargs):
    """ResNet-152 (v1.5): Bottleneck, [3, 8, 36, 3]; 60,192,808 parameters."""
    return ResNet(Bottleneck, [3, 8, 36, 3], **kwargs)


def resnext50_32x4d(**kwargs):
    """ResNeXt-50 32x4d (Xie et al. 2017): 32 groups of width 4; 25,028,904 parameters."""
    return ResNet(Bottleneck, [3, 4, 6, 3], groups=32, width_per_group=4, **kwargs)


def resnext101_32x8d(**kwargs):
    """ResNeXt-101 32x8d: 32 groups of width 8; 88,791,336 parameters."""
    return ResNet(Bottleneck, [3, 4, 23, 3], groups=32, width_per_group=8, **kwargs)


def wide_resnet50_2(**kwargs):
    """Wide ResNet-50-2 (Zagoruyko & Komodakis 2016): bottlenecks twice as wide; 68,883,240 parameters."""
    return ResNet(Bottleneck, [3, 4, 6, 3], width_per_group=128, **kwargs)


def wide_resnet101_2(**kwargs):
    """Wide ResNet-101-2: 126,886,696 parameters."""
    return ResNet(Bottleneck, [3, 4, 23, 3], width_per_group=128, **kwargs)


def resnet18_cifar(**kwargs):
    """ResNet-18 with the small-input stem (3x3/1, no max pool) for 32x32 images; 11,173,962
    parameters with 10 classes (the usual "ResNet-18 on CIFAR")."""
    kwargs.setdefault("num_classes", 10)
    return ResNet(BasicBlock, [2, 2, 2, 2], small_input=True, **kwargs)
