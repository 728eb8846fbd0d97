"""Squeeze-and-Excitation: each channel rescaled by a gate computed from every channel's mean.

PyTorch counterpart: torchvision/ops/misc.py (v0.28), ``SqueezeExcitation``, whose
argument and attribute names this module keeps (``avgpool``, ``fc1``, ``fc2``,
``activation``, ``scale_activation``), so a torchvision state dict of the block loads.

Paper: Hu, Shen, Albanie, Sun, Wu. Squeeze-and-Excitation Networks. CVPR 2018 (arXiv
1709.01507); the authors' reference implementation is Caffe (hujie-frank/SENet).

The "excitation" is a two-layer bottleneck on the pooled channel vector; torchvision
(and ember) write its two fully connected layers as 1x1 convolutions on the (N, C, 1, 1)
map, which is the same arithmetic without a reshape. ember-vision has its own copy for
``ember_vision.ops`` (plugins meet only through the registry, so the zoo does not import it).
"""

from ember import nn


class SqueezeExcitation(nn.Module):
    """``x * sigmoid(fc2(relu(fc1(mean_hw(x)))))``: a gate in (0, 1) per channel and sample.

    Args:
        input_channels: channels of ``x`` (C).
        squeeze_channels: width of the bottleneck (C / r; the paper's r is 16).
        activation: class of the bottleneck's activation (``nn.ReLU``).
        scale_activation: class of the gate (``nn.Sigmoid``).

    >>> import ember
    >>> se = SqueezeExcitation(16, 4)
    >>> se(ember.randn(2, 16, 8, 8)).shape
    ember.Size([2, 16, 8, 8])
    """

    def __init__(self, input_channels, squeeze_channels, activation=None, scale_activation=None):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = (activation or nn.ReLU)()
        self.scale_activation = (scale_activation or nn.Sigmoid)()

    def scale(self, x):
        """The gate, (N, C, 1, 1): squeeze (the mean), excite (bottleneck, sigmoid)."""
        squeezed = self.avgpool(x)
        return self.scale_activation(self.fc2(self.activation(self.fc1(squeezed))))

    def forward(self, x):
        return x * self.scale(x)
