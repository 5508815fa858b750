"""The verdict stage's per-event gathering, without Kafka: order of arrival must not matter."""

from __future__ import annotations

import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from topology.stages import total_order
from topology.verdicts import Intro, Pending, Published, Ref
from worker.engine import match
from worker.engine.match import Candidate, Entry
from worker.stream import gather

BASE = total_order(1_700_000_000_000, 0, 0)


def intro(order: int = BASE + 10, expected: int = 3, event_id: str = "e") -> Intro:
    return Intro(
        event_id, order, 1_700_000_000_000, "00000000000000ff", expected, {"id": event_id, "text": "t", "src": "x"}
    )


def ref(event_id: str, order: int, distance: int = 2, similarity: float = 0.9) -> Ref:
    return Ref(event_id, order, distance, similarity)


def test_answers_before_intro_complete_only_when_everything_is_in() -> None:
    state = gather.add_answer(None, BASE + 10, [0], [ref("a", BASE + 1)])
    state = gather.add_answer(state, BASE + 10, [1], [])
    assert not gather.is_complete(state)
    state = gather.add_intro(state, intro(expected=3))
    assert not gather.is_complete(state)
    state = gather.add_answer(state, BASE + 10, [2], [ref("b", BASE + 5)])
    assert gather.is_complete(state)
    published = gather.decide(state)
    assert published.topic == "duplicates"
    assert published.value["duplicate_of"] == "a"
    assert published.value["verdict"] == "duplicate"


def test_one_reply_can_answer_several_tables() -> None:
    state = gather.add_intro(None, intro(expected=3))
    state = gather.add_answer(state, BASE + 10, [0, 2], [ref("a", BASE + 4)])
    assert not gather.is_complete(state)
    state = gather.add_answer(state, BASE + 10, [1], [ref("b", BASE + 2)])
    assert gather.is_complete(state)
    assert gather.decide(state).value["duplicate_of"] == "b"


def test_every_arrival_order_gives_the_same_verdict() -> None:
    steps = [
        ("intro", intro(expected=3)),
        ("answer", (0, [ref("late", BASE + 7, distance=1)])),
        ("answer", (1, [ref("first", BASE + 3, distance=5), ref("late", BASE + 7, distance=1)])),
        ("answer", (2, [])),
    ]
    verdicts = set()
    for perm in itertools.permutations(steps):
        state: Pending | None = None
        for kind, payload in perm:
            if kind == "intro":
                state = gather.add_intro(state, payload)  # type: ignore[arg-type]
            else:
                table, refs = payload  # type: ignore[misc]
                state = gather.add_answer(state, BASE + 10, [table], refs)
        assert state is not None and gather.is_complete(state)
        verdicts.add(json.dumps(gather.decide(state).value, sort_keys=True))
    assert len(verdicts) == 1
    assert json.loads(verdicts.pop())["duplicate_of"] == "first"


def test_replayed_answer_does_not_count_twice() -> None:
    state = gather.add_intro(None, intro(expected=2))
    state = gather.add_answer(state, BASE + 10, [0], [])
    state = gather.add_answer(state, BASE + 10, [0], [])
    assert not gather.is_complete(state)


def test_unique_keeps_the_original_event_and_adds_the_verdict() -> None:
    state = gather.add_intro(None, intro(expected=1))
    state = gather.add_answer(state, BASE + 10, [0], [])
    published = gather.decide(state)
    assert published.topic == "unique"
    assert published.value["src"] == "x"
    assert published.value["text"] == "t"
    assert published.value["verdict"] == "unique"
    assert published.value["fingerprint"] == "00000000000000ff"
    assert published.value["duplicate_of"] is None


def test_matches_never_point_at_the_event_itself_or_later() -> None:
    state = gather.add_intro(None, intro(expected=1))
    state = gather.add_answer(state, BASE + 10, [0], [ref("same", BASE + 10), ref("later", BASE + 11)])
    assert gather.decide(state).topic == "unique"


def test_resent_copy_gets_the_verdict_of_the_first_and_its_answers_do_not_mix() -> None:
    state = gather.add_intro(None, intro(order=BASE + 10, expected=1))
    state = gather.add_intro(state, intro(order=BASE + 20, expected=1))
    assert state.copies == 1
    state = gather.add_answer(state, BASE + 20, [0], [ref("between", BASE + 15)])
    assert not gather.is_complete(state)
    state = gather.add_answer(state, BASE + 10, [0], [])
    assert gather.is_complete(state)
    assert gather.decide(state).topic == "unique"


def test_replayed_intro_is_not_a_copy() -> None:
    state = gather.add_intro(None, intro())
    assert gather.add_intro(state, intro()).copies == 0


def test_a_replayed_copy_is_counted_once_and_the_verdict_knows_which_inputs_it_answered() -> None:
    state = gather.add_intro(None, intro(order=BASE + 10, expected=1))
    state = gather.add_intro(state, intro(order=BASE + 20, expected=1))
    state = gather.add_intro(state, intro(order=BASE + 20, expected=1))  # the copy, read again
    state = gather.add_intro(state, intro(order=BASE + 5, expected=1))  # an earlier copy: it becomes the first
    assert state.copies == 2 and state.intro is not None and state.intro.order == BASE + 5
    published = gather.decide(gather.add_answer(state, BASE + 5, [0], []))
    assert [o for o in (BASE + 5, BASE + 10, BASE + 20, BASE + 30) if published.answered(o)] == [
        BASE + 5,
        BASE + 10,
        BASE + 20,
    ]
    assert Published.from_dict(json.loads(json.dumps(published.to_dict()))) == published
    revised = gather.revise(published, ref("orig", BASE + 1))
    assert revised is not None and revised.copies == published.copies


