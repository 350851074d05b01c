"""torch.multiprocessing.spawn: runs fn(i, *args) in nprocs new processes and, with join, waits for
them, raising ProcessRaisedException with the child's traceback when one fails."""
import multiprocessing
import traceback


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child raised: its traceback is in the message."""


class ProcessExitedException(ProcessException):
    """A child exited with a non-zero code (a signal, os._exit) without raising."""

    def __init__(self, msg, error_index, pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """True once every process ended well; raises for the first that failed (the others are stopped)."""
        for p in self.processes:
            p.join(timeout)
        if any(p.exitcode is None for p in self.processes):
            return False
        for i, p in enumerate(self.processes):
            if p.exitcode != 0:
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                if not self.error_queues[i].empty():
                    raise ProcessRaisedException(
                        f"\n\n-- Process {i} terminated with the following error:\n{self.error_queues[i].get()}", i, p.pid)
                raise ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i, p.pid,
                                             p.exitcode)
        return True


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    ctx = multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        processes.append(p)
        error_queues.append(q)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    return start_processes(fn, args, nprocs, join, daemon, start_method)
