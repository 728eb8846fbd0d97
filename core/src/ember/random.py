"""Random number generation: ``ember.Generator``, ``ember.manual_seed``, the default generator.

PyTorch counterpart: torch/random.py and aten/src/ATen/CPUGeneratorImpl.cpp (v2.13).

A Generator wraps NumPy's PCG64 bit generator on the host; backends receive the
numbers drawn there, so one seed gives the same tensors on every device. ember does
not reproduce PyTorch's Mersenne-Twister stream: same seed, different numbers.
"""

import json

import numpy as np


class Generator:
    """A source of random numbers with its own state (``torch.Generator``)."""

    def __init__(self, device="cpu"):
        from ember.device import device as Device

        self.device = Device(device)
        self._seed = 67280421310721  # PyTorch's default seed, for familiarity
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        """Reset the stream to the one ``seed`` starts; returns the generator."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(2 ** 63) <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        seed &= 0xFFFF_FFFF_FFFF_FFFF  # a negative seed is its 64-bit two's complement, as in PyTorch
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
        """The generator's state as a uint8 tensor (the bytes of NumPy's PCG64 state in
        JSON; not PyTorch's layout), for ``set_state``."""
        from ember.native.factory import tensor

        state = json.dumps(self._rng.bit_generator.state).encode()
        return tensor(np.frombuffer(state, dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state returned by ``get_state``; returns the generator."""
        from ember.tensor import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected an ember.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype.name != "uint8":
            raise TypeError("RNG state must be an ember.ByteTensor")
        try:
            state = json.loads(bytes(new_state.tolist()).decode())
            self._rng.bit_generator.state = state
        except (ValueError, TypeError, KeyError) as error:
            raise RuntimeError(f"Invalid RNG state: it was not made by Generator.get_state ({error})") from None
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
