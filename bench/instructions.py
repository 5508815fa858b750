"""Instructions the calling thread retires in user space, read from Linux's perf_event_open(2).

CPU seconds on this shared 2-core box move by a fifth between two runs of the same code, and
by as much between the rounds of one run, so a change worth 5 % hides in them. The count of
instructions a piece of code executes barely moves with the machine's load: benchmarks that
compare two trees print it next to the seconds (``bench/stages.py``). It leaves out what the
kernel does for the thread (system calls, page faults) and what other threads do (RocksDB's
flushes and compactions), and an instruction that waits on memory counts as one.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys
import weakref
from collections.abc import Callable
from pathlib import Path

_SYSCALL = {"x86_64": 298, "aarch64": 241}  # perf_event_open's number
_HARDWARE, _INSTRUCTIONS = 0, 1  # PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS
_EXCLUDE_KERNEL, _EXCLUDE_HV = 1 << 5, 1 << 6  # user space only, as an unprivileged process may count
# perf_event_attr as its first version laid it out (64 bytes), which every kernel since accepts:
# type, size, config, sample period, sample type, read format, flags, wakeup events, bp type, config1.
_ATTR = struct.Struct("=IIQQQQQIIQ")


def thread_counter() -> Callable[[], int] | None:
    """A function returning the instructions this thread has retired since the call, or None
    where the counter cannot be had (not Linux, no hardware counters, or not permitted)."""
    fd = _open(0)
    return None if fd is None else lambda: _read(fd)


def process_counter(pids: list[int]) -> Callable[[], int] | None:
    """A function returning the instructions the threads of processes ``pids`` have retired
    since the call (those alive now: a thread they start later is not counted), or None where
    a counter cannot be had. For a bench's worker processes, whose threads it may watch."""
    fds: list[int] = []
    for pid in pids:
        try:
            tasks = [int(task.name) for task in Path(f"/proc/{pid}/task").iterdir()]
        except OSError:  # the process ended meanwhile
            continue
        for task in tasks:
            fd = _open(task)
            if fd is None and not Path(f"/proc/{pid}/task/{task}").exists():
                continue  # the thread ended meanwhile
            if fd is None:
                _close(fds)
                return None
            fds.append(fd)

    def read() -> int:
        return sum(_read(fd) for fd in fds)

    weakref.finalize(read, _close, fds)  # the counters go with the function that reads them
    return read


def _open(task: int) -> int | None:
    """A user-space instruction counter of thread ``task`` (0: the calling one), or None."""
    number = _SYSCALL.get(platform.machine())
    if number is None or not sys.platform.startswith("linux"):
        return None
    attr = _ATTR.pack(_HARDWARE, _ATTR.size, _INSTRUCTIONS, 0, 0, 0, _EXCLUDE_KERNEL | _EXCLUDE_HV, 0, 0, 0)
    syscall = ctypes.CDLL(None, use_errno=True).syscall
    syscall.restype = ctypes.c_long
    args = (ctypes.c_int(task), ctypes.c_int(-1), ctypes.c_int(-1), ctypes.c_ulong(0))  # that thread, any CPU
    fd = int(syscall(ctypes.c_long(number), ctypes.create_string_buffer(attr, _ATTR.size), *args))
    return None if fd < 0 else fd


def _close(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def _read(fd: int) -> int:
    """A counter's count: it stays readable after its thread has ended."""
    return int.from_bytes(os.read(fd, 8), sys.byteorder)
