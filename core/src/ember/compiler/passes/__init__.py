"""The passes ``ember.compile`` runs over a captured op graph, in order: dead code,
constant folding, conv-bn folding, Winograd kernels for 3x3 convolutions,
elementwise fusion.

PyTorch counterpart: torch/_inductor/fx_passes/ (v2.13): each pass takes an fx graph
and rewrites it in place.
"""

from ember.compiler.passes.constant_folding import fold_constants
from ember.compiler.passes.conv_bn_folding import fold_conv_bn
from ember.compiler.passes.dead_code import eliminate_dead_code
from ember.compiler.passes.fusion import FusedElementwise, fuse_elementwise
from ember.compiler.passes.winograd import WinogradConv2d, use_winograd

__all__ = ["FusedElementwise", "WinogradConv2d", "eliminate_dead_code", "fold_constants", "fold_conv_bn",
           "fuse_elementwise", "use_winograd"]
