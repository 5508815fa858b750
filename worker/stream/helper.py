"""The fingerprint stage's helper process: a batch's texts fingerprinted and routed on another core.

Fingerprinting is the largest share of the worker's own CPU that needs no state, and the
worker's process is one Python thread: in a process of its own, the fingerprints of batch
N+1, and their routes to index partitions (:mod:`worker.stream.routes`), are computed while
the worker indexes batch N (the pipeline is in
:meth:`worker.stream.worker.Worker.fingerprint_agent`). The helper is forked from a fresh
``forkserver`` process, never from the worker, whose Kafka and RocksDB threads a fork would
copy in whatever state they were in; it loads its tables once, at the worker's start.

Batches go down one pipe and their fingerprints come back up another, in order, read and
written by the event loop itself. Why not a ``ProcessPoolExecutor``: its tasks and results
pass through two threads of the worker's process, and a thread of a busy process waits up
to Python's switch interval (5 ms) for the interpreter lock at each hand-off, which put tens
of milliseconds on every batch.

A text that fails comes back as its reason and is dead-lettered alone
(:func:`worker.engine.fingerprint.fingerprint_each`). A helper that dies (killed, out of
memory) is the machine's failure, not a record's: the batch raises :class:`HelperDied` and the
worker stops with its offsets uncommitted (:func:`worker.stream.guard.infrastructure`). A worker
that dies, however it went, closes its end of the pipe, and the helper ends at that.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import multiprocessing
import os
import pickle
import struct
from collections import deque
from multiprocessing.connection import Connection
from typing import Any

from worker.engine.fingerprint import warm_up
from worker.settings import Settings
from worker.stream.routes import Routed, routed_each

_HEADER = struct.Struct("!i")  # multiprocessing.connection's frame: the length, then the bytes
_ENDED = "the fingerprint helper process has ended"
_STOP_S = 2.0  # how long close() waits for the helper to end before it kills it
_PIPE_BYTES = 1 << 20  # Linux's default /proc/sys/fs/pipe-max-size


class HelperDied(RuntimeError):
    """The helper process ended while the worker still needed it."""


def _serve(settings: Settings, down: Connection, up: Connection) -> None:
    """The helper's loop: a pickled list of texts in, their fingerprints and routes out, until the worker's end closes."""
    warm_up(settings)
    while True:
        try:
            texts = pickle.loads(down.recv_bytes())
        except EOFError:
            return
        up.send_bytes(pickle.dumps(routed_each(texts, settings), pickle.HIGHEST_PROTOCOL))


def _widen(conn: Connection) -> None:
    """Room in the pipe for a whole batch's texts, or its fingerprints. With the default 64 KiB
    a batch went through in pieces, each waiting until the worker's event loop was free to
    write or read the next, while the helper sat idle: 500 texts took 300 ms, not 50."""
    with contextlib.suppress(OSError, AttributeError):  # Linux only; the most a user may ask for
        fcntl.fcntl(conn.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)


class FingerprintHelper:
    """Fingerprints batches in a helper process (``fingerprint_helper``), or in this one."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._process: Any = None  # multiprocessing's process object, once started
        self._down: Connection | None = None
        self._up: Connection | None = None
        self._writer: asyncio.WriteTransport | None = None
        self._waiting: deque[asyncio.Future[list[Routed | str]]] = deque()
        self._reading: asyncio.Task[None] | None = None
        self._connected: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the helper, which loads its tables now rather than at the first batch."""
        if not self.settings.fingerprint_helper or self._process is not None:
            return
        context = multiprocessing.get_context("forkserver")
        down_r, self._down = context.Pipe(duplex=False)
        self._up, up_w = context.Pipe(duplex=False)
        for conn in (self._down, self._up):
            _widen(conn)
        self._process = context.Process(
            target=_serve, args=(self.settings, down_r, up_w), name="neardup-fingerprint", daemon=True
        )
        self._process.start()
        down_r.close()  # the helper's ends: with them closed here, either side sees the other's exit
        up_w.close()

    @property
    def pid(self) -> int | None:
        return None if self._process is None else int(self._process.pid)

    async def fingerprints(self, texts: list[str]) -> list[Routed | str]:
        """Each text's fingerprint and routes or why it has none, in the helper if there is one."""
        if self._process is None:
            return routed_each(texts, self.settings)
        if self._connected is None:
            self._connected = asyncio.ensure_future(self._connect())
        await asyncio.shield(self._connected)  # batches that come meanwhile wait for the same
        if self._reading is None or self._reading.done():
            raise HelperDied(_ENDED)
        assert self._writer is not None
        payload = pickle.dumps(texts, pickle.HIGHEST_PROTOCOL)
        answer: asyncio.Future[list[Routed | str]] = asyncio.get_running_loop().create_future()
        self._waiting.append(answer)
        self._writer.write(_HEADER.pack(len(payload)) + payload)
        return await answer

    async def _connect(self) -> None:
        """Both pipes on the event loop: writes never block it, answers wake it."""
        assert self._down is not None and self._up is not None
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 20)
        down = os.fdopen(self._down.fileno(), "wb", buffering=0, closefd=False)
        up = os.fdopen(self._up.fileno(), "rb", buffering=0, closefd=False)
        self._writer, _ = await loop.connect_write_pipe(asyncio.Protocol, down)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), up)
        self._reading = asyncio.ensure_future(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        """Hand each answer to the oldest batch waiting; when the helper ends, fail them all."""
        try:
            while True:
                (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
                if size == -1:  # a frame of 2 GiB or more: its length follows in 8 bytes
                    (size,) = struct.unpack("!Q", await reader.readexactly(8))
                answer = pickle.loads(await reader.readexactly(size))
                waiting = self._waiting.popleft()
                if not waiting.done():
                    waiting.set_result(answer)
        except (asyncio.IncompleteReadError, OSError):
            pass
        finally:
            while self._waiting:
                waiting = self._waiting.popleft()
                if not waiting.done():
                    waiting.set_exception(HelperDied(_ENDED))

    def close(self) -> None:
        """End the helper: it sees its pipe close and returns."""
        if self._writer is not None:
            with contextlib.suppress(RuntimeError):  # its loop has closed already
                self._writer.close()
        for conn in (self._down, self._up):
            if conn is not None:
                with contextlib.suppress(OSError):
                    conn.close()
        if self._process is not None:
            self._process.join(_STOP_S)
            if self._process.is_alive():
                self._process.kill()
            self._process = None
        if self._reading is not None:
            self._reading.cancel()
