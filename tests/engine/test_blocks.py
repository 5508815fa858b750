"""Properties of the permuted-block plan: every fingerprint within k bits shares a table key."""

from __future__ import annotations

from itertools import combinations
from math import comb, prod

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.engine.blocks import MAX_KEY_BITS, MAX_TABLES, Plan, Table, hamming, parse_plan, plan_for

F = 64
FULL = (1 << F) - 1

PLANS: dict[str, Plan] = {
    "k1-auto": plan_for(k=1, expected=10_000_000),
    "k2-auto": plan_for(k=2, expected=10_000_000),
    "k2-small": plan_for(k=2, expected=100_000),
    "k3-4x16": parse_plan("4x16", k=3, expected=10_000_000),
    "k3-10x25": parse_plan("10x25", k=3, expected=10_000_000),
    "k3-16x28": parse_plan("16x28", k=3, expected=10_000_000),
    "k3-20x32": parse_plan("20x32", k=3, expected=10_000_000),
    "k3-auto": plan_for(k=3, expected=10_000_000),
    "k4-auto": plan_for(k=4, expected=10_000_000),
    "k4-small": plan_for(k=4, expected=1_000),
    "k5-auto": plan_for(k=5, expected=10_000_000),
    "k6-auto": plan_for(k=6, expected=10_000_000),
}

fingerprints = st.one_of(st.sampled_from([0, FULL, 0x5555555555555555, 1, 1 << 63]), st.integers(0, FULL))


def _blocks(plan: Plan) -> list[list[int]]:
    """The plan's first-level blocks, recovered from its levels."""
    b = plan.levels[0]
    size, extra = divmod(F, b)
    out, start = [], 0
    for i in range(b):
        end = start + size + (1 if i < extra else 0)
        out.append(list(range(start, end)))
        start = end
    return out


@st.composite
def plan_and_flips(draw: st.DrawFn) -> tuple[Plan, int, int]:
    """A plan, a fingerprint and a mask of at most k flipped bits, drawn randomly or adversarially."""
    plan = draw(st.sampled_from(list(PLANS.values())))
    fp = draw(fingerprints)
    how = draw(st.sampled_from(["random", "one-block", "spread", "key-bits", "edges"]))
    k = plan.k
    if how == "random":
        positions = draw(st.sets(st.integers(0, F - 1), max_size=k))
    elif how == "one-block":
        block = draw(st.sampled_from(_blocks(plan)))
        positions = draw(st.sets(st.sampled_from(block), max_size=min(k, len(block))))
    elif how == "spread":
        chosen = draw(st.permutations(_blocks(plan)))[:k]
        positions = {draw(st.sampled_from(block)) for block in chosen}
    elif how == "key-bits":
        table = draw(st.sampled_from(plan.tables))
        positions = draw(st.sets(st.sampled_from(table.positions), max_size=k))
    else:
        positions = draw(st.sets(st.sampled_from([0, 1, 31, 32, 62, 63]), max_size=k))
    mask = 0
    for p in positions:
        mask |= 1 << (F - 1 - p)
    return plan, fp, mask


@given(plan_and_flips())
@settings(max_examples=600)
def test_fingerprints_within_k_share_a_key(case: tuple[Plan, int, int]) -> None:
    plan, fp, mask = case
    other = fp ^ mask
    assert hamming(fp, other) <= plan.k
    assert any(a == b for a, b in zip(plan.keys(fp), plan.keys(other), strict=False))


@pytest.mark.parametrize("name", ["k1-auto", "k2-auto", "k2-small", "k3-4x16", "k3-10x25", "k3-16x28", "k3-20x32"])
def test_guarantee_holds_for_every_set_of_k_flipped_bits(name: str) -> None:
    """Exhaustive: for each set of <= k bit positions, some table's key avoids all of them."""
    plan = PLANS[name]
    table_masks = [sum(1 << p for p in t.positions) for t in plan.tables]
    for size in range(plan.k + 1):
        for flipped in combinations(range(F), size):
            hit = sum(1 << p for p in flipped)
            assert any(t & hit == 0 for t in table_masks), (name, flipped)


def test_k_plus_one_spread_flips_can_escape_the_smallest_plan() -> None:
    """The bound is tight: one flip in each of the 4 blocks of 4x16 changes every key."""
    plan = PLANS["k3-4x16"]
    fp = 0x0123456789ABCDEF
    other = fp ^ ((1 << 63) | (1 << 47) | (1 << 31) | (1 << 15))
    assert hamming(fp, other) == 4
    assert all(a != b for a, b in zip(plan.keys(fp), plan.keys(other), strict=False))


@given(st.sampled_from(list(PLANS.values())), fingerprints)
@settings(max_examples=200)
def test_key_is_the_leading_bits_of_the_permuted_fingerprint(plan: Plan, fp: int) -> None:
    for table, key in zip(plan.tables, plan.keys(fp), strict=False):
        assert sorted(table.permutation()) == list(range(F))
        assert key == table.permute(fp) >> (F - table.key_bits)
        assert 0 <= key < 1 << table.key_bits
        assert table.key_bits <= MAX_KEY_BITS


