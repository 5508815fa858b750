"""The RocksDB block index against brute force, on a real database in a temporary directory."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worker.engine.blocks import Plan, hamming, parse_plan, plan_for
from worker.engine.match import Candidate, Entry
from worker.settings import Settings
from worker.state.index import BlockIndex
from worker.state.layout import StoreMismatch

FULL = (1 << 64) - 1

PLANS: list[Plan] = [
    plan_for(k=1, expected=1_000_000),
    plan_for(k=2, expected=1_000_000),
    parse_plan("4x16", k=3, expected=1_000_000),
    parse_plan("10x25", k=3, expected=1_000_000),
    parse_plan("20x32", k=3, expected=1_000_000),
    plan_for(k=3, expected=1_000_000),
    plan_for(k=4, expected=1_000_000),
]


def entry(i: int, fp: int, ts: int = 0, sketch: bytes = b"") -> Entry:
    return Entry(event_id=f"ev-{i}", fingerprint=fp, order=i, ts=ts, sketch=sketch or i.to_bytes(4, "big"))


def _mask(positions: set[int]) -> int:
    return sum(1 << p for p in positions)


@st.composite
def neighbourhoods(draw: st.DrawFn) -> tuple[Plan, int, list[int], int]:
    """A plan, a probe, stored fingerprints around it (adversarial flips and random ones), max_distance."""
    plan = draw(st.sampled_from(PLANS))
    probe = draw(st.one_of(st.sampled_from([0, FULL]), st.integers(0, FULL)))
    width = 64 // plan.levels[0]
    stored: list[int] = []
    for _ in range(draw(st.integers(1, 12))):
        how = draw(st.sampled_from(["random-flips", "one-block", "spread", "key-bits", "far"]))
        if how == "random-flips":
            positions = draw(st.sets(st.integers(0, 63), max_size=plan.k + 3))
        elif how == "one-block":
            start = draw(st.integers(0, plan.levels[0] - 1)) * width
            positions = draw(st.sets(st.integers(start, start + width - 1), max_size=plan.k + 2))
        elif how == "spread":
            blocks = draw(st.permutations(range(plan.levels[0])))[: draw(st.integers(0, plan.levels[0]))]
            positions = {b * width + draw(st.integers(0, width - 1)) for b in blocks}
        elif how == "key-bits":
            table = draw(st.sampled_from(plan.tables))
            positions = {63 - p for p in draw(st.sets(st.sampled_from(table.positions), max_size=plan.k + 1))}
        else:
            stored.append(draw(st.integers(0, FULL)))
            continue
        stored.append(probe ^ _mask(positions))
    max_distance = draw(st.integers(0, plan.k + 4))
    return plan, probe, stored, max_distance


def check_against_brute_force(
    found: list[Candidate], probe: int, stored: dict[str, int], k: int, max_distance: int
) -> None:
    ids = [c.entry.event_id for c in found]
    assert len(ids) == len(set(ids)), "each event at most once"
    for c in found:
        assert c.distance == hamming(c.entry.fingerprint, probe) <= max_distance
        assert stored[c.entry.event_id] == c.entry.fingerprint
    must = {eid for eid, fp in stored.items() if hamming(fp, probe) <= min(k, max_distance)}
    assert must <= set(ids), "every stored fingerprint within k is found"


@given(neighbourhoods())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_query_matches_brute_force(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[Plan, int, list[int], int]
) -> None:
    plan, probe, fps, max_distance = case
    with BlockIndex(tmp_path_factory.mktemp("ix"), plan) as index:
        stored = {}
        for i, fp in enumerate(fps):
            e = entry(i, fp)
            index.add(e)
            stored[e.event_id] = fp
        check_against_brute_force(index.query(probe, max_distance), probe, stored, plan.k, max_distance)


@st.composite
def reposted_stories(draw: st.DrawFn) -> tuple[Plan, int, list[int], list[int], int]:
    """A plan, a partition count, fingerprints with many exact copies and near ones, probes, max_distance."""
    plan = draw(st.sampled_from(PLANS))
    bases = draw(st.lists(st.integers(0, FULL), min_size=1, max_size=3))

    def near() -> int:
        fp = draw(st.sampled_from(bases))
        for p in draw(st.sets(st.integers(0, 63), max_size=plan.k + 1)):
            fp ^= 1 << p
        return fp

    stored = [draw(st.sampled_from(bases)) if draw(st.booleans()) else near() for _ in range(draw(st.integers(1, 40)))]
    probes = [near() for _ in range(3)] + bases
    return plan, draw(st.integers(1, 3)), stored, probes, draw(st.integers(0, plan.k + 2))


@given(reposted_stories())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_partition_shares_find_every_copy_a_whole_index_finds(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[Plan, int, list[int], list[int], int]
) -> None:
    """The worker's layout: each partition holds the tables whose bucket it owns, per fingerprint.

    A story stored many times must come back whole from every partition, as from one index of all
    tables (query reads a fingerprint's rows in one table and skips them in the others).
    """
    plan, partitions, fps, probes, max_distance = case

    def share(fp: int, part: int) -> list[int]:
        return [t for t, key in enumerate(plan.keys(fp)) if (t * 7919 + key) % partitions == part]

    root = tmp_path_factory.mktemp("shares")
    with BlockIndex(root / "whole", plan) as whole:
        parts = [BlockIndex(root / f"p{part}", plan) for part in range(partitions)]
        try:
            stored = {}
            for i, fp in enumerate(fps):
                whole.add(entry(i, fp))
                for part, index in enumerate(parts):
                    if tables := share(fp, part):
                        index.add(entry(i, fp), tables=tables)
                stored[f"ev-{i}"] = fp
            for probe in probes:
                expected = {(c.entry.event_id, c.distance) for c in whole.query(probe, max_distance)}
                found: set[tuple[str, int]] = set()
                for part, index in enumerate(parts):
                    if tables := share(probe, part):
                        answer = index.query(probe, max_distance, tables=tables)
                        assert len({c.entry.event_id for c in answer}) == len(answer), "each event once"
                        found |= {(c.entry.event_id, c.distance) for c in answer}
                assert found == expected
                check_against_brute_force(whole.query(probe, max_distance), probe, stored, plan.k, max_distance)
        finally:
            for index in parts:
                index.close()


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: f"k{p.k}-{p.name}")
def test_probe_then_index_sees_every_earlier_add(tmp_path: Path, plan: Plan) -> None:
    """The decider's loop: each event probes, then is indexed; no flush in between."""
    rng = random.Random(plan.k * 1000 + len(plan.tables))
    bases = [rng.getrandbits(64) for _ in range(8)]
    stored: dict[str, int] = {}
    with BlockIndex(tmp_path / "ix", plan) as index:
        for i in range(150):
            fp = rng.choice(bases)
            for p in rng.sample(range(64), rng.randint(0, plan.k + 2)):
                fp ^= 1 << p
            check_against_brute_force(index.query(fp, plan.k + 2), fp, stored, plan.k, plan.k + 2)
            index.add(entry(i, fp))
            stored[f"ev-{i}"] = fp
            assert any(c.entry.event_id == f"ev-{i}" and c.distance == 0 for c in index.query(fp, 0))


def test_entry_fields_round_trip(tmp_path: Path) -> None:
    e = Entry("évènement/①", FULL, (1 << 100) + 7, -1_700_000_000_000, bytes(range(130)))
    with BlockIndex(tmp_path / "ix", plan_for()) as index:
        index.add(e)
        assert index.query(FULL, 0) == [Candidate(e, 0)]


@pytest.mark.parametrize("wal", [True, False])
def test_reopen_keeps_entries_exact_hashes_and_records(tmp_path: Path, wal: bool) -> None:
    plan = plan_for()
    e = entry(1, 0x0123456789ABCDEF, ts=5)
    with BlockIndex(tmp_path / "ix", plan, wal=wal) as index:
        index.add(e)
        index.add(e, tables=[], exact_keys=[42])
        index.put_record("seen:ev-1", b"original")
    with BlockIndex(tmp_path / "ix", plan, wal=wal) as index:
        assert index.query(0x0123456789ABCDEF ^ 0b101, 3) == [Candidate(e, 2)]
        assert index.query_exact(42) == [e]
        assert index.get_record("seen:ev-1") == b"original"
    assert BlockIndex.stored_plan(tmp_path / "ix") == plan


def test_opening_with_another_plan_fails_clearly(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", parse_plan("10x25", k=3, expected=1)):
        pass
    with pytest.raises(ValueError, match=r"built with plan 10x25\.\.26 .* opened with plan 4x16"):
        BlockIndex(tmp_path / "ix", parse_plan("4x16", k=3, expected=1))
    with BlockIndex(tmp_path / "ix", plan_for(k=3, expected=5_000_000)) as index:
        assert index.plan.name == "10x25..26"


def test_a_store_keeps_the_settings_its_fingerprints_were_made_with(tmp_path: Path) -> None:
    """Read with other shingles, a copy's SimHash and keys are not those of what was stored:
    every copy of the window would pass as unique, silently."""
    plan = parse_plan("10x25", k=3, expected=1)
    made = Settings().stored_features
    with BlockIndex(tmp_path / "ix", plan, features=made):
        pass
    with BlockIndex(tmp_path / "ix", plan, features=made):  # the same settings fit
        pass
    with BlockIndex(tmp_path / "ix", plan):  # a caller that names none (a bench, an inspection) is not asked
        pass
    other = Settings(shingle_n=1, short_bands=4).stored_features
    with pytest.raises(StoreMismatch, match=r"built with NEARDUP_SHINGLE_N=2, not 1 and NEARDUP_SHORT_BANDS=8, not 4;"):
        BlockIndex(tmp_path / "ix", plan, features=other)


def test_a_store_from_before_the_settings_record_takes_the_first_it_is_opened_with(tmp_path: Path) -> None:
    plan = parse_plan("10x25", k=3, expected=1)
    with BlockIndex(tmp_path / "ix", plan):
        pass
    with BlockIndex(tmp_path / "ix", plan, features=Settings(shingle_n=1).stored_features):
        pass
    with pytest.raises(StoreMismatch, match=r"NEARDUP_SHINGLE_N=1, not 2"):
        BlockIndex(tmp_path / "ix", plan, features=Settings().stored_features)


def test_a_store_recorded_before_words_were_folded_was_made_without(tmp_path: Path) -> None:
    """Its record names no NEARDUP_FOLD_WORDS, and its English texts were stored unfolded:
    opened as it was made it goes on, opened with folding it is refused, saying why."""
    plan = parse_plan("10x25", k=3, expected=1)
    before = {k: v for k, v in Settings().stored_features.items() if k != "NEARDUP_FOLD_WORDS"}
    with BlockIndex(tmp_path / "ix", plan, features=before):
        pass
    with pytest.raises(StoreMismatch, match=r"built with NEARDUP_FOLD_WORDS=False, not True;"):
        BlockIndex(tmp_path / "ix", plan, features=Settings().stored_features)
    with BlockIndex(tmp_path / "ix", plan, features=Settings(fold_words=False).stored_features):
        pass
    with pytest.raises(StoreMismatch, match=r"NEARDUP_FOLD_WORDS=False, not True"):
        BlockIndex(tmp_path / "ix", plan, features=Settings().stored_features)


def test_stored_plan_of_an_empty_directory_is_none(tmp_path: Path) -> None:
    assert BlockIndex.stored_plan(tmp_path) is None


def test_exact_keyspace_groups_entries_by_hash(tmp_path: Path) -> None:
    big = (1 << 128) - 1
    with BlockIndex(tmp_path / "ix", plan_for()) as index:
        a, b, c = entry(1, 10), entry(2, 11), entry(3, 12)
        index.add(a, tables=[], exact_keys=[7])
        index.add(b, tables=[], exact_keys=[7])
        index.add(c, tables=[], exact_keys=[8])
        index.add(c, tables=[], exact_keys=[big])
        assert sorted(x.event_id for x in index.query_exact(7)) == ["ev-1", "ev-2"]
        assert index.query_exact(8) == [c]
        assert index.query_exact(big) == [c]
        assert index.query_exact(9) == []
        assert sorted(x.event_id for x in index.query_exact_many([9, 7, 8, big])) == ["ev-1", "ev-2", "ev-3"]
        assert index.query_exact_many([]) == [] and index.query_exact_many([9]) == []


def test_an_exact_query_leaves_out_the_entries_its_filter_refuses(tmp_path: Path) -> None:
    def kept(index: BlockIndex, sketch: bytes) -> list[str]:
        found = index.query_exact_many([7], lambda event_id, s: s == sketch or event_id == "ev-3")
        return sorted(x.event_id for x in found)

    with BlockIndex(tmp_path / "ix", plan_for()) as index:
        index.add(entry(1, 10, sketch=b"keep"), tables=[], exact_keys=[7])
        index.add(entry(2, 11, sketch=b"drop"), tables=[], exact_keys=[7])
        with index.deferred():
            index.add(entry(3, 12, sketch=b"drop"), tables=[], exact_keys=[7])
            assert kept(index, b"keep") == ["ev-1", "ev-3"], "stored and staged entries alike"
    with BlockIndex(tmp_path / "ix", plan_for()) as index:  # nothing recent: entries read from disk
        assert kept(index, b"drop") == ["ev-2", "ev-3"]
        assert len(index.query_exact_many([7])) == 3


def test_records_put_get_overwrite(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", plan_for()) as index:
        assert index.get_record("missing") is None
        index.put_record("seen:x", b"\x00dup")
        index.put_record("next-order", b"12")
        index.put_record("next-order", b"13")
        assert index.get_record("seen:x") == b"\x00dup"
        assert index.get_record("next-order") == b"13"


def test_tables_subset_limits_adds_and_queries(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", plan_for()) as index:
        index.add(entry(1, 99), tables=[0])
        assert [c.entry.event_id for c in index.query(99, 0, tables=[0])] == ["ev-1"]
        assert index.query(99, 0, tables=[1, 2]) == []
        assert len(index.query(99, 0)) == 1
        with pytest.raises(ValueError, match="table 10"):
            index.query(99, 0, tables=[10])


def test_max_distance_beyond_k_returns_key_sharing_entries_only_within_it(tmp_path: Path) -> None:
    plan = parse_plan("4x16", k=3, expected=1)
    probe = 0
    near = (1 << 10) - 1  # 10 low bits: first three 16-bit blocks untouched
    with BlockIndex(tmp_path / "ix", plan) as index:
        index.add(entry(1, near))
        assert [c.distance for c in index.query(probe, 10)] == [10]
        assert index.query(probe, 9) == []


def test_readding_an_event_with_a_new_fingerprint_drops_the_old_one(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", plan_for()) as index:
        index.add(entry(1, 0))
        index.add(entry(1, FULL))
        assert index.query(0, 3) == []
        assert [c.entry.fingerprint for c in index.query(FULL, 3)] == [FULL]


def test_an_exact_only_add_of_a_known_id_leaves_its_table_entry_alone(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", plan_for()) as index:
        long_text = entry(1, 0)
        index.add(long_text)
        short_text = Entry(long_text.event_id, FULL, 7, 0, b"short")
        index.add(short_text, tables=[], exact_keys=[5])
        assert [c.entry for c in index.query(0, 3)] == [long_text]
        assert index.query_exact(5) == [short_text]


def test_flush_then_disk_bytes_are_counted(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", plan_for(), wal=False) as index:
        for i in range(100):
            index.add(entry(i, random.Random(i).getrandbits(64)))
        index.flush()
        assert index.disk_bytes() > 100 * 10 * 13
        assert len(index.query(random.Random(5).getrandbits(64), 0)) == 1
