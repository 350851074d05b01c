"""Targets for the processes test_multiprocessing.py starts: a module of their own that imports no
torch, so a spawned child (which imports its target's module) starts in a fraction of a second."""


def add_one(rank, t):
    t.add_(rank + 1)


def put_back(q_in, q_out):
    t = q_in.get()
    t.mul_(2)
    q_out.put(t.is_shared())


def fail(rank):
    raise ValueError(f"child {rank} failed")


def big_sum(q):
    import kiln
    b = kiln.ones(4_000_000)
    q.put(float((b * 2).sum()))
