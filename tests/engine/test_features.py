"""features(), hashed_features(), idf() and the stopword lists: what the fingerprint is computed from."""

from __future__ import annotations

import gzip
import importlib.util
import math
import statistics
from pathlib import Path

import pytest

from scripts import build_en_idf
from worker.engine.features import SHINGLE_SEP, HashedFeatures, features, hashed_features, skeleton
from worker.engine.idf import idf, vocabulary
from worker.engine.normalize import normalize
from worker.engine.segment import tokenize
from worker.engine.simhash import feature_hash
from worker.engine.stopwords import is_stopword, stopwords

ROOT = Path(__file__).resolve().parents[2]
EN_TABLE = ROOT / "worker" / "data" / "idf_en.txt.gz"

ZH = "新华社北京1月5日电 国务院总理主持召开国务院常务会议,研究部署推动经济持续回升向好的政策措施。"
EN = "The Federal Reserve held interest rates steady on Wednesday, but signaled it could cut rates."


def feats(text: str, n: int = 2) -> dict[str, float]:
    return features(tokenize(normalize(text)), n)


def test_same_tokens_give_the_same_features_in_the_same_order() -> None:
    for text in (ZH, EN):
        first, second = feats(text), feats(text)
        assert list(first.items()) == list(second.items())


def test_all_weights_are_positive() -> None:
    for text in (ZH, EN, "的 了 是 the of and"):
        for n in (1, 2, 3):
            assert all(w > 0 for w in feats(text, n).values())


def test_stopwords_are_not_unigrams_but_stay_inside_shingles() -> None:
    tokens = ["the", "bank", "of", "england"]
    result = features(tokens, 2)
    assert "the" not in result and "of" not in result
    assert {"bank", "england"} <= result.keys()
    assert f"bank{SHINGLE_SEP}of" in result and f"of{SHINGLE_SEP}england" in result
    zh = features(["我们", "的", "经济"], 2)
    assert "的" not in zh and f"的{SHINGLE_SEP}经济" in zh


def test_shingles_see_word_order_unigrams_do_not() -> None:
    forward = features(["dog", "bites", "man"], 2)
    backward = features(["man", "bites", "dog"], 2)
    unigrams = {"dog", "bites", "man"}
    assert {k: v for k, v in forward.items() if k in unigrams} == {k: v for k, v in backward.items() if k in unigrams}
    assert forward.keys() - unigrams == {f"dog{SHINGLE_SEP}bites", f"bites{SHINGLE_SEP}man"}
    assert backward.keys() - unigrams == {f"man{SHINGLE_SEP}bites", f"bites{SHINGLE_SEP}dog"}


def test_n_sets_the_shingle_length() -> None:
    tokens = ["a1", "b2", "c3", "d4"]
    assert set(features(tokens, 1)) == set(tokens)
    assert set(features(tokens, 3)) - set(tokens) == {
        SHINGLE_SEP.join(["a1", "b2", "c3"]),
        SHINGLE_SEP.join(["b2", "c3", "d4"]),
    }
    assert set(features(["a1", "b2"], 3)) == {"a1", "b2"}
    with pytest.raises(ValueError):
        features(tokens, 0)


def test_weight_is_term_frequency_times_idf() -> None:
    once = features(["量子", "计算"], 1)
    twice = features(["量子", "计算", "量子"], 1)
    assert once["量子"] == pytest.approx(idf("量子"))
    assert twice["量子"] == pytest.approx(2 * idf("量子"))
    assert twice["计算"] == pytest.approx(once["计算"])


def test_shingle_weight_is_the_mean_idf_of_its_words() -> None:
    result = features(["interest", "of", "rates"], 3)
    gram = SHINGLE_SEP.join(["interest", "of", "rates"])
    assert result[gram] == pytest.approx((idf("interest") + idf("of") + idf("rates")) / 3)


def test_separator_never_occurs_in_tokens() -> None:
    tokens = tokenize(normalize(f"a{SHINGLE_SEP}b 中{SHINGLE_SEP}文 {ZH} {EN}"))
    assert tokens and not any(SHINGLE_SEP in t for t in tokens)


def test_rare_words_weigh_more_than_common_ones() -> None:
    assert idf("量子纠缠") > idf("经济") > idf("的")
    assert idf("anarchism") > idf("government") > idf("the")


def test_chinese_idf_comes_from_jiebas_table_with_its_median_for_unknown_words() -> None:
    spec = importlib.util.find_spec("jieba")
    assert spec is not None and spec.submodule_search_locations
    path = Path(spec.submodule_search_locations[0]) / "analyse" / "idf.txt"
    table = dict(line.split() for line in path.read_text(encoding="utf-8").splitlines())
    assert idf("经济") == pytest.approx(float(table["经济"]))
    assert "鑫鑫鑫鑫" not in table
    assert idf("鑫鑫鑫鑫") == pytest.approx(statistics.median(map(float, table.values())))


def test_english_idf_follows_the_documented_formula() -> None:
    lines = gzip.decompress(EN_TABLE.read_bytes()).decode("utf-8").splitlines()
    n_docs = int(next(line for line in lines if line.startswith("# documents:")).split(":")[1])
    df = dict(line.split("\t") for line in lines if not line.startswith("#"))
    assert n_docs > 100 and len(df) > 10_000
    assert all(int(v) >= 2 for v in df.values())
    assert idf("the") == pytest.approx(math.log((n_docs + 1) / (int(df["the"]) + 1)) + 1)
    unseen = "zqxjkvw"
    assert unseen not in df
    assert idf(unseen) == pytest.approx(math.log((n_docs + 1) / 2) + 1)
    assert idf(unseen) > max(idf(t) for t in df)


