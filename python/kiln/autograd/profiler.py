"""torch.autograd.profiler: the profile context manager and record_function scopes.

While a profile is open, the C++ recorder (runtime/dispatch/profiler.h) notes every operator call
(aten::mm), every autograd node the engine runs (autograd::engine::evaluate_function: MmBackward0,
and the node itself) and every record_function scope, with their times, nesting and, with
record_shapes=True, their tensor arguments' shapes. kiln has no CUDA backend, so the device columns
stay zero; memory is not tracked (profile_memory reports no allocations)."""
import functools

from .. import _C
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg, events_from_records, format_time  # noqa: F401

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


class profile:
    """Records the operators run inside the `with` block; results through key_averages(),
    table(), export_chrome_trace() once the block has ended."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.use_cpu = use_cpu
        self.use_device = "cuda" if use_cuda else use_device
        self.function_events = None
        self.entered = False
        if not enabled:
            return
        if not use_cpu:
            raise AssertionError("Legacy CPU-less profiling is not supported: kiln records CPU events only")

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._start()
        self.entered = True
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return None
        self._stop()
        return None

    def _start(self):
        _C._profiler_start(bool(self.record_shapes))

    def _stop(self):
        self.function_events = events_from_records(_C._profiler_stop())

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def __repr__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self.function_events)

    def __str__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self.function_events)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    def events(self):
        self._check_finish()
        return self.function_events

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total


class record_function:
    """A named scope in the profile (nothing when no profiler runs); a context manager or a decorator."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None

    def __enter__(self):
        self.record = _C._record_function_enter(self.name)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self.run_callbacks_on_exit and self.record is not None:
            record, self.record = self.record, None
            _C._record_function_exit(record)
        return None

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper
