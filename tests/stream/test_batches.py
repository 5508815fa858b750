"""take_batches on a Faust agent's in-memory test channel (no broker: the batching is pure
stream logic; the stages' use of it runs on the real broker in tests/integration)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import faust
import pytest

from worker.stream.batches import Windows, take_batches
from worker.stream.worker import _TAKE_MAX

_SPACING_S = 1.0


class _Seen:
    """What the agent's loop body saw of each batch."""

    def __init__(self) -> None:
        self.batches: list[list[bytes]] = []
        self.started: list[float] = []
        self.acked_inside: list[list[bool]] = []
        self.events: list[list[faust.types.EventT]] = []
        self.first_put = 0.0

    async def wait_for(self, count: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.batches) < count:
            assert time.monotonic() < deadline, f"only {self.batches} after {timeout} s"
            await asyncio.sleep(0.002)


def _run(scenario: Callable[[faust.types.AgentT, _Seen], Awaitable[None]], max_events: int) -> _Seen:
    app = faust.App("test-batches", broker="kafka://127.0.0.1:1", web_enabled=False, autodiscover=False)
    seen = _Seen()

    @app.agent(value_type=bytes)
    async def agent(stream: faust.StreamT[bytes]) -> None:
        async for batch in take_batches(stream, max_events, lambda: _SPACING_S):
            seen.started.append(time.monotonic())
            seen.batches.append([event.value for event in batch])
            seen.acked_inside.append([event.message.acked for event in batch])
            seen.events.append(batch)

    async def main() -> None:
        async with agent.test_context() as running:
            await scenario(running, seen)

    asyncio.run(main())
    return seen


async def _one_then_two(agent: faust.types.AgentT, seen: _Seen) -> None:
    """One event into an idle stage, then two more while its batch has just run."""
    seen.first_put = time.monotonic()
    await agent.put(b"a")
    await seen.wait_for(1)
    await agent.put(b"b")
    await agent.put(b"c")
    await seen.wait_for(2)


def test_an_event_after_a_quiet_spell_goes_at_once_and_later_ones_wait_for_the_spacing() -> None:
    seen = _run(_one_then_two, max_events=10)
    assert seen.batches == [[b"a"], [b"b", b"c"]]
    assert seen.started[0] - seen.first_put < _SPACING_S / 2  # no window to wait out first
    assert seen.started[1] - seen.started[0] >= _SPACING_S * 0.95  # the next one is spaced


def test_a_full_batch_does_not_wait_and_no_batch_is_larger_than_the_maximum() -> None:
    async def scenario(agent: faust.types.AgentT, seen: _Seen) -> None:
        await agent.put(b"a")
        await seen.wait_for(1)
        for value in (b"b", b"c", b"d", b"e"):
            await agent.put(value)
        await seen.wait_for(3)

    seen = _run(scenario, max_events=3)
    assert seen.batches == [[b"a"], [b"b", b"c", b"d"], [b"e"]]
    assert seen.started[1] - seen.started[0] < _SPACING_S / 2
    assert seen.started[2] - seen.started[1] >= _SPACING_S * 0.95


def test_a_batch_is_acked_only_after_the_loop_body_returns() -> None:
    seen = _run(_one_then_two, max_events=10)
    assert seen.batches == [[b"a"], [b"b", b"c"]]
    assert seen.acked_inside == [[False], [False, False]]
    assert [event.message.acked for event in seen.events[0]] == [True]


def test_a_batch_whose_loop_body_is_stopped_mid_way_is_never_acked() -> None:
    """A worker that stops (a crash, SIGTERM) cancels a stage waiting for a lock before its
    batch took any hold: acking that batch would let the stop commit events never decided."""
    app = faust.App("test-batches-stop", broker="kafka://127.0.0.1:1", web_enabled=False, autodiscover=False)
    taken: list[faust.types.EventT] = []
    stopped: list[bool] = []

    @app.agent(value_type=bytes)
    async def agent(stream: faust.StreamT[bytes]) -> None:
        async for batch in take_batches(stream, 10, lambda: 0.0):
            taken.extend(batch)
            try:
                await asyncio.Event().wait()  # the stage's lock, held by a restore
            except asyncio.CancelledError:
                stopped.append(True)
                raise

    async def main() -> None:
        async with agent.test_context() as running:
            await running.put(b"a")
            while not taken:
                await asyncio.sleep(0.002)

    asyncio.run(main())
    assert stopped == [True], "the body was stopped mid-way"
    assert [event.message.acked for event in taken] == [False]


def test_the_fingerprint_window_grows_after_a_backlog_batch_and_stays_put_at_moderate_load() -> None:
    windows = Windows()
    behind = windows.backlog_wait  # the batch's oldest event had waited this long: a backlog
    # A few events a batch (moderate load): the configured windows, alone or shared.
    assert windows.after(3, shared=False, waited=behind) == windows.fingerprint
    assert windows.after(3, shared=True, waited=behind) == windows.fingerprint_shared
    # A backlog's batch: a longer window, so the next batch is bigger; never past the cap.
    assert windows.after(100, shared=False, waited=behind) == pytest.approx(100 * windows.backlog_per_event)
    assert windows.after(100, shared=False, waited=behind) > windows.fingerprint_shared
    assert windows.after(_TAKE_MAX, shared=True, waited=behind) == windows.backlog_most


def test_small_backlog_batches_still_reach_the_cap_within_a_few_batches() -> None:
    # On a slow machine Faust delivers only a few events in a short window: the window after
    # such a batch must still grow, or the worker drains its backlog a few events a batch.
    windows = Windows()
    behind = windows.backlog_wait
    window, batches = windows.fingerprint, 0
    while window < windows.backlog_most:
        window, batches = windows.after(5, shared=False, waited=behind, before=window), batches + 1
        assert batches <= 6, f"window {window * 1000:.1f} ms after {batches} backlog batches of 5 events"
    assert window == windows.backlog_most
    # The backlog gone, the next batch's events are fresh: back to the configured window.
    assert windows.after(5, shared=False, waited=behind / 4, before=window) == windows.fingerprint


def test_a_big_batch_of_fresh_events_keeps_the_configured_window() -> None:
    # A high but sustainable load makes big batches of events that have not waited long:
    # growing the window after them would make the next batch bigger still, up to the cap.
    windows = Windows()
    fresh = windows.backlog_wait / 4
    assert windows.after(_TAKE_MAX, shared=False, waited=fresh) == windows.fingerprint
    assert windows.after(_TAKE_MAX, shared=True, waited=fresh) == windows.fingerprint_shared
