"""The negations probe: a post saying the opposite, and a post in another style of negation."""

from __future__ import annotations

import pytest

from bench import negations


@pytest.mark.parametrize(
    ("text", "opposite"),
    [
        ("Fed will raise rates this year", "Fed will not raise rates this year"),
        ("Fed will not raise rates this year", "Fed will raise rates this year"),
        ("We can't get it cheaper", None),  # a contraction: "can not't" is no post
        ("Storm closes schools", None),  # no auxiliary
    ],
)
def test_a_flip_puts_not_after_the_first_auxiliary_or_takes_it_out(text: str, opposite: str | None) -> None:
    assert negations.flipped(text) == opposite


@pytest.mark.parametrize(
    ("text", "other_style"),
    [
        ("Bush does not care. It is not over", "Bush doesn't care. It isn't over"),
        ("Bush doesn't care and won't wait", "Bush does not care and will not wait"),
        ("Storm closes schools", None),
    ],
)
def test_a_styled_copy_contracts_negations_or_writes_them_out(text: str, other_style: str | None) -> None:
    assert negations.styled(text) == other_style


def test_build_makes_a_flip_of_each_text_that_has_one() -> None:
    events = negations.build("flipped", ["Fed will raise rates", "Storm closes schools"])
    assert [(e.id, e.text, e.original) for e in events] == [
        ("en0", "Fed will raise rates", None),
        ("en1", "Storm closes schools", None),
        ("flipped:en0", "Fed will not raise rates", "en0"),
    ]
