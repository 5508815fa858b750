"""The interleaved fingerprint bench: each round one ratio, each tree first in every other round."""

from __future__ import annotations

from bench.fingerprint_ab import compare


class Clock:
    """A tree whose turns take the given seconds, in order, and a log of whose turn it was."""

    def __init__(self, name: str, seconds: list[float], log: list[str]) -> None:
        self.name, self.seconds, self.log = name, seconds, log

    def run(self) -> float:
        self.log.append(self.name)
        return self.seconds.pop(0)


def test_each_round_is_one_ratio_and_the_first_turn_alternates() -> None:
    log: list[str] = []
    this = Clock("this", [1.0, 2.0, 1.0], log)
    before = Clock("before", [2.0, 2.0, 4.0], log)
    ours, theirs, ratios = compare(this, before, fingerprints=100, rounds=3)
    assert log == ["this", "before", "before", "this", "this", "before"]
    assert ratios == [2.0, 1.0, 4.0]  # this tree's docs/s over the tree before's, round by round
    assert (ours, theirs) == (100.0, 50.0)  # medians of 100, 50, 100 and of 50, 50, 25
