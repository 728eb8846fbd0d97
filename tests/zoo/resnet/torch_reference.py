"""A PyTorch ResNet with torchvision's module tree and names, written for these tests
from torch.nn layers (torchvision itself does not import beside this torch build).

It is the oracle of tests/zoo/resnet: its state dict, in torchvision's names, is loaded
into ember's models, and outputs and gradients are compared.
"""

import torch
from torch import nn


class TorchBasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, width_per_group=64):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(y)) + shortcut)


class TorchBottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, width_per_group=64):
        super().__init__()
        width = int(planes * width_per_group / 64) * groups
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        return self.relu(self.bn3(self.conv3(y)) + shortcut)


class TorchResNet(nn.Module):
    """Stem, stages of blocks, pooling, ``fc``; ``stages`` are the planes of each stage
    ((64, 128, 256, 512) for ImageNet models, (16, 32, 64) for CIFAR-style ones)."""

    def __init__(self, block, layers, num_classes=1000, groups=1, width_per_group=64, in_channels=3,
                 stem="imagenet", stages=(64, 128, 256, 512)):
        super().__init__()
        self.inplanes = stages[0]
        if stem == "imagenet":
            self.conv1 = nn.Conv2d(in_channels, stages[0], 7, 2, 3, bias=False)
        else:
            self.conv1 = nn.Conv2d(in_channels, stages[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(stages[0])
        self.relu = nn.ReLU(inplace=True)
        if stem == "imagenet":
            self.maxpool = nn.MaxPool2d(3, 2, 1)
        elif stem == "small":
            self.maxpool = nn.Identity()
        for index, (planes, blocks) in enumerate(zip(stages, layers)):
            stride = 1 if index == 0 else 2
            downsample = None
            if stride != 1 or self.inplanes != planes * block.expansion:
                downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                                           nn.BatchNorm2d(planes * block.expansion))
            stage = [block(self.inplanes, planes, stride, downsample, groups, width_per_group)]
            self.inplanes = planes * block.expansion
            stage += [block(self.inplanes, planes, groups=groups, width_per_group=width_per_group)
                      for _ in range(1, blocks)]
            setattr(self, f"layer{index + 1}", nn.Sequential(*stage))
        self.num_stages = len(stages)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(self.inplanes, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        if hasattr(self, "maxpool"):
            x = self.maxpool(x)
        for index in range(self.num_stages):
            x = getattr(self, f"layer{index + 1}")(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


def randomize_norms(model, generator):
    """Non-trivial BN weights, biases and running statistics, so eval mode tests them."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5, generator=generator)
                m.bias.uniform_(-0.2, 0.2, generator=generator)
                m.running_mean.uniform_(-0.2, 0.2, generator=generator)
                m.running_var.uniform_(0.5, 1.5, generator=generator)
