"""OpenJDK 17's java.util.SplittableRandom, bit for bit, so that the Nexmark port draws Java's numbers.

Only what Nexmark's generator calls is here: the seeded constructor, the unseeded one (`DefaultGen`), nextInt(),
nextInt(bound), nextLong() and nextDouble(). Internal state is kept as unsigned 64-bit integers; results are
Java's signed values.
"""

from __future__ import annotations

_MASK64 = (1 << 64) - 1
_MASK32 = (1 << 32) - 1
_INT_MAX = (1 << 31) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15


def _mix64(z: int) -> int:
    """SplittableRandom.mix64 (David Stafford's variant 13 of MurmurHash3's finalizer)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _mix_gamma(z: int) -> int:
    """SplittableRandom.mixGamma: an odd gamma with enough bit transitions."""
    z &= _MASK64
    z = ((z ^ (z >> 33)) * 0xFF51AFD7ED558CCD) & _MASK64
    z = ((z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53) & _MASK64
    z = (z ^ (z >> 33)) | 1
    transitions = (z ^ (z >> 1)).bit_count()
    return z ^ 0xAAAAAAAAAAAAAAAA if transitions < 24 else z


def _signed32(value: int) -> int:
    """Java's int of 32 unsigned bits."""
    return value - (1 << 32) if value > _INT_MAX else value


class SplittableRandom:
    """java.util.SplittableRandom: `SplittableRandom(seed)` is Java's `new SplittableRandom(seed)`."""

    __slots__ = ("_gamma", "_seed")

    def __init__(self, seed: int, gamma: int = GOLDEN_GAMMA) -> None:
        """`gamma`: Java's private SplittableRandom(long seed, long gamma), which `DefaultGen` uses."""
        self._seed = seed & _MASK64
        self._gamma = gamma & _MASK64

    def _next_int_unsigned(self) -> int:
        """mix32(nextSeed()) as an unsigned 32-bit value (Java's int bits)."""
        self._seed = z = (self._seed + self._gamma) & _MASK64
        z = ((z ^ (z >> 33)) * 0x62A9D9ED799705F5) & _MASK64
        return (((z ^ (z >> 28)) * 0xCB24D0A5C88C35B3) & _MASK64) >> 32

    def next_int(self) -> int:
        """SplittableRandom.nextInt(): a signed 32-bit value."""
        return _signed32(self._next_int_unsigned())

    def next_int_below(self, bound: int) -> int:
        """RandomGenerator.nextInt(bound) = RandomSupport.boundedNextInt: [0, bound), rejecting biased draws."""
        if bound <= 0 or bound > _INT_MAX:
            raise ValueError(f"bound must be a positive Java int, got {bound}")
        m = bound - 1
        # _next_int_unsigned() inlined: the generator's hottest path
        self._seed = z = (self._seed + self._gamma) & _MASK64
        z = ((z ^ (z >> 33)) * 0x62A9D9ED799705F5) & _MASK64
        r = (((z ^ (z >> 28)) * 0xCB24D0A5C88C35B3) & _MASK64) >> 32
        if bound & m == 0:  # a power of two: the low bits
            return r & m
        u = r >> 1
        # Java's `u + m - (r = u % bound) < 0`: the int sum overflows for the over-represented candidates.
        while u + m - (r := u % bound) > _INT_MAX:
            u = self._next_int_unsigned() >> 1
        return r

    def next_long(self) -> int:
        """SplittableRandom.nextLong(): a signed 64-bit value."""
        self._seed = (self._seed + self._gamma) & _MASK64
        z = _mix64(self._seed)
        return z - (1 << 64) if z >> 63 else z

    def next_double(self) -> float:
        """RandomGenerator.nextDouble(): (nextLong() >>> 11) * 2^-53."""
        self._seed = (self._seed + self._gamma) & _MASK64
        return (_mix64(self._seed) >> 11) * 2.0**-53


class DefaultGen:
    """SplittableRandom's static `defaultGen`, from which Java's unseeded `new SplittableRandom()` draws.

    Java starts that counter from the clock (RandomSupport.initialSeed()); here it starts at `seed`, which makes
    every "unseeded" random of Nexmark's generator a function of the seed. That is the port's one intended
    difference from Java, and a JVM whose `defaultGen` is set to the same value draws the very same numbers.
    """

    __slots__ = ("_next",)

    def __init__(self, seed: int) -> None:
        self._next = seed & _MASK64

    def new_random(self) -> SplittableRandom:
        """`new SplittableRandom()`: s = defaultGen.getAndAdd(2 * GOLDEN_GAMMA); seed mix64(s), gamma
        mixGamma(s + GOLDEN_GAMMA)."""
        s = self._next
        self._next = (s + 2 * GOLDEN_GAMMA) & _MASK64
        return SplittableRandom(_mix64(s), _mix_gamma(s + GOLDEN_GAMMA))
