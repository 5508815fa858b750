"""The other-languages probe's copies carry the edit they are named for, and it scores them so."""

from __future__ import annotations

from bench import languages

TEXTS = [f"メッセージ番号{i}はこのシステムではサポートされていません" for i in range(16)]


def test_every_second_message_gets_a_copy_with_each_edit_in_turn() -> None:
    events = languages.build(TEXTS)
    copies = [e for e in events if e.edit is not None]
    assert [e.edit for e in copies] == list(languages.EDITS) * 2
    text = {e.id: e.text for e in events}
    for copy in copies:
        original = text[str(copy.original)]
        if copy.edit == "typo":
            assert len(copy.text) == len(original)
            assert sum(a != b for a, b in zip(copy.text, original, strict=True)) <= 1
        elif copy.edit == "cut":
            assert original.startswith(copy.text) and 0.7 * len(original) - 1 <= len(copy.text) < len(original)
        elif copy.edit == "source":
            assert copy.text.startswith(original) and copy.text[len(original) :] in languages.SOURCES
        else:
            assert copy.text.endswith(original) and copy.text[: -len(original)] in languages.HEADERS


def test_a_copy_counts_when_called_a_copy_of_its_own_message_only() -> None:
    events = languages.build(TEXTS[:4])  # o0, c0 (typo), o1, o2, c2 (cut), o3
    said: dict[str, str | None] = {"c0": "o0", "c2": "o1", "o3": "o1"}
    recall, joined = languages.score(events, said)
    assert recall == {"typo": 1.0, "cut": 0.0}
    assert sorted(e.id for e in joined) == ["c2", "o3"]
