"""torch.profiler: profile with activities, a step schedule and on_trace_ready, over the same
recorder as kiln.autograd.profiler (runtime/dispatch/profiler.h). kiln runs on the CPU only:
ProfilerActivity.CUDA is accepted and records nothing, as torch's CPU-only builds."""
import enum
from functools import partial
import gzip
import json
import os
import socket
import time
import warnings

from ..autograd import profiler as _autograd_profiler
from ..autograd.profiler import record_function
from ..autograd.profiler_util import EventList

__all__ = ["profile", "record_function", "schedule", "ProfilerAction", "ProfilerActivity", "supported_activities",
           "tensorboard_trace_handler", "_KinetoProfile"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    """What this build can record: the CPU (kiln has no CUDA backend)."""
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """torch's step schedule: skip `skip_first` steps, then cycles of `wait` idle steps, `warmup`
    steps and `active` recorded steps (the last one saves), `repeat` times (0: for ever)."""
    def schedule_fn(step):
        assert step >= 0
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    assert wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0, \
        "Invalid profiler schedule arguments"
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results")
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready that writes each trace as `<worker>.<ms>.pt.trace.json[.gz]` in dir_name
    (the file name TensorBoard's profiler plugin reads)."""
    def handler_fn(prof):
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{name}.{time.time_ns() // 1000000}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler_fn


class _KinetoProfile:
    """Start/stop recording and read the results (torch.profiler._KinetoProfile)."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None):
        self.activities = set(activities) if activities else supported_activities()
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.profiler = None
        self._metadata = {}

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def prepare_trace(self):
        self.profiler = _autograd_profiler.profile(record_shapes=self.record_shapes,
                                                   profile_memory=self.profile_memory, with_stack=self.with_stack,
                                                   with_flops=self.with_flops, use_cpu=True)

    def start_trace(self):
        if ProfilerActivity.CPU in self.activities:
            self.profiler.__enter__()

    def stop_trace(self):
        if self.profiler is not None and self.profiler.entered and self.profiler.function_events is None:
            self.profiler.__exit__(None, None, None)

    def export_chrome_trace(self, path):
        assert self.profiler
        if path.endswith(".gz"):
            plain = path[:-3]
            self.profiler.export_chrome_trace(plain)
            with open(plain, "rb") as fin, gzip.open(path, "wb") as fout:
                fout.writelines(fin)
            os.remove(plain)
            return None
        self.profiler.export_chrome_trace(path)
        if self._metadata:
            with open(path) as f:
                trace = json.load(f)
            trace.update(self._metadata)
            with open(path, "w") as f:
                json.dump(trace, f)
        return None

    def events(self):
        assert self.profiler
        return self.profiler.function_events if self.profiler.function_events is not None else EventList()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        assert self.profiler
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n)

    def add_metadata(self, key, value):
        self._metadata[key] = '"' + value.replace('"', '\\"') + '"'

    def add_metadata_json(self, key, value):
        self._metadata[key] = value


class profile(_KinetoProfile):
    """torch.profiler.profile: a context manager whose step() walks the schedule; on_trace_ready is
    called with the profiler each time a recording cycle ends (RECORD_AND_SAVE, or the exit)."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        activities_set = set(activities) if activities else supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead", FutureWarning)
            if use_cuda:
                activities_set.add(ProfilerActivity.CUDA)
        assert len(activities_set) > 0, "No valid profiler activities found"
        super().__init__(activities=activities_set, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules)
        if schedule:
            self.schedule = schedule
            self.record_steps = True  # each step is a ProfilerStep#N scope
        else:
            self.schedule = _default_schedule_fn
            self.record_steps = False
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn = None
        A = ProfilerAction
        self.action_map = {
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [self.prepare_trace],
            (A.NONE, A.RECORD): [self.prepare_trace, self.start_trace],
            (A.NONE, A.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (A.WARMUP, A.NONE): [partial(warnings.warn, "Incorrect schedule: WARMUP followed by NONE"),
                                 self.start_trace, self.stop_trace],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [self.start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [partial(warnings.warn, "Incorrect schedule: RECORD followed by NONE"),
                                 self.stop_trace],
            (A.RECORD, A.WARMUP): [partial(warnings.warn, "Incorrect schedule: RECORD followed by WARMUP"),
                                   self.stop_trace],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [self.stop_trace, self._trace_ready, self.prepare_trace],
            (A.RECORD_AND_SAVE, A.RECORD): [self.stop_trace, self._trace_ready, self.prepare_trace, self.start_trace],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [self.stop_trace, self._trace_ready, self.prepare_trace,
                                                     self.start_trace],
            # at exit
            (A.WARMUP, None): [self.start_trace, self.stop_trace],
            (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
        self._transit_action(self.current_action, None)

    def step(self):
        """Marks the end of a training step: moves along the schedule."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
        prev_action = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev_action, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action):
        for action in self.action_map.get((prev_action, current_action), []):
            action()
