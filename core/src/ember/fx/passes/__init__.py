"""Passes over fx graphs (PyTorch counterpart: torch/fx/passes/__init__.py (v2.13))."""

from ember.fx.passes.shape_prop import ShapeProp, TensorMetadata

__all__ = ["ShapeProp", "TensorMetadata"]