@given(st.integers(0, FULL), st.integers(0, FULL))
def test_hamming_counts_differing_bits(a: int, b: int) -> None:
    assert hamming(a, b) == bin(a ^ b).count("1") == hamming(b, a)
    assert hamming(a, a) == 0


def test_paper_table_counts_and_key_widths_for_k3() -> None:
    def widths(p: Plan) -> tuple[int, int, int]:
        return len(p.tables), min(t.key_bits for t in p.tables), max(t.key_bits for t in p.tables)

    assert widths(PLANS["k3-4x16"]) == (4, 16, 16)
    assert widths(PLANS["k3-10x25"]) == (10, 25, 26)
    assert widths(PLANS["k3-16x28"]) == (16, 28, 28)
    assert widths(PLANS["k3-20x32"]) == (20, 31, 32)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("expected", [1_000, 1_000_000, 10_000_000, 1_000_000_000])
def test_planner_uses_k_plus_one_to_k_plus_three_blocks(k: int, expected: int) -> None:
    plan = plan_for(k=k, expected=expected)
    assert plan.k == k
    assert all(k + 1 <= b <= k + 3 for b in plan.levels)
    assert len(plan.tables) == prod(comb(b, k) for b in plan.levels)
    assert all(t.key_bits <= MAX_KEY_BITS for t in plan.tables)
    assert len(plan.tables) <= MAX_TABLES


def test_planner_trades_tables_for_bucket_size_as_the_paper_does() -> None:
    assert plan_for(k=3, expected=100_000).name == "4x16"
    assert plan_for(k=3, expected=10_000_000).name == "10x25..26"
    assert plan_for(k=3, expected=1_000_000_000).name == "16x28"
    assert plan_for(k=3, expected=8_000_000_000).name == "20x31..32"
    for expected in (1_000, 1_000_000, 100_000_000):
        assert plan_for(k=3, expected=expected).expected_bucket() <= 4


def test_explain_states_blocks_tables_bits_and_bucket() -> None:
    text = plan_for(k=3, expected=10_000_000).explain()
    assert "5 blocks (13,13,13,13,12)" in text
    assert "10 tables" in text
    assert "25..26 bits" in text
    assert "10,000,000 / 2^25 = 0.298" in text
    assert "4x16 (bucket 153)" in text
    two_level = parse_plan("16x28", k=3, expected=1_000_000_000).explain()
    assert "cut again into 4 blocks" in two_level


def test_parse_plan_auto_and_explicit() -> None:
    assert parse_plan("auto", k=3, expected=10_000_000) == plan_for(k=3, expected=10_000_000)
    assert parse_plan(" 10X26 ", k=3, expected=1) == PLANS["k3-10x25"]
    assert parse_plan("2x32", k=1, expected=1).name == "2x32"


@pytest.mark.parametrize("spec", ["10x30", "5x16", "4x17", "0x0", "20x33"])
def test_parse_plan_rejects_plans_that_cannot_guarantee_k(spec: str) -> None:
    with pytest.raises(ValueError, match="cannot guarantee k=3.*4x16, 10x25..26"):
        parse_plan(spec, k=3, expected=10_000_000)


@pytest.mark.parametrize("spec", ["", "ten", "10x", "x25", "10*25", "-4x16"])
def test_parse_plan_rejects_malformed_specs(spec: str) -> None:
    with pytest.raises(ValueError, match="neither 'auto' nor 'TxB'"):
        parse_plan(spec, k=3, expected=1)


@pytest.mark.parametrize("k", [0, 32, -1])
def test_invalid_k_is_rejected(k: int) -> None:
    with pytest.raises(ValueError, match="k="):
        plan_for(k=k)


@pytest.mark.parametrize("fp", [-1, 1 << 64])
def test_keys_reject_fingerprints_outside_64_bits(fp: int) -> None:
    with pytest.raises(ValueError, match="64-bit"):
        PLANS["k3-auto"].keys(fp)


def test_remembered_keys_match_the_tables_and_survive_the_memo_filling_up() -> None:
    plan = PLANS["k3-auto"]
    fps = [(i * 0x9E3779B97F4A7C15) & FULL for i in range(10_000)]  # more than the memo holds
    for _ in range(2):
        for fp in fps:
            assert plan.keys(fp) == tuple(t.key(fp) for t in plan.tables)
    with pytest.raises(ValueError, match="64-bit"):
        plan.keys(-1)


@pytest.mark.parametrize("name", list(PLANS))
def test_plan_survives_its_json_description(name: str) -> None:
    plan = PLANS[name]
    again = Plan.from_json(plan.to_json())
    assert again == plan
    assert again.keys(0xDEADBEEFCAFEF00D) == plan.keys(0xDEADBEEFCAFEF00D)


def test_table_rejects_repeated_or_out_of_range_positions() -> None:
    with pytest.raises(ValueError):
        Table(64, (1, 1))
    with pytest.raises(ValueError):
        Table(64, (64,))