def test_note_while_pending_joins_the_matches() -> None:
    state = gather.add_intro(None, intro(expected=1))
    state = gather.add_note(state, ref("racer", BASE + 2))
    state = gather.add_answer(state, BASE + 10, [0], [ref("seen", BASE + 5)])
    assert gather.decide(state).value["duplicate_of"] == "racer"


def test_a_held_verdict_is_revised_to_an_earlier_original_as_if_decided_with_it() -> None:
    state = gather.add_answer(gather.add_intro(None, intro(expected=1)), BASE + 10, [0], [])
    held = gather.decide(state)
    revised = gather.revise(held, ref("orig", BASE + 3, distance=1, similarity=0.91234))
    assert revised == gather.decide(gather.add_note(state, ref("orig", BASE + 3, distance=1, similarity=0.91234)))
    assert revised is not None and revised.topic == "duplicates" and revised.value["duplicate_of"] == "orig"
    assert revised.corrections == 0  # nothing was published yet
    # Only an earlier original than the current one changes it; never a later event.
    assert gather.revise(revised, ref("later", BASE + 5)) is None
    assert gather.revise(revised, ref("after", BASE + 11)) is None
    assert gather.revise(revised, ref("first", BASE + 1)).value["duplicate_of"] == "first"  # type: ignore[union-attr]


def test_correction_of_a_unique_event() -> None:
    state = gather.add_answer(gather.add_intro(None, intro(expected=1)), BASE + 10, [0], [])
    published = gather.decide(state)
    fixed = gather.correct(published, ref("orig", BASE + 1, distance=3, similarity=0.87654))
    assert fixed is not None
    record, value = fixed
    assert value == {
        "id": "e",
        "verdict": "duplicate",
        "duplicate_of": "orig",
        "distance": 3,
        "similarity": 0.877,
        "previous_verdict": "unique",
        "previous_duplicate_of": None,
        "fingerprint": "00000000000000ff",
        "ts": 1_700_000_000_000,
    }
    assert record.current == ref("orig", BASE + 1, distance=3, similarity=0.87654)
    assert record.value == published.value  # the first verdict is what a re-sent id gets again
    assert record.corrections == 1


def test_correction_only_for_a_strictly_earlier_original() -> None:
    state = gather.add_answer(gather.add_intro(None, intro(expected=1)), BASE + 10, [0], [ref("b", BASE + 5)])
    published = gather.decide(state)
    assert gather.correct(published, ref("b", BASE + 5)) is None
    assert gather.correct(published, ref("c", BASE + 6)) is None
    assert gather.correct(published, ref("self", BASE + 10)) is None
    assert gather.correct(published, ref("later", BASE + 12)) is None
    fixed = gather.correct(published, ref("a", BASE + 4))
    assert fixed is not None
    assert fixed[1]["previous_verdict"] == "duplicate"
    assert fixed[1]["previous_duplicate_of"] == "b"
    assert gather.correct(fixed[0], ref("b", BASE + 5)) is None


def test_state_survives_its_json_round_trip() -> None:
    big = total_order(2**41 - 1, 1023, 2**44 - 1)
    state = gather.add_intro(None, intro(order=big, expected=2))
    state = gather.add_answer(state, big, [1], [ref("x", big - 1)])
    state = gather.add_note(state, ref("y", big - 2))
    assert Pending.from_dict(json.loads(json.dumps(state.to_dict()))) == state
    published = gather.decide(gather.add_answer(state, big, [0], []))
    assert Published.from_dict(json.loads(json.dumps(published.to_dict()))) == published


refs_strategy = st.lists(
    st.builds(
        Ref,
        id=st.text(min_size=1, max_size=3),
        order=st.integers(0, 50),
        distance=st.integers(0, 12),
        similarity=st.floats(0.5, 1.0),
    ),
    max_size=12,
)


@given(refs_strategy, st.integers(1, 4))
def test_the_earliest_of_every_partitions_earliest_is_the_earliest_of_all(refs: list[Ref], partitions: int) -> None:
    """The stream splits an event's candidates over index partitions, each answers its own
    earliest, the verdict stage takes the first answer: the same choice as over all of them."""
    candidates = [Candidate(Entry(f"{r.id}-{i}", 0, r.order, 0, b""), r.distance) for i, r in enumerate(refs)]
    similarity = {c.entry.event_id: r.similarity for c, r in zip(candidates, refs, strict=True)}

    def verify(candidate: Candidate) -> float | None:
        value = similarity[candidate.entry.event_id]
        return value if value >= 0.7 else None

    overall = match.earliest(candidates, verify, oldest_ts=0)
    answers = [match.earliest(candidates[p::partitions], verify, oldest_ts=0) for p in range(partitions)]
    refs_found = [Ref(c.entry.event_id, c.entry.order, c.distance, s) for c, s in filter(None, answers)]
    picked = match.first(refs_found)
    if overall is None:
        assert picked is None
    else:
        assert picked is not None
        assert (picked.order, picked.distance) == (overall[0].entry.order, overall[0].distance)
