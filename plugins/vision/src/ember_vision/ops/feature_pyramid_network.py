"""``FeaturePyramidNetwork``: features of several resolutions, each enriched with the
coarser ones above it, and the extra levels (``LastLevelMaxPool``, ``LastLevelP6P7``).

PyTorch counterpart: torchvision/ops/feature_pyramid_network.py (torchvision 0.28).

NOTE [ The top-down pathway ]
FPN (Lin et al., 2017) takes a backbone's feature maps, finest first. Each goes through
a 1x1 convolution (its "inner" block) to ``out_channels``; starting from the coarsest,
the running map is upsampled (nearest) to the next finer map's size and added to its
inner block's output, and every sum goes through a 3x3 convolution (its "layer" block).
The result has one map per input, in the input's order and names, each with
``out_channels`` channels; an extra block may append more (a stride-2 max pool, "pool",
for Faster R-CNN; two stride-2 convolutions, "p6" and "p7", for RetinaNet).
"""

from collections import OrderedDict

import ember.nn.functional as F
from ember import nn
from ember_vision.ops.misc import Conv2dNormActivation


class ExtraFPNBlock(nn.Module):
    """The base of the blocks that add levels: ``forward(results, x, names)`` returns the
    new ``(results, names)``, given the FPN's outputs, its inputs and the names."""

    def forward(self, results, x, names):
        raise NotImplementedError


class FeaturePyramidNetwork(nn.Module):
    """FPN over ``in_channels_list`` (finest first) to ``out_channels``; ``forward`` takes
    and returns an ordered dict of feature maps (NOTE [ The top-down pathway ]).

    Args:
        in_channels_list: the channels of each input map (none may be 0).
        out_channels: the channels of every output map.
        extra_blocks: an ``ExtraFPNBlock`` adding levels, or None.
        norm_layer: a norm layer after each convolution, or None.
    """

    _version = 2

    def __init__(self, in_channels_list, out_channels, extra_blocks=None, norm_layer=None):
        super().__init__()
        self.inner_blocks = nn.ModuleList()
        self.layer_blocks = nn.ModuleList()
        for in_channels in in_channels_list:
            if in_channels == 0:
                raise ValueError("in_channels=0 is currently not supported")
            self.inner_blocks.append(Conv2dNormActivation(in_channels, out_channels, kernel_size=1, padding=0,
                                                          norm_layer=norm_layer, activation_layer=None))
            self.layer_blocks.append(Conv2dNormActivation(out_channels, out_channels, kernel_size=3,
                                                          norm_layer=norm_layer, activation_layer=None))
        for m in self.modules():  # before the extra blocks, which initialise their own
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_uniform_(m.weight, a=1)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
        if extra_blocks is not None and not isinstance(extra_blocks, ExtraFPNBlock):
            raise TypeError(f"extra_blocks should be of type ExtraFPNBlock not {type(extra_blocks)}")
        self.extra_blocks = extra_blocks

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version < 2:  # version 1 had a bare Conv2d where the block is now
            for block in ("inner_blocks", "layer_blocks"):
                for i in range(len(self.inner_blocks)):
                    for kind in ("weight", "bias"):
                        old = f"{prefix}{block}.{i}.{kind}"
                        if old in state_dict:
                            state_dict[f"{prefix}{block}.{i}.0.{kind}"] = state_dict.pop(old)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def get_result_from_inner_blocks(self, x, idx):
        """``self.inner_blocks[idx](x)`` (torchvision's indirection for TorchScript)."""
        return self.inner_blocks[idx](x)

    def get_result_from_layer_blocks(self, x, idx):
        """``self.layer_blocks[idx](x)``."""
        return self.layer_blocks[idx](x)

    def forward(self, x):
        names = list(x.keys())
        x = list(x.values())
        last_inner = self.get_result_from_inner_blocks(x[-1], -1)
        results = [self.get_result_from_layer_blocks(last_inner, -1)]
        for idx in range(len(x) - 2, -1, -1):
            inner_lateral = self.get_result_from_inner_blocks(x[idx], idx)
            inner_top_down = F.interpolate(last_inner, size=tuple(inner_lateral.shape[-2:]), mode="nearest")
            last_inner = inner_lateral + inner_top_down
            results.insert(0, self.get_result_from_layer_blocks(last_inner, idx))
        if self.extra_blocks is not None:
            results, names = self.extra_blocks(results, x, names)
        return OrderedDict(zip(names, results))


class LastLevelMaxPool(ExtraFPNBlock):
    """One more level, "pool": the last output subsampled by 2 (a max pool of size 1)."""

    def forward(self, x, y, names):
        names.append("pool")
        x.append(F.max_pool2d(x[-1], kernel_size=1, stride=2, padding=0))
        return x, names


class LastLevelP6P7(ExtraFPNBlock):
    """Two more levels, "p6" and "p7", by stride-2 3x3 convolutions (RetinaNet): p6 from
    the last output (or the last input, when the channels differ), p7 from relu(p6)."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.p6 = nn.Conv2d(in_channels, out_channels, 3, 2, 1)
        self.p7 = nn.Conv2d(out_channels, out_channels, 3, 2, 1)
        for module in (self.p6, self.p7):
            nn.init.kaiming_uniform_(module.weight, a=1)
            nn.init.constant_(module.bias, 0)
        self.use_P5 = in_channels == out_channels

    def forward(self, p, c, names):
        p6 = self.p6(p[-1] if self.use_P5 else c[-1])
        p7 = self.p7(F.relu(p6))
        p.extend([p6, p7])
        names.extend(["p6", "p7"])
        return p, names
