"""Helpers the autograd tests share: run one program with ember and with torch and
compare what it returns or raises.

PyTorch counterpart: none (test helpers; torch is the oracle).
"""

import pytest
import torch

import ember


def both(program):
    """Run ``program(lib)`` with ember and with torch."""
    return program(ember), program(torch)


def assert_same(program):
    ember_result, torch_result = both(program)
    assert ember_result == torch_result


def raised(program, lib):
    """``(exception type, message)`` that ``program(lib)`` raises, "torch" read as "ember"."""
    with pytest.raises(Exception) as info:
        program(lib)
    return info.type, str(info.value).replace("torch", "ember")


def assert_same_error(program):
    ember_type, ember_msg = raised(program, ember)
    torch_type, torch_msg = raised(program, torch)
    assert ember_type is torch_type
    assert ember_msg == torch_msg
