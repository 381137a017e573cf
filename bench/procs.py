"""CPU time and memory of a process tree, read from /proc (Linux), for the benchmarks.

On a shared machine wall times are noisy; the CPU seconds each part of a run used (Spark's JVM, the Python
workers, the driver-side Python processes, the broker) are much less so, and they show where the work is.
Spark starts and kills Python processes during a query (the source's runner, planning workers), so the
tree is sampled in a thread and the last sample of a process that exited still counts.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")
# A process that used less CPU than this in a run did no work in it (e.g. workers left from earlier runs).
_BUSY_SECONDS = 0.05


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    cpu: float  # user + system seconds
    rss: int  # bytes
    command: str


def snapshot() -> dict[int, Proc]:
    """Every process we may read, by pid."""
    procs = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as handle:
                stat = handle.read()
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        procs[int(name)] = Proc(
            pid=int(name),
            ppid=int(fields[1]),
            cpu=(int(fields[11]) + int(fields[12])) / _TICKS,
            rss=int(fields[21]) * _PAGE,
            command=command,
        )
    return procs


def high_water_mark(pid: int) -> int:
    """Peak RSS of a process so far, in bytes (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def descendants(root: int, procs: dict[int, Proc]) -> list[int]:
    children: dict[int, list[int]] = {}
    for proc in procs.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def role(proc: Proc, procs: dict[int, Proc]) -> str:
    """What a process of a PySpark application is: jvm, python-worker (runs tasks: `read()`, `write()`),
    python-daemon (forks workers), python-driver-side (the streaming source runner, planning workers) or
    driver (the application's own Python process)."""
    if "java" in os.path.basename(proc.command.split(" ", 1)[0]):
        return "jvm"
    if "pyspark.daemon" in proc.command:
        parent = procs.get(proc.ppid)
        if parent is None or "pyspark.daemon" not in parent.command:
            return "python-daemon"
        # Spark 4 runs one daemon per worker module; `pyspark.worker` is the one that runs tasks
        return "python-worker" if proc.command.endswith("pyspark.daemon pyspark.worker") else "python-driver-side"
    if "pyspark" in proc.command:
        return "python-driver-side"
    return "driver"


@dataclass
class Usage:
    """CPU seconds per role over a measured interval, and the peak RSS of any one Python worker that did
    some work in it."""

    cpu: dict[str, float] = field(default_factory=dict)
    peak_worker_rss: int = 0
    worker_hwm: int = 0  # VmHWM: the highest RSS of those workers over their lifetime, not just this interval

    @property
    def total_cpu(self) -> float:
        return sum(self.cpu.values())


class Monitor:
    """Samples the process tree under `root` (and the `extra` pids, e.g. the broker) every `interval` s.

    with Monitor(os.getpid(), extra={"broker": broker_pid}) as usage:
        run()
    usage.cpu, usage.peak_worker_rss
    """

    def __init__(self, root: int, extra: dict[str, int] | None = None, interval: float = 0.05) -> None:
        self.root = root
        self.extra = extra or {}
        self.interval = interval
        self.usage = Usage()
        self._start: dict[int, float] = {}
        self._last: dict[int, tuple[str, float]] = {}
        self._peak: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Usage:
        procs = snapshot()
        self._start = {pid: proc.cpu for pid, proc in procs.items()}
        self._sample(procs)
        self._thread.start()
        return self.usage

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample(snapshot())
        cpu: dict[str, float] = {}
        for pid, (name, seconds) in self._last.items():
            used = seconds - self._start.get(pid, 0.0)
            if used <= 0:
                continue
            cpu[name] = cpu.get(name, 0.0) + used
            if used < _BUSY_SECONDS:
                continue  # an idle worker's housekeeping: its memory is not this run's
            if name == "python-worker":
                self.usage.peak_worker_rss = max(self.usage.peak_worker_rss, self._peak[pid])
                self.usage.worker_hwm = max(self.usage.worker_hwm, high_water_mark(pid))
        self.usage.cpu = cpu

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample(snapshot())

    def _sample(self, procs: dict[int, Proc]) -> None:
        for pid in descendants(self.root, procs):
            proc = procs[pid]
            known = self._last.get(pid)
            name = known[0] if known and not proc.command else role(proc, procs)  # an exiting process has no cmdline
            self._last[pid] = (name, proc.cpu)
            self._peak[pid] = max(self._peak.get(pid, 0), proc.rss)
        for name, pid in self.extra.items():
            if pid in procs:
                self._last[pid] = (name, procs[pid].cpu)
