"""Held verdicts leave in order, once due and acknowledged, with their latest decision."""

from __future__ import annotations

from topology.verdicts import Intro, Published, Ref
from worker.stream import gather
from worker.stream.hold import BEHIND_MS, LAG_HOLD_MS, HeldEntry, Hold


def verdict(event_id: str, original: str | None = None) -> Published:
    state = gather.add_answer(
        gather.add_intro(None, Intro(event_id, 50, 1000, "00ff", 1, {"id": event_id, "text": "t"})), 50, [0], []
    )
    if original is not None:
        state = gather.add_note(state, Ref(original, 5, 1, 0.95))
    return gather.decide(state)


def nothing_stored(event_id: str) -> Published | None:
    return None


def sent(hold: Hold, now: int, settled: int, everything: bool = False) -> list[tuple[str, list[str]]]:
    return [
        (key, [event_id for _, event_id, _ in outputs])
        for key, outputs, _ in hold.take_due(now, settled, nothing_stored, everything)
    ]


def test_entries_leave_in_order_when_due_and_acknowledged() -> None:
    hold = Hold()
    hold.add(HeldEntry("o1", due_ms=20, seq=1, ids=["a"]), {"a": verdict("a")})
    hold.add(HeldEntry("o2", due_ms=25, seq=2, ids=["b", "b"]), {"b": verdict("b")})
    assert hold.holds("a") and hold.holds("b")
    assert sent(hold, 19, settled=2) == []
    assert sent(hold, 30, settled=0) == []
    assert sent(hold, 30, settled=1) == [("o1", ["a"])]  # the second waits for its record
    assert not hold.holds("a") and hold.holds("b")
    assert sent(hold, 30, settled=2) == [("o2", ["b", "b"])]
    assert not hold


def test_a_revision_sends_the_new_decision_after_its_own_record() -> None:
    hold = Hold()
    hold.add(HeldEntry("o1", due_ms=20, seq=1, ids=["a"]), {"a": verdict("a")})
    hold.revise("a", verdict("a", original="w"), seq=3)
    assert sent(hold, 30, settled=2) == []
    ((key, outputs, by),) = hold.take_due(30, 3, nothing_stored)
    assert by == "due", "its hold ran out"
    assert [(role, value["duplicate_of"]) for role, _, value in outputs] == [("duplicates", "w")]


def test_a_clock_step_back_does_not_reorder_and_shutdown_takes_what_is_acknowledged() -> None:
    hold = Hold()
    hold.add(HeldEntry("o1", due_ms=100, seq=1, ids=["a"]), {"a": verdict("a")})
    hold.add(HeldEntry("o2", due_ms=40, seq=2, ids=["b"]), {"b": verdict("b")})
    assert sent(hold, 50, settled=2) == []  # o2 does not overtake o1
    assert sent(hold, 50, settled=1, everything=True) == [("o1", ["a"])]
    assert sent(hold, 50, settled=2, everything=True) == [("o2", ["b"])]


def test_an_entry_whose_inputs_every_partition_has_passed_leaves_before_its_hold_ends() -> None:
    hold = Hold()
    hold.add(HeldEntry("o1", due_ms=1000, seq=1, ids=["a"], last_ms=50), {"a": verdict("a")})
    hold.add(HeldEntry("o2", due_ms=1000, seq=2, ids=["b"], last_ms=60), {"b": verdict("b")})
    hold.add(HeldEntry("o3", due_ms=1000, seq=3, ids=["c"]), {"c": verdict("c")})  # inputs unknown
    due = [
        (key, [event_id for _, event_id, _ in outputs], by)
        for key, outputs, by in hold.take_due(10, 3, nothing_stored, caught_up_ms=60)
    ]
    assert due == [("o1", ["a"], "early")]  # b's input came at 60: an event at 60 may still note it
    assert sent(hold, 10, settled=3) == []
    assert [key for key, *_ in hold.take_due(10, 1, nothing_stored, caught_up_ms=61)] == []  # o2's record first
    assert [(key, by) for key, _, by in hold.take_due(10, 3, nothing_stored, caught_up_ms=10_000)] == [("o2", "early")]
    assert [(key, by) for key, _, by in hold.take_due(1000, 3, nothing_stored)] == [("o3", "due")]


def test_a_worker_catching_up_holds_a_due_entry_while_an_input_partition_lags_behind_it() -> None:
    """A backlog's entry (inputs appended seconds ago) waits past its due time for a partition
    not read to its end whose applied time is before its inputs, for at most LAG_HOLD_MS."""
    hold = Hold()
    hold.add(HeldEntry("o1", due_ms=10_000, seq=1, ids=["a"], last_ms=5_000), {"a": verdict("a")})

    def due(now: int, lagging: int | None, caught_up: int | None = None) -> list[tuple[str, str]]:
        return [
            (key, by)
            for key, _, by in hold.take_due(now, 1, nothing_stored, caught_up_ms=caught_up, lagging_ms=lambda: lagging)
        ]

    assert due(10_000, lagging=4_000) == []  # partition applied to 4,000 only: an original may come
    assert due(10_000, lagging=5_000) == []  # an event appended at 5,000 too
    assert due(10_000, lagging=4_000, caught_up=5_001) == [("o1", "lag")]  # every partition passed it
    hold.add(HeldEntry("o2", due_ms=10_000, seq=1, ids=["b"], last_ms=5_000), {"b": verdict("b")})
    assert due(10_001, lagging=5_001) == [("o2", "due")]  # the lagging one is past it: never kept
    hold.add(HeldEntry("o3", due_ms=10_000, seq=1, ids=["c"], last_ms=5_000), {"c": verdict("c")})
    assert due(10_000 + LAG_HOLD_MS - 1, lagging=0) == []
    assert due(10_000 + LAG_HOLD_MS, lagging=0) == [("o3", "lag")]  # the cap: markers may end a log


def test_a_live_entry_keeps_its_hold_whatever_lags() -> None:
    """Inputs appended under BEHIND_MS ago: the worker is not catching up, so the operator's
    hold alone decides (a live partition's next records are always on their way)."""
    hold = Hold()
    hold.add(HeldEntry("o1", due_ms=1_020, seq=1, ids=["a"], last_ms=1_000), {"a": verdict("a")})
    asked: list[bool] = []

    def lagging() -> int | None:
        asked.append(True)
        return 0

    now = 1_000 + BEHIND_MS - 1
    assert [key for key, *_ in hold.take_due(now, 1, nothing_stored, lagging_ms=lagging)] == ["o1"]
    assert asked == [], "the consumer is not asked for what no entry needs"
