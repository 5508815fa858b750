"""The labels probe: a text and its copy carry two different labels of one kind."""

from __future__ import annotations

import pytest

from bench import labels

TEXTS = {"en": ["Storm closes schools across the north coast"], "zh": ["北方沿海多地因暴雨停课"]}


@pytest.mark.parametrize("kind", list(labels.LABELS))
def test_a_copy_is_its_text_under_another_label_of_the_kind(kind: str) -> None:
    events = labels.build(kind, TEXTS)
    by_id = {e.id: e for e in events}
    copies = [e for e in events if e.original is not None]
    assert {e.lang for e in copies} == set(labels.LABELS[kind]), "each language the kind has, and no other"
    for copy in copies:
        original, text = by_id[copy.original], TEXTS[copy.lang][0]
        assert text in original.text and text in copy.text and original.text != copy.text
        for event in (original, copy):
            before, _, after = event.text.partition(text)
            assert (before, after) in labels.LABELS[kind][copy.lang]


def test_an_unknown_label_is_refused_with_the_kinds_to_choose_from(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        labels.main(["--only", "outlet,nosuch"])
    assert exit_info.value.code == 2
    assert "unknown labels ['nosuch']" in capsys.readouterr().err
