"""``ember.Generator``: PyTorch's CPU random engine, a 32-bit Mersenne Twister (MT19937).

PyTorch counterpart: aten/src/ATen/CPUGeneratorImpl.cpp and
aten/src/ATen/core/MT19937RNGEngine.h (v2.13).

The engine is NumPy's ``MT19937`` bit generator, which is the same algorithm as
PyTorch's: seeded the same way (NOTE [ Seeding the Mersenne Twister ]), it yields the
same stream of 32-bit words. A generator hands out words (``random``, PyTorch's
``CPUGeneratorImpl::random``) and pairs of words (``random64``); ember/native/
transformations.py turns them into floats, normals, integers and permutations exactly as
ATen's CPU kernels do, so ``ember.manual_seed(s)`` followed by ``ember.randn(...)`` gives
the numbers ``torch.manual_seed(s); torch.randn(...)`` gives.

``get_state`` returns PyTorch's 5056-byte state layout (NOTE [ The state tensor ]), so a
state taken from torch with ``torch.get_rng_state()`` can be loaded here and the other
way round. The generator draws on the host; every device receives the same numbers.
"""

import numpy as np

# NOTE [ Seeding the Mersenne Twister ]
# PyTorch keeps the 64-bit seed (``initial_seed`` returns it) but fills the 624-word
# state from its low 32 bits with Knuth's recurrence (MT19937's reference
# ``init_genrand``): state[0] = seed, state[j] = 1812433253 * (state[j-1] ^
# (state[j-1] >> 30)) + j (mod 2**32). No word is drawn at seeding time: the first
# draw regenerates the whole block ("twists") and returns its first word, tempered.
# NumPy's MT19937 expresses "the block is used up, twist before the next draw" as
# position 624, so a freshly seeded engine is (that key, position 624).

_STATE_WORDS = 624
_DEFAULT_SEED = 67280421310721  # torch.Generator()'s seed before manual_seed


def _seeded_key(seed):
    """The 624-word MT19937 state PyTorch builds from ``seed`` (its low 32 bits)."""
    key = np.empty(_STATE_WORDS, dtype=np.uint32)
    word = seed & 0xFFFF_FFFF
    key[0] = word
    for j in range(1, _STATE_WORDS):
        word = (1812433253 * (word ^ (word >> 30)) + j) & 0xFFFF_FFFF
        key[j] = word
    return key


# NOTE [ The state tensor ]
# ``torch.get_rng_state()`` is the bytes of a C struct (x86-64 layout, little-endian):
#   uint64 initial seed | int32 left | int32 seeded | uint64 next | uint64 state[624]
#   | float64 normal_x | float64 normal_y (the cached Box-Muller normal) | float64 rho
#   | int32 normal_is_valid | 4 bytes padding | float32 cached float normal
#   | bool its validity | 3 bytes padding                            = 5056 bytes.
# ``left`` counts the words still unread in the block plus one and ``next`` is the
# index of the next word: NumPy's position is 625 - left (a fresh seed has left = 1,
# next = 0, position 624).
_STATE_DTYPE = np.dtype([("seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"),
                         ("state", "<u8", (_STATE_WORDS,)), ("normal_x", "<f8"), ("normal_y", "<f8"),
                         ("normal_rho", "<f8"), ("normal_is_valid", "<i4"), ("pad0", "<i4"),
                         ("float_normal", "<f4"), ("float_normal_is_valid", "u1"), ("pad1", "u1", (3,))])
STATE_SIZE = _STATE_DTYPE.itemsize  # 5056, sizeof(CPUGeneratorImplState)


