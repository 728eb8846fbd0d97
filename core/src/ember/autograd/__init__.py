"""``ember.autograd``: reverse-mode automatic differentiation.

PyTorch counterpart: torch/autograd/__init__.py (v2.13). The pieces live in
``graph.py`` (nodes), ``engine.py`` (backward), ``function.py`` (custom Functions),
``grad_mode.py``, ``anomaly_mode.py``, ``gradcheck.py``, ``dot.py`` (DOT export),
``variable.py`` (the legacy ``Variable``), ``functional.py`` (jacobian, hessian, vjp, ...) and
``forward_ad.py`` with ``forward_grad.py`` (forward mode: dual tensors).
"""

from ember.autograd import forward_ad, functional  # noqa: E402  (after grad: it builds on it)
from ember.autograd.anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from ember.autograd.dot import graph_to_dot
from ember.autograd.engine import backward, grad
from ember.autograd.function import Function, FunctionCtx, once_differentiable
from ember.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ember.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from ember.autograd.graph import AccumulateGrad, Node
from ember.autograd.variable import Variable

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "gradcheck", "gradgradcheck",
           "GradcheckError", "Node", "AccumulateGrad",
           "graph_to_dot", "Variable", "functional", "forward_ad"]
