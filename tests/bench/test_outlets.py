"""The outlets probe: a text and its copy carry the names of two different outlets."""

from __future__ import annotations

from bench import outlets


def test_a_copy_is_its_text_under_another_outlets_name() -> None:
    texts = {"en": ["Storm closes schools across the north coast"], "zh": ["北方沿海多地因暴雨停课"]}
    events = outlets.build(texts)
    by_id = {e.id: e for e in events}
    for copy in (e for e in events if e.original is not None):
        original = by_id[copy.original]
        text = texts[copy.lang][0]
        first, second = original.text[len(text) :], copy.text[len(text) :]
        assert original.text.startswith(text) and copy.text.startswith(text)
        assert first != second
        assert any(first.endswith(name) for name in outlets.OUTLETS[copy.lang])
        assert any(second.endswith(name) for name in outlets.OUTLETS[copy.lang])