class Generator:
    """A source of random numbers with its own state (``torch.Generator``).

    >>> import ember
    >>> g = ember.Generator().manual_seed(0)
    >>> ember.rand(3, generator=g)  # torch.rand(3, generator=torch.Generator().manual_seed(0))
    tensor([0.4963, 0.7682, 0.0885])
    """

    def __init__(self, device="cpu"):
        from ember.device import device as Device

        self.device = Device(device)
        self._bits = np.random.MT19937()
        self._numpy = np.random.Generator(self._bits)
        self.manual_seed(_DEFAULT_SEED)

    # --- seeding ---------------------------------------------------------------------

    def manual_seed(self, seed):
        """Reset the stream to the one ``seed`` starts; returns the generator."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(2 ** 63) <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        seed &= 0xFFFF_FFFF_FFFF_FFFF  # a negative seed is its 64-bit two's complement, as in PyTorch
        self._seed = seed
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": _seeded_key(seed), "pos": _STATE_WORDS}}
        self._fresh = True  # PyTorch reports next = 0 until the first draw
        # Box-Muller makes normals in pairs; the scalar path keeps the second for the
        # next call (CPUGeneratorImpl::next_double_normal_sample). Seeding drops it.
        self.next_double_normal = None
        self.next_float_normal = None
        return self

    def seed(self):
        """Reseed from the OS and return the new seed."""
        seed = int(np.random.SeedSequence().entropy) & 0xFFFF_FFFF_FFFF_FFFF
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        return self._seed

    # --- draws -------------------------------------------------------------------------

    def random(self, n):
        """``n`` 32-bit words (PyTorch's ``random()``), as a uint64 array."""
        if n:
            self._fresh = False
        return self._bits.random_raw(n)

    def random64(self, n):
        """``n`` 64-bit words, each two 32-bit draws, the first the high half
        (PyTorch's ``random64()``), as a uint64 array."""
        words = self.random(2 * n)
        return (words[0::2] << np.uint64(32)) | words[1::2]

    @property
    def numpy(self):
        """A ``numpy.random.Generator`` over this generator's stream, for code that wants
        NumPy's samplers (drawing through it advances this generator; its numbers follow
        NumPy's transformations, not PyTorch's)."""
        self._fresh = False
        return self._numpy

    # --- state ---------------------------------------------------------------------------

    def get_state(self):
        """The generator's state as PyTorch's 5056-byte uint8 tensor (NOTE [ The state tensor ])."""
        from ember.native.factory import tensor

        engine = self._bits.state["state"]
        record = np.zeros((), dtype=_STATE_DTYPE)
        record["seed"] = self._seed
        record["left"] = _STATE_WORDS + 1 - engine["pos"]
        record["seeded"] = 1
        record["next"] = 0 if self._fresh else engine["pos"]
        record["state"] = engine["key"]
        if self.next_double_normal is not None:
            record["normal_is_valid"] = 1
            record["normal_y"] = self.next_double_normal
        if self.next_float_normal is not None:
            record["float_normal_is_valid"] = 1
            record["float_normal"] = self.next_float_normal
        return tensor(np.frombuffer(record.tobytes(), dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state from ``get_state`` (ember's or PyTorch's); returns the generator."""
        from ember.tensor import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected an ember.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype.name != "uint8":
            raise TypeError("RNG state must be an ember.ByteTensor")
        if new_state.numel() != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input RNG "
                               f"state size to be {new_state.numel()}")
        record = np.frombuffer(np.ascontiguousarray(new_state._host()).tobytes(), dtype=_STATE_DTYPE)[0]
        left, next_word = int(record["left"]), int(record["next"])
        if not (record["seeded"] and 0 < left <= _STATE_WORDS and next_word <= _STATE_WORDS):
            raise RuntimeError("Invalid mt19937 state")
        key = record["state"].astype(np.uint32)  # PyTorch stores each 32-bit word in 64 bits
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": _STATE_WORDS + 1 - left}}
        self._seed = int(record["seed"])
        self._fresh = left == 1 and next_word == 0
        self.next_double_normal = float(record["normal_y"]) if record["normal_is_valid"] else None
        self.next_float_normal = float(record["float_normal"]) if record["float_normal_is_valid"] else None
        return self

    def clone_state(self):
        """An independent generator in the same state (PyTorch's ``clone``)."""
        return Generator(self.device).set_state(self.get_state())
