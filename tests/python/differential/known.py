"""Disagreements with torch that are known and not fixed yet. Each entry marks the cases it matches
as strict xfail: while kiln disagrees they xfail; once fixed they XPASS, which fails the run, so the
entry has to be removed. Match by spec key (`ops`), optionally narrowed by `when(case)` (a case has
variant, dtype, grad, args, kwargs, arg_dtypes(), repro()) or by exact case ids (`ids`)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, FrozenSet, Optional, Tuple


@dataclass(frozen=True)
class Known:
    ops: Tuple[str, ...]
    reason: str
    when: Optional[Callable] = None
    ids: FrozenSet[str] = field(default_factory=frozenset)

    def matches(self, case) -> bool:
        if self.ids:
            return case.id in self.ids
        if case.op not in self.ops:
            return False
        return self.when is None or bool(self.when(case))


def src(pattern: str):
    """A predicate: the case's kiln repro matches the regex."""
    rx = re.compile(pattern)
    return lambda c: rx.search(c.repro()) is not None


def ids(*names: str) -> FrozenSet[str]:
    return frozenset(names)


KNOWN_DIVERGENCES = [
]


def known_for(case) -> Optional[Known]:
    for k in KNOWN_DIVERGENCES:
        if k.matches(case):
            return k
    return None
