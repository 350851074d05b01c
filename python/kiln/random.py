"""The default generator's functions, as torch.random: kiln.manual_seed, seed, initial_seed,
get_rng_state and set_rng_state act on kiln.default_generator, which every random op draws from
unless it is given generator=.

kiln's CPU generator is torch's: the same 32-bit Mersenne Twister, seeded the same way, and every
random op draws from it as torch's CPU kernels do, so ``kiln.manual_seed(s)`` followed by the same
calls gives the numbers ``torch.manual_seed(s)`` gives (torch 1.13 on the CPU; see README).

A generator's state is torch's state byte for byte: ``get_rng_state()`` is a uint8 tensor of 5056
bytes (the seed, the Mersenne Twister's 624 words and position, the cached normal values), as
torch's, so states move between the two directly::

    torch.set_rng_state(torch.from_numpy(kiln.get_rng_state().numpy()))
    kiln.set_rng_state(kiln.from_numpy(torch.get_rng_state().numpy()))

set_state checks what torch checks (5056 values, a valid engine position). It also takes the int64
tensor of the same byte values that kiln returned before it had uint8, so saved states still load.
"""
import contextlib

from ._C import Generator, default_generator

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "fork_rng"]


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
    """The default generator's state: torch's 5056 state bytes, as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restores the default generator's state from get_rng_state() (or torch's state bytes)."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices"):
    """Restores the default generator's state on leaving the block, as torch.random.fork_rng.
    `devices` names CUDA devices whose generators are forked too (kiln.cuda's, when it has any)."""
    if not enabled:
        yield
        return
    devices = [] if devices is None else list(devices)
    from . import cuda
    cpu_state = get_rng_state()
    cuda_states = [cuda.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, cuda_states):
            cuda.set_rng_state(state, d)
