"""Numbers that must agree: a template's reports with other figures are not copies (issue 28)."""

from __future__ import annotations

import itertools
import random

from tests.engine.pairs import is_duplicate
from worker.engine.fingerprint import fingerprint
from worker.engine.normalize import normalize
from worker.engine.numbers import MAX_NUMBER_TAGS, number_tags, numbers_mask
from worker.engine.sketch import SHORT_SKETCH_BYTES, SKETCH_BYTES, compare, plausible
from worker.settings import Settings

SETTINGS = Settings()


def _ops_report(v: list[int]) -> str:
    return (
        f"Daily operations report for cluster {v[0]}. Requests served: {v[1]} thousand, errors: {v[2]}, "
        f"median latency {v[3]} ms, p99 latency {v[4]} ms. Disk usage grew by {v[5]} GB and memory "
        f"peaked at {v[6]} GB across all nodes. The on-call engineer acknowledged {v[7]} pages and no "
        "incident was declared. Capacity planning notes: no action needed this week, the next review "
        "is scheduled with the platform team."
    )


def _market_close(v: list[int]) -> str:
    return (
        f"【收盘播报】沪深两市今日{'涨跌'[v[0] % 2]}幅分化，上证指数收报{v[1]}点，深证成指收报{v[2]}点，创业板指收报"
        f"{v[3]}点。两市合计成交额{v[4]}亿元，较上一交易日{'增减'[v[5] % 2]}加{v[5]}亿元。北向资金全天净流入{v[6]}"
        f"亿元。行业板块方面，半导体、汽车零部件、电力设备板块涨幅居前，银行、保险、房地产板块跌幅居前。个股方面，两市共有"
        f"{v[7]}只个股上涨，{v[8]}只个股下跌，{v[9]}只个股涨停。分析人士认为，短期市场仍以结构性行情为主，投资者应关注"
        "业绩确定性较高的优质公司，控制仓位，注意防范风险。以上内容仅供参考，不构成投资建议。市场有风险，投资需谨慎。"
        "本栏目每个交易日收盘后更新，欢迎关注我们的公众号获取更多市场资讯与深度分析，也欢迎在评论区留下您的看法。"
    )


def _figures(rng: random.Random, n: int) -> list[int]:
    return [rng.randint(10, 9999) for _ in range(n)]


def test_long_reports_of_one_template_are_long_texts_with_their_numbers() -> None:
    rng = random.Random(1)
    for text in (_ops_report(_figures(rng, 8)), _market_close(_figures(rng, 10))):
        fp = fingerprint(text, SETTINGS)
        assert fp.in_tables  # a long text: compared on its word sketch, not on characters
        assert SKETCH_BYTES < len(fp.sketch) < SHORT_SKETCH_BYTES


def test_reports_of_one_template_with_other_figures_are_not_copies() -> None:
    rng = random.Random(2)
    for template, n in ((_ops_report, 8), (_market_close, 10)):
        reports = [template(_figures(rng, n)) for _ in range(12)]
        passing = [(a, b) for a, b in itertools.permutations(reports, 2) if is_duplicate(a, b)]
        assert passing == []


def test_an_updated_report_or_story_is_still_a_copy() -> None:
    rng = random.Random(3)
    for template, n in ((_ops_report, 8), (_market_close, 10)):
        v = _figures(rng, n)
        updated = list(v)
        for i in rng.sample(range(1, n), 2):  # one or two figures revised, as a story's update
            updated[i] += 7
        assert is_duplicate(template(updated), template(v))
        assert is_duplicate(template(v), template(v))


def test_a_copy_that_loses_or_gains_figures_is_still_a_copy() -> None:
    v = _figures(random.Random(4), 10)
    story = _market_close(v)
    teaser = story[: len(story) * 3 // 4]  # cut mid-text: the figures after the cut are gone
    header = "2024年3月5日 15:05 来源：第一财经 阅读 1024 评论 36 转发 12\n" + story  # six figures more
    assert is_duplicate(teaser, story)
    assert is_duplicate(header, story)
    assert is_duplicate(story, header)


def test_number_tags_count_whole_distinct_numbers() -> None:
    assert number_tags(normalize("revenue rose 12% to 3.5 billion")) == b""  # two: too few to disagree on
    three = number_tags(normalize("12 apples, 30 pears and 45 plums, then 12 apples again"))
    assert len(three) == 2 * 3  # distinct numbers only
    cut = number_tags(normalize("12 apples, 30 pears and 45 plums, then 17"))  # the last one may be cut
    assert cut == three
    many = " ".join(f"item {n} costs {n + 1000}" for n in range(100, 200))
    assert len(number_tags(normalize(many))) == 2 * MAX_NUMBER_TAGS


def test_a_probe_passes_over_stored_alerts_whose_numbers_rule_them_out() -> None:
    alert = fingerprint("ALERT: disk usage on web-068 reached 98% at 14:54 UTC, threshold 80%", SETTINGS).sketch
    other = fingerprint("ALERT: disk usage on web-068 reached 91% at 14:07 UTC, threshold 80%", SETTINGS).sketch
    cut = fingerprint("ALERT: disk usage on web-068 reached 98% at 14:54 UTC", SETTINGS).sketch
    keep = plausible(alert, own="a1")
    assert not keep("a2", other) and compare(alert, other).resemblance == 0.0, "refused on its numbers alone"
    assert keep("a3", cut) and keep("a1", other), "a cut keeps its numbers; the probe's own entry is kept"
    story = fingerprint(_ops_report(list(range(10, 18))), SETTINGS).sketch
    assert plausible(story)("r", other), "a longer text's probe reads every candidate"


def test_a_number_is_cut_only_where_it_ends_the_text() -> None:
    """The same digits inside a later word ("gate12") do not make the number before them the
    last one, which might be cut: it stays whole, and tells two routes apart."""
    a, b = normalize("Route 12 leaves from gate12"), normalize("Route 13 leaves from gate12")
    mask_a, mask_b = numbers_mask(a), numbers_mask(b)
    assert mask_a & ~mask_b and mask_b & ~mask_a, "neither mask lies inside the other"
    assert not is_duplicate("Route 12 leaves from gate12", "Route 13 leaves from gate12")
    whole, cut = numbers_mask(normalize("Route 12 leaves now")), numbers_mask(normalize("Route 12"))
    assert cut & whole == cut and cut != whole, "a number ending the text is only its first digit's bit"
