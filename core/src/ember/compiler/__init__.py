"""``ember.compiler``: the machinery behind ``ember.compile`` (capture, passes, executor).

PyTorch counterpart: torch/_inductor/__init__.py (v2.13).
"""

from ember.compiler.compile import CompiledModule, compile, optimise

__all__ = ["CompiledModule", "compile", "optimise"]
