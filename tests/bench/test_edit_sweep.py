"""The edit sweep: its lines and donors apart, and copies counted against their own line."""

from __future__ import annotations

import pytest

from bench import edit_sweep


def test_lines_and_donors_are_distinct_lines_of_the_installed_packages() -> None:
    lines, donors = edit_sweep.lines(11)
    if not lines:
        pytest.fail("no package descriptions or catalogs on this machine: the sweep has nothing to edit")
    assert len(set(lines)) == len(lines) and not set(lines) & set(donors)
    assert lines == edit_sweep.lines(11)[0], "the same seed gives the same lines"


def test_a_small_sweep_counts_each_copy_once_against_its_line() -> None:
    total, found, n_lines, called = edit_sweep.sweep(40, 11)
    assert n_lines == 40 and 0 <= called <= n_lines
    assert all(0 <= found[key] <= total[key] for key in total)
    assert {edit for edit, _ in total} <= set(edit_sweep.EDITS) and sum(total.values()) >= 40 * 5
    assert sum(found.values()) > sum(total.values()) // 2, "most copies of a line are found by any tree worth testing"
    shown = edit_sweep.render(total, found, n_lines, called)
    assert f"lines called copies of another line: {called} of 40" in shown
