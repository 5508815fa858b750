"""The decision on one pair of texts, as a user would ask it: is this a copy of that?"""

from __future__ import annotations

from worker.engine.fingerprint import fingerprint
from worker.engine.match import Candidate, Entry, accepts
from worker.engine.sketch import SKETCH_BYTES, WORDS_FLAG, _leads_end
from worker.settings import Settings

# A review of 219 characters, under ``short_chars``, and what a repost adds to it: 83 more.
REVIEW = (
    "这次带父母去海边小城住了三晚，选的是离码头不远的一家民宿。房间不大，但收拾得很干净，窗外就能看到渔船进出。"
    "老板是本地人，每天早上都会推荐当天新鲜的海货，还帮我们订了去岛上的船票，又借给我们两辆自行车沿着海堤骑了一圈。"
    "唯一的不足是隔音一般，周末楼下有人唱歌到很晚，父亲睡得不太好。早餐的豆浆和煎饼味道不错，价格也算公道。"
    "退房那天下着小雨，老板开车把我们送到了汽车站，还塞给母亲一袋自己晒的虾干。"
    "总体来说性价比挺高，下次带孩子来还会考虑这里。"
)
ADDED = (
    "另外提醒一句，旺季一定要提前两周预订，临时去基本订不到靠海的房间。停车位只有四个，自驾的朋友最好先打电话问清楚。"
    "附近的夜市步行十分钟就到，海鲜烧烤很便宜，但要看好秤。"
)
HEADER = "【海边民宿】\n"
# A post header of three fields, and two more sentences a repost may add after ``ADDED``.
FIELDS = "10月20日 晚安小镇 发布 "
MORE = (
    "附近的夜市步行十分钟就到，海鲜烧烤很便宜，但要看好秤。周末去的话建议早点出门，景区门口的停车场十点以后基本就满了。"
    "岛上的轮渡最后一班是下午五点半，千万别错过。"
)


def is_duplicate(a: str, b: str, settings: Settings | None = None) -> bool:
    """Whether ``a``, arriving after ``b``, is verified as its copy (the distance unbounded,
    as for a candidate an exact key nominates)."""
    settings = settings or Settings()
    probe, stored = fingerprint(a, settings), fingerprint(b, settings)
    entry = Entry("stored", stored.simhash, 0, 0, stored.sketch)
    return accepts(probe, Candidate(entry, (probe.simhash ^ stored.simhash).bit_count()), settings) is not None


def without_words(sketch: bytes) -> bytes:
    """A short text's sketch as entries stored before listed texts kept their words."""
    if not sketch[SKETCH_BYTES] & WORDS_FLAG:
        return sketch
    flags = bytes((sketch[SKETCH_BYTES] & ~WORDS_FLAG,))
    words = _leads_end(sketch)  # where the words' length byte is: after the mask and the lead windows
    lists = sketch[words + 1 + sketch[words] :]
    return sketch[:SKETCH_BYTES] + flags + sketch[SKETCH_BYTES + 1 : words] + lists
