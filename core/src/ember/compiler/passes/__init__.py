"""The passes ``ember.compile`` runs over a captured op graph, in order: dead code,
constant folding, conv-bn folding, a convolution algorithm per shape (im2col or
Winograd, chosen by measurement), the convolutions' epilogues (ReLU, residual add),
elementwise fusion.

PyTorch counterpart: torch/_inductor/fx_passes/ (v2.13): each pass takes an fx graph
and rewrites it in place.
"""

from ember.compiler.passes.constant_folding import fold_constants
from ember.compiler.passes.conv_algorithm import ALGORITHMS, choose_conv_algorithms, conv_algorithm_cache
from ember.compiler.passes.conv_bn_folding import fold_conv_bn
from ember.compiler.passes.conv_epilogue import fold_conv_epilogues
from ember.compiler.passes.conv_layout import CompiledConv2d
from ember.compiler.passes.dead_code import eliminate_dead_code
from ember.compiler.passes.fusion import FusedElementwise, fuse_elementwise
from ember.compiler.passes.im2col_conv import Im2colConv2d
from ember.compiler.passes.winograd import WinogradConv2d

__all__ = ["ALGORITHMS", "CompiledConv2d", "FusedElementwise", "Im2colConv2d", "WinogradConv2d",
           "choose_conv_algorithms", "conv_algorithm_cache", "eliminate_dead_code", "fold_constants",
           "fold_conv_bn", "fold_conv_epilogues", "fuse_elementwise"]
