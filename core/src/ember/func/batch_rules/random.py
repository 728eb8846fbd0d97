"""What the ``randomness`` modes mean for ops that draw random numbers.

PyTorch counterpart: aten/src/ATen/functorch/BatchRulesRandomness.cpp
(``RandomnessType``: Error, Same, Different) (v2.13).

ember draws random numbers in Python, before the op (the dropout mask, the samples
of ``bernoulli`` and ``normal`` travel as attributes), so "error" is also checked
after the function returns (the generator must not have moved: ember/func/vmap.py).
"""

from ember.func.batch_rules import register

ERROR_MESSAGE = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def refuse_random(info):
    if info.randomness == "error":
        raise RuntimeError(ERROR_MESSAGE)


@register("aten::bernoulli", "aten::normal")
def random_samples(op, inputs, attrs, info):
    """The samples were drawn for one sample's shape: "same" uses them for every sample,
    as torch's "same" does; "different" takes the loop (one draw per sample would need
    the draw itself batched, which the Python front end does for one shape)."""
    refuse_random(info)
    return NotImplemented
