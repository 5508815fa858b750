"""The CLI's argparse types: numbers refused in the user's words."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

_Number = TypeVar("_Number", int, float)


def _bounded(kind: type[_Number], least: _Number, above: bool, what: str) -> Callable[[str], _Number]:
    """An argparse type: a number from ``least`` on (past it when ``above``). Every refusal is a
    message of its own: a ValueError read "invalid _positive value", naming a function of ours."""

    def parse(raw: str) -> _Number:
        try:
            value = kind(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{raw!r} is not {'a whole number' if kind is int else 'a number'}"
            ) from None
        if not (value > least if above else value >= least) or value == math.inf:  # NaN is neither
            raise argparse.ArgumentTypeError(f"{raw} is not {what}")
        return value

    return parse


# produce: from one event in about 17 minutes (a slower pace overflowed its sleep) to unpaced.
positive_rate = _bounded(float, 0.001, False, "a rate of at least 0.001 events/s")
# tail: --max 0 would end before the first record; --timeout 0 ends once nothing is waiting.
record_count = _bounded(int, 1, False, "a number of records (1 or more)")
seconds = _bounded(float, 0.0, False, "a number of seconds (0 or more)")
