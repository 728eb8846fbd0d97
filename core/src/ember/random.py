"""The default generator and the module-level seeding functions (``ember.manual_seed``).

PyTorch counterpart: torch/random.py (v2.13).

The generator itself (PyTorch's Mersenne Twister, same seed, same stream) lives in
ember/generator.py; how its words become floats, normals, integers and permutations is
in ember/native/random/transformations.py.
"""

from ember.generator import Generator

default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator; returns it, like ``torch.manual_seed``."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state: PyTorch's 5056-byte layout (see ember/generator.py)."""
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def generator_or_default(generator):
    return default_generator if generator is None else generator


__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "generator_or_default"]
