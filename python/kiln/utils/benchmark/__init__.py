"""kiln.utils.benchmark: torch.utils.benchmark's Timer and Measurement for Python statements (the language
torch's Timer defaults to), so micro-benchmark snippets written for torch run: Timer(stmt, setup, globals,
num_threads, label / sub_label / description).timeit(number), blocked_autorange(min_run_time) and
adaptive_autorange(threshold); a Measurement reports mean, median, iqr, times, number_per_run and a summary.
The statement runs with kiln's thread count set to num_threads, as torch's Timer does."""
import statistics
import textwrap
import timeit as _timeit
from time import perf_counter

import kiln

__all__ = ["Timer", "Measurement"]


class Measurement:
    """The per-run times of a statement: raw_times are totals over number_per_run runs each."""

    def __init__(self, number_per_run, raw_times, stmt="pass", setup="pass", label=None, sub_label=None,
                 description=None, num_threads=1):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.stmt, self.setup = stmt, setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.num_threads = num_threads
        self.metadata = None

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self):
        return statistics.mean(self.times)

    @property
    def median(self):
        return statistics.median(self.times)

    @property
    def iqr(self):
        times = sorted(self.times)
        if len(times) < 2:
            return 0.0
        q = statistics.quantiles(times, n=4, method="inclusive")
        return q[2] - q[0]

    @property
    def has_warnings(self):
        return len(self.times) > 1 and self.median > 0 and self.iqr / self.median > 0.1

    @property
    def title(self):
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        return self.stmt

    def meets_confidence(self, threshold=0.1):
        return len(self.times) > 1 and self.median > 0 and self.iqr / self.median < threshold

    def __repr__(self):
        unit, scale = min(((u, s) for u, s in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0))
                           if self.median >= s), key=lambda p: -p[1], default=("ns", 1e-9))
        lines = [f"<{type(self).__module__}.{type(self).__name__} object at {hex(id(self))}>", self.title]
        if self.description:
            lines.append(self.description)
        if self.setup != "pass":
            lines.append("setup: " + self.setup)
        n = len(self.times)
        if n == 1:
            lines.append(f"  {self.median / scale:.2f} {unit}")
        else:
            lines.append(f"  Median: {self.median / scale:.2f} {unit}")
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({len(self.times)} measurements)")
        runs = f"{self.number_per_run} runs" + (" per measurement" if n > 1 else " ")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {runs}, {self.num_threads} thread"
                     f"{'s' if self.num_threads > 1 else ''}")
        return "\n".join(lines)


class Timer:
    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=perf_counter, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language="python"):
        if str(language).lower() not in ("python", "language.python"):
            raise ValueError("kiln's Timer runs Python statements only")
        self._stmt = textwrap.dedent(stmt) if isinstance(stmt, str) else stmt
        self._setup = textwrap.dedent(setup) if isinstance(setup, str) else setup
        self._globals = dict(globals or {})
        self._timer = _timeit.Timer(stmt=self._stmt, setup=self._setup, timer=timer, globals=self._globals)
        self._label, self._sub_label, self._description = label, sub_label, description
        self._num_threads = num_threads

    def _run(self, number):
        previous = kiln.get_num_threads()
        kiln.set_num_threads(self._num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            kiln.set_num_threads(previous)

    def _measurement(self, number, times):
        return Measurement(number, times, stmt=self._stmt, setup=self._setup, label=self._label,
                           sub_label=self._sub_label, description=self._description, num_threads=self._num_threads)

    def timeit(self, number=1000000):
        self._run(max(number // 100, 2))  # warm-up, as torch's
        return self._measurement(number, [self._run(number)])

    def _estimate_block_size(self, min_run_time):
        """Runs per measurement: grown by tens until the timer's own overhead is under 1e-4 of a block and a
        block takes at least min_run_time / 1000 (torch's rule)."""
        overhead = statistics.median([-(perf_counter() - perf_counter()) for _ in range(101)])
        number = 1
        while True:
            taken = self._run(number)
            if (overhead <= 1e-4 * taken and taken >= min_run_time / 1000) or taken > min_run_time:
                return number
            if number * 10 > 10 ** 7:
                return number
            number *= 10

    def _blocks(self, number, run_time, callback, done=lambda times, total: False):
        """Times blocks of `number` runs until `run_time` seconds were spent or done(times, total)."""
        times, total = [], 0.0
        while total < run_time:
            t = self._run(number)
            times.append(t)
            total += t
            if callback is not None:
                callback(number, t)
            if done(times, total):
                break
        return self._measurement(number, times)

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        return self._blocks(self._estimate_block_size(min_run_time), min_run_time, callback)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        number = self._estimate_block_size(min_run_time=0.05)

        def confident(times, total):
            return (total >= min_run_time and len(times) > 3
                    and self._measurement(number, times).meets_confidence(threshold))
        return self._blocks(number, max_run_time, callback, confident)
