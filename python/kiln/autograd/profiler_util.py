"""The profiler's results as torch.autograd.profiler_util shapes them: one FunctionEvent per
recorded call (times in microseconds), an EventList with key_averages(), table() and
export_chrome_trace(), and FunctionEventAvg for the averages. The events come from the C++
recorder (runtime/dispatch/profiler.h) through kiln._C._profiler_stop()."""
import json
from collections import defaultdict

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "format_time", "format_time_share"]


def format_time(time_us):
    """torch's rendering of a time in microseconds: 1.234ms, 12.000us, 1.500s."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        assert time_us == 0, f"Expected time_us == 0 but got {time_us}"
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


class Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


class FormattedTimesMixin:
    """cpu_time_str & co, as torch's: the times formatted."""

    @property
    def cpu_time_str(self):
        return format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return format_time(self.self_cpu_time_total)

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    # kiln has no CUDA backend: device times are zero, as torch's for CPU-only runs.
    cuda_time = cuda_time_total = self_cuda_time_total = 0.0
    device_time = device_time_total = self_device_time_total = 0.0


class FunctionEvent(FormattedTimesMixin):
    """One recorded call: an operator (aten::mm), an autograd node, or a user scope."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, cpu_parent=None):
        self.id = id
        self.node_id = -1
        # Steps aggregate under one name in the tables; the trace keeps each step's number.
        self.name = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
        self.trace_name = name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = None
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = cpu_parent
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = []
        self.scope = 0
        self.use_device = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = self.cuda_memory_usage = 0
        self.is_async = False
        self.is_remote = False
        self.sequence_nr = -1
        self.device_type = "cpu"
        self.device_index = 0
        self.is_legacy = False
        self.flops = None
        self.is_user_annotation = not (name.startswith("aten::") or name.startswith("autograd::") or
                                       name.endswith("Backward0") or name.startswith("ProfilerStep#"))

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} input_shapes={self.input_shapes}>")


class FunctionEventAvg(FormattedTimesMixin):
    """The sum over the events of one key (and, when grouped so, one input shape)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.self_cpu_time_total = 0
        self.input_shapes = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.cuda_memory_usage = 0
        self.cpu_parent = None
        self.device_type = "cpu"
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = False

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.cpu_parent = other.cpu_parent
            self.is_user_annotation = other.is_user_annotation
        assert isinstance(other, (FunctionEvent, FunctionEventAvg))
        assert other.key == self.key
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.count += other.count
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with torch's summaries."""

    def __init__(self, *args, **kwargs):
        kwargs.pop("use_cuda", None)
        kwargs.pop("use_device", None)
        kwargs.pop("profile_memory", None)
        kwargs.pop("with_flops", None)
        super().__init__(*args)

    @property
    def self_cpu_time_total(self):
        return sum(evt.self_cpu_time_total for evt in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        return _build_table(self, sort_by=sort_by, row_limit=row_limit, max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            top_level_events_only=top_level_events_only)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        stats = defaultdict(FunctionEventAvg)
        for evt in self:
            key = (evt.key, str(evt.input_shapes)) if group_by_input_shapes else (evt.key,)
            stats[key].add(evt)
        return EventList(stats.values())

    def total_average(self):
        total = FunctionEventAvg()
        for evt in self:
            total.cpu_time_total += evt.cpu_time_total
            total.self_cpu_time_total += evt.self_cpu_time_total
            total.count += evt.count
        total.key = "Total"
        return total

    def export_chrome_trace(self, path):
        """The events as a Chrome trace (chrome://tracing, Perfetto): complete events in microseconds."""
        trace = {"traceEvents": [
            {"name": evt.trace_name, "ph": "X", "cat": "user_annotation" if evt.is_user_annotation else "cpu_op",
             "ts": evt.time_range.start, "dur": evt.time_range.elapsed_us(), "pid": "CPU functions",
             "tid": evt.thread, "args": {"Input Dims": evt.input_shapes} if evt.input_shapes else {}}
            for evt in self if isinstance(evt, FunctionEvent)]}
        with open(path, "w") as f:
            json.dump(trace, f)


def events_from_records(records):
    """FunctionEvents from _C._profiler_stop()'s tuples, with their parents and children linked;
    times relative to the first event, in microseconds."""
    if not records:
        return EventList()
    origin = min(r[1] for r in records)
    events = []
    for i, (name, start_ns, end_ns, parent, thread, shapes) in enumerate(records):
        evt = FunctionEvent(i + 1, name, thread, (start_ns - origin) / 1e3, (end_ns - origin) / 1e3, input_shapes=shapes)
        if parent >= 0:
            evt.set_cpu_parent(events[parent])
            events[parent].append_cpu_child(evt)
        events.append(evt)
    return EventList(events)


def _build_table(events, sort_by=None, row_limit=100, max_name_column_width=55, max_shapes_column_width=80,
                 header=None, top_level_events_only=False):
    """torch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, # of Calls
    (and Input Shapes when the events carry them), then the total self CPU time."""
    if len(events) == 0:
        return ""
    rows = list(events)
    if sort_by is not None:
        rows = sorted(rows, key=lambda evt: getattr(evt, sort_by), reverse=True)
    if top_level_events_only:
        rows = [evt for evt in rows if evt.cpu_parent is None]
    rows = rows[:row_limit] if row_limit is not None and row_limit > 0 else rows
    has_shapes = any(len(evt.input_shapes or []) > 0 for evt in events)
    name_width = min(max([len(evt.key) for evt in events] + [4]) + 4, max_name_column_width)
    shapes_width = min(max([len(str(evt.input_shapes)) for evt in events] + [12]) + 4, max_shapes_column_width)
    columns = [("Name", name_width), ("Self CPU %", 12), ("Self CPU", 12), ("CPU total %", 12), ("CPU total", 12),
               ("CPU time avg", 12), ("# of Calls", 12)]
    if has_shapes:
        columns.append(("Input Shapes", shapes_width))
    spacing = 2
    line = "".join("-" * width + " " * spacing for _, width in columns)
    fmt = "".join(("{:<" if i == len(columns) - 1 and has_shapes else "{:>") + str(width) + "}" + " " * spacing
                  for i, (_, width) in enumerate(columns))

    def trim(text, width):
        return text if len(text) <= width else text[:width - 3] + "..."

    # The share of each event is of the whole recording's self time (every event's, not only the rows').
    total = sum(evt.self_cpu_time_total for evt in events)
    out = []
    if header is not None:
        out += ["=" * len(line), header]
    out += [line, fmt.format(*[name for name, _ in columns]), line]
    for evt in rows:
        cells = [trim(evt.key, name_width), format_time_share(evt.self_cpu_time_total, total),
                 format_time(evt.self_cpu_time_total), format_time_share(evt.cpu_time_total, total),
                 format_time(evt.cpu_time_total), format_time(evt.cpu_time), str(evt.count)]
        if has_shapes:
            cells.append(trim(str(evt.input_shapes), shapes_width))
        out.append(fmt.format(*cells))
    out += [line, f"Self CPU time total: {format_time(total)}", ""]
    return "\n".join(out)
