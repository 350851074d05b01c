"""The default generator's functions, as torch.random: kiln.manual_seed, seed, initial_seed,
get_rng_state and set_rng_state act on kiln.default_generator, which every random op draws from
unless it is given generator=.

Generator states are 1-D int64 tensors (torch's are uint8, a dtype kiln does not have): the
initial seed, the position in the state, then the 312 words of the Mersenne Twister.
"""
from ._C import Generator, default_generator

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state"]


def manual_seed(seed):
    """Seeds the default generator and returns it. Any int in [-2**63, 2**64) (a negative one is
    taken as its 64-bit pattern); like torch, other numbers go through int() first."""
    return default_generator.manual_seed(int(seed))


def seed():
    """Seeds the default generator with a non-deterministic number and returns that number."""
    return default_generator.seed()


def initial_seed():
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state, an int64 tensor for set_rng_state."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restores the default generator's state from get_rng_state()."""
    default_generator.set_state(new_state)
