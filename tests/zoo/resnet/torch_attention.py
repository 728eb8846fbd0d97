"""The four attention modules and the attention ResNet-8 written with torch ops, after the
authors' reference code (torchvision's ``SqueezeExcitation`` for SE; Jongchan/attention-module
for CBAM; BangguWu/ECANet for ECA; houqb/CoordAttention for coordinate attention), with the
reference attribute names. The oracle of test_attention.py: ember's modules load these
state dicts, and ember's checkpoints load into these models."""

import torch
import torch.nn.functional as F
from torch import nn
from torch_reference import TorchBasicBlock, TorchResNet


class TorchSqueezeExcitation(nn.Module):
    def __init__(self, input_channels, squeeze_channels):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Sigmoid()

    def forward(self, x):
        scale = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return scale * x


class TorchChannelGate(nn.Module):
    def __init__(self, gate_channels, reduction_ratio):
        super().__init__()
        self.mlp = nn.Sequential(nn.Flatten(), nn.Linear(gate_channels, gate_channels // reduction_ratio), nn.ReLU(),
                                 nn.Linear(gate_channels // reduction_ratio, gate_channels))

    def forward(self, x):
        window = (x.size(2), x.size(3))
        total = self.mlp(F.avg_pool2d(x, window, stride=window)) + self.mlp(F.max_pool2d(x, window, stride=window))
        return x * torch.sigmoid(total).unsqueeze(2).unsqueeze(3).expand_as(x)


class TorchConvNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, 7, padding=3, bias=False)
        self.bn = nn.BatchNorm2d(1, eps=1e-5, momentum=0.01)

    def forward(self, x):
        return self.bn(self.conv(x))


class TorchSpatialGate(nn.Module):
    def __init__(self):
        super().__init__()
        self.spatial = TorchConvNorm()

    def attention_map(self, x):
        compressed = torch.cat((torch.max(x, 1)[0].unsqueeze(1), torch.mean(x, 1).unsqueeze(1)), dim=1)
        return torch.sigmoid(self.spatial(compressed))

    def forward(self, x):
        return x * self.attention_map(x)


class TorchCBAM(nn.Module):
    def __init__(self, gate_channels, reduction_ratio=16):
        super().__init__()
        self.ChannelGate = TorchChannelGate(gate_channels, reduction_ratio)
        self.SpatialGate = TorchSpatialGate()

    def forward(self, x):
        return self.SpatialGate(self.ChannelGate(x))


class TorchECA(nn.Module):
    def __init__(self, k_size=3):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.conv = nn.Conv1d(1, 1, kernel_size=k_size, padding=(k_size - 1) // 2, bias=False)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        y = self.conv(self.avg_pool(x).squeeze(-1).transpose(-1, -2)).transpose(-1, -2).unsqueeze(-1)
        return x * self.sigmoid(y).expand_as(x)


class TorchCoordAtt(nn.Module):
    def __init__(self, inp, oup, reduction=32):
        super().__init__()
        self.pool_h = nn.AdaptiveAvgPool2d((None, 1))
        self.pool_w = nn.AdaptiveAvgPool2d((1, None))
        mip = max(8, inp // reduction)
        self.conv1 = nn.Conv2d(inp, mip, kernel_size=1)
        self.bn1 = nn.BatchNorm2d(mip)
        self.conv_h = nn.Conv2d(mip, oup, kernel_size=1)
        self.conv_w = nn.Conv2d(mip, oup, kernel_size=1)

    def attention_maps(self, x):
        h, w = x.size(2), x.size(3)
        y = torch.cat([self.pool_h(x), self.pool_w(x).permute(0, 1, 3, 2)], dim=2)
        y = self.bn1(self.conv1(y))
        y = y * F.relu6(y + 3) / 6  # the reference's h_swish
        x_h, x_w = torch.split(y, [h, w], dim=2)
        return self.conv_h(x_h).sigmoid(), self.conv_w(x_w.permute(0, 1, 3, 2)).sigmoid()

    def forward(self, x):
        a_h, a_w = self.attention_maps(x)
        return x * a_w * a_h


# name -> the torch module for a block of ``planes`` channels, as ember_zoo_resnet/attention_cifar.py builds it
TORCH_ATTENTIONS = {
    "se": lambda planes: TorchSqueezeExcitation(planes, planes // 4),
    "cbam": lambda planes: TorchCBAM(planes, 4),
    "eca": lambda planes: TorchECA(3),
    "ca": lambda planes: TorchCoordAtt(planes, planes),
}


def torch_attention_block(attention):
    """A ``TorchBasicBlock`` class with ``attention`` gating the branch after ``bn2``."""

    class Block(TorchBasicBlock):
        def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, width_per_group=64):
            super().__init__(inplanes, planes, stride, downsample)
            setattr(self, attention, TORCH_ATTENTIONS[attention](planes))

        def forward(self, x):
            shortcut = x if self.downsample is None else self.downsample(x)
            y = self.relu(self.bn1(self.conv1(x)))
            y = getattr(self, attention)(self.bn2(self.conv2(y)))
            return self.relu(y + shortcut)

    return Block


def torch_attention_resnet8(attention, num_classes=10, in_channels=1):
    return TorchResNet(torch_attention_block(attention), [1, 1, 1], num_classes=num_classes, in_channels=in_channels,
                       stem="cifar", stages=(16, 32, 64))
