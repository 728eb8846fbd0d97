"""``ShapeProp``: run a graph on example inputs and record each node's shape and dtype
in ``node.meta["tensor_meta"]``.

PyTorch counterpart: torch/fx/passes/shape_prop.py (v2.13). ember records shape,
dtype, requires_grad and stride; PyTorch's memory format and quantization fields are
left out.
"""

from collections import namedtuple

from ember.fx.interpreter import Interpreter
from ember.fx.node import map_aggregate

TensorMetadata = namedtuple("TensorMetadata", ["shape", "dtype", "requires_grad", "stride"])


class ShapeProp(Interpreter):
    """``ShapeProp(gm).propagate(*inputs)`` fills ``meta["tensor_meta"]`` (a ``TensorMetadata``,
    or a structure of them for nodes returning several tensors) and ``meta["type"]``."""

    def run_node(self, n):
        from ember.tensor import Tensor

        result = super().run_node(n)
        found = []

        def extract(x):
            if isinstance(x, Tensor):
                found.append(x)
                return TensorMetadata(tuple(x.shape), x.dtype, x.requires_grad, tuple(x.stride()))
            return x
        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the graph on ``args``; returns its result."""
        return self.run(*args)
