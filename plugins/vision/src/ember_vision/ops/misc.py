"""Small layers of torchvision's models: ``Conv2dNormActivation``, ``FrozenBatchNorm2d``,
``SqueezeExcitation``.

PyTorch counterpart: torchvision/ops/misc.py (torchvision 0.28). ember leaves out
``Conv3dNormActivation``, ``MLP`` and ``Permute``.
"""

import ember
from ember import nn


class Conv2dNormActivation(nn.Sequential):
    """Conv2d, then a norm layer, then an activation (each optional): the block of
    torchvision's models. ``padding=None`` keeps the size for stride 1; the convolution
    has a bias only without a norm layer (``bias=None``)."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer="BatchNorm2d", activation_layer="ReLU", dilation=1, inplace=True, bias=None):
        norm_layer, activation_layer = _layer(norm_layer), _layer(activation_layer)
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation, groups=groups,
                            bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(**({} if inplace is None else {"inplace": inplace})))
        super().__init__(*layers)
        self.out_channels = out_channels


# NOTE [ Layer defaults by name ]
# torchvision's defaults are classes (``norm_layer=torch.nn.BatchNorm2d``). In ember,
# BatchNorm2d, ReLU and Sigmoid come from plugins (ember-norm, ember-activation), and
# this module is imported while ember builds its catalogues (the ops hook), when looking
# them up is refused; so the defaults name them, and ``_layer`` finds the class when a
# block is built. A class passed in is used as it is, as in torchvision.
def _layer(layer):
    """A layer class, or the class ``ember.nn`` has under that name."""
    return getattr(nn, layer) if isinstance(layer, str) else layer


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm2d with its statistics and affine parameters fixed, as buffers: what a
    detection backbone fine-tuned with tiny batches uses. ``y = x * scale + shift`` with
    ``scale = weight / sqrt(running_var + eps)``, ``shift = bias - running_mean * scale``."""

    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", ember.ones(num_features))
        self.register_buffer("bias", ember.zeros(num_features))
        self.register_buffer("running_mean", ember.zeros(num_features))
        self.register_buffer("running_var", ember.ones(num_features))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        state_dict.pop(prefix + "num_batches_tracked", None)  # a BatchNorm2d's checkpoint loads as it is
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, x):
        scale = self.weight.reshape(1, -1, 1, 1) * (self.running_var.reshape(1, -1, 1, 1) + self.eps).rsqrt()
        shift = self.bias.reshape(1, -1, 1, 1) - self.running_mean.reshape(1, -1, 1, 1) * scale
        return x * scale + shift

    def __repr__(self):
        return f"{self.__class__.__name__}({self.weight.shape[0]}, eps={self.eps})"


class SqueezeExcitation(nn.Module):
    """Squeeze-and-Excitation (Hu et al., 2018): each channel scaled by a gate computed from
    all channels' means, ``x * sigmoid(fc2(relu(fc1(mean(x)))))``, the two 1x1
    convolutions going through ``squeeze_channels``."""

    def __init__(self, input_channels, squeeze_channels, activation="ReLU", scale_activation="Sigmoid"):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = _layer(activation)()
        self.scale_activation = _layer(scale_activation)()

    def _scale(self, input):
        scale = self.avgpool(input)
        scale = self.activation(self.fc1(scale))
        return self.scale_activation(self.fc2(scale))

    def forward(self, input):
        return self._scale(input) * input