def test_shipped_english_table_is_what_the_build_script_produces(tmp_path: Path) -> None:
    """Catches a table left stale after a change to normalize() or tokenize()."""
    out = tmp_path / "idf_en.txt.gz"
    build_en_idf.main(["build_en_idf.py", str(out)])
    assert out.read_bytes() == EN_TABLE.read_bytes()


def test_stopword_lists_cover_both_languages_and_are_normalised() -> None:
    words = stopwords()
    assert {"the", "of", "and", "it's", "的", "了", "是", "我们"} <= words
    assert 300 < len(words) < 800
    assert all(tokenize(normalize(w)) == [w] for w in words)
    assert is_stopword("the") and not is_stopword("economy")


def merged(hashed: HashedFeatures) -> dict[int, float]:
    """Rows of ``hashed_features`` with equal hashes summed: one weight per feature."""
    out: dict[int, float] = {}
    for h, w in zip(hashed.hashes.tolist(), hashed.weights.tolist(), strict=False):
        out[h] = out.get(h, 0.0) + w
    return out


@pytest.mark.parametrize("fold", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_hashed_features_are_the_same_features_and_weights(n: int, fold: bool) -> None:
    long_text = f"{ZH} {EN} {ZH} unknownword zqxjkvw 鑫鑫鑫鑫 the of 的 rates raets"
    for text in (ZH, EN, long_text):
        tokens = tokenize(normalize(text))
        readable = features(tokens, n, fold)
        hashed = hashed_features(tokens, n, fold=fold)
        by_hash = merged(hashed)
        assert hashed.words == len(set(tokens))
        assert len(by_hash) == len(readable)
        unigrams = {feature_hash(f): w for f, w in readable.items() if SHINGLE_SEP not in f}
        for h, w in unigrams.items():
            assert by_hash[h] == pytest.approx(w, rel=1e-6)
        shingles = sorted(w for f, w in readable.items() if SHINGLE_SEP in f)
        assert sorted(w for h, w in by_hash.items() if h not in unigrams) == pytest.approx(shingles, rel=1e-6)


def test_hashed_features_weigh_stopwords_unknown_words_and_tf() -> None:
    tokens = ["the", "zqxjkvw", "鑫鑫鑫鑫", "经济", "经济", "of", "我们"]
    hashed = merged(hashed_features(tokens, 1))
    assert feature_hash("the") not in hashed and feature_hash("我们") not in hashed and feature_hash("of") not in hashed
    assert hashed[feature_hash("zqxjkvw")] == pytest.approx(idf("zqxjkvw"))
    assert hashed[feature_hash("鑫鑫鑫鑫")] == pytest.approx(idf("鑫鑫鑫鑫"))
    assert hashed[feature_hash("经济")] == pytest.approx(2 * idf("经济"), rel=1e-6)


def test_hashed_shingles_keep_word_order_and_length() -> None:
    def grams(tokens: list[str], n: int) -> set[int]:
        hashed = hashed_features(tokens, n)
        return set(hashed.hashes.tolist()) - {feature_hash(t) for t in tokens}

    forward, backward = grams(["dog", "bites", "man"], 2), grams(["man", "bites", "dog"], 2)
    assert len(forward) == 2 and not forward & backward
    assert not grams(["a1", "b2", "c3"], 2) & grams(["a1", "b2", "c3"], 3)
    assert grams(["aa", "aa", "aa"], 2) == grams(["aa", "aa"], 2)
    assert hashed_features([], 2).hashes.size == 0 and hashed_features([], 2).words == 0
    with pytest.raises(ValueError):
        hashed_features(["a"], 0)


def test_stopwords_missing_from_the_idf_tables_are_still_dropped() -> None:
    missing = sorted(w for w in stopwords() if w not in vocabulary().rows)
    assert missing
    hashed = merged(hashed_features(missing + ["经济"], 1))
    assert set(hashed) == {feature_hash("经济")}


def test_a_word_folds_to_its_first_letter_and_consonants_once_each() -> None:
    # Slips a copy makes: a doubled or dropped letter, a mistyped vowel, a swap around a vowel.
    for word, slipped in (("tomorrow", "tommorow"), ("the", "teh"), ("receive", "recieve"), ("rates", "raets")):
        assert skeleton(word) == skeleton(slipped)
    assert [skeleton(w) for w in ("tomorrow", "llama", "aardvark", "queue")] == ["tmrw", "lm", "ardvrk", "q"]
    # Not words of Latin letters, or too short to fold: kept as they are.
    for token in ("is", "ai", "x86", "café", "5g", "经济", "u.s", "e-mail"):
        assert skeleton(token) == token
    # A consonant mistyped is still another word.
    assert skeleton("rates") != skeleton("tares") and skeleton("action") != skeleton("atcion")


def test_folded_words_keep_their_own_weights() -> None:
    tokens = ["central", "bank", "raises", "rates"]
    plain, folded = features(tokens, 1), features(tokens, 1, fold=True)
    assert sorted(folded) == sorted(skeleton(t) for t in tokens)
    assert sorted(folded.values()) == pytest.approx(sorted(plain.values()))
