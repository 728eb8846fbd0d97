"""CV attention modules: Squeeze-and-Excitation, CBAM, ECA and coordinate attention.

PyTorch counterpart: none in torch; torchvision/ops/misc.py ``SqueezeExcitation`` for SE,
and for the other three the authors' reference code, named in each module's docstring.
Each module keeps its reference's attribute names, so the reference's state dicts load.
The zoo's attention ResNets (ember_zoo_resnet/attention_cifar.py) put one after the
second convolution of every residual block.
"""

from ember_zoo_resnet.attention.cbam import CBAM, ChannelGate, SpatialGate
from ember_zoo_resnet.attention.coordinate import CoordinateAttention
from ember_zoo_resnet.attention.eca import EfficientChannelAttention, eca_kernel_size
from ember_zoo_resnet.attention.squeeze_excitation import SqueezeExcitation

__all__ = ["CBAM", "ChannelGate", "CoordinateAttention", "EfficientChannelAttention", "SpatialGate",
           "SqueezeExcitation", "eca_kernel_size"]
