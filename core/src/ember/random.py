"""Random number generation: ``ember.Generator``, ``ember.manual_seed``, the default generator.

PyTorch counterpart: torch/random.py and aten/src/ATen/CPUGeneratorImpl.cpp (v2.13).

A Generator wraps NumPy's PCG64 bit generator on the host; backends receive the
numbers drawn there, so one seed gives the same tensors on every device. ember does
not reproduce PyTorch's Mersenne-Twister stream: same seed, different numbers.
"""

import numpy as np


class Generator:
    """A source of random numbers with its own state (``torch.Generator``)."""

    def __init__(self, device="cpu"):
        from ember.device import device as Device

        self.device = Device(device)
        self._seed = 67280421310721  # PyTorch's default seed, for familiarity
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < 0:
            seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self):
        """Reseed from the OS and return the new seed."""
        seed = int(np.random.SeedSequence().entropy) & 0xFFFF_FFFF_FFFF_FFFF
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        from ember.native.factory import tensor

        state = repr(self._rng.bit_generator.state).encode()
        return tensor(np.frombuffer(state, dtype=np.uint8).copy())

    def set_state(self, state):
        import ast

        raw = bytes(state.numpy().tolist())
        self._rng.bit_generator.state = ast.literal_eval(raw.decode())
        return self

    @property
    def numpy(self):
        """The underlying ``numpy.random.Generator`` (for kernels that draw numbers)."""
        return self._rng


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator; returns it, like ``torch.manual_seed``."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def generator_or_default(generator):
    return default_generator if generator is None else generator
