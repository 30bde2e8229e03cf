"""The race: lanes and repeats on the tiny models, and the medians, ranges, noise note, headline
and replay computed from hand-built runs whose every time is known."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
import torch
from tiny_models import TinyPair
from ui_events import lengthened, plain_run, race_result, sample_run

from specviz.core.settings import GenerationSettings
from specviz.measure.race import iter_race
from specviz.measure.race_records import PLAIN_LANE
from specviz.measure.spread import NOISY_SPREAD, Spread
from specviz.views import race_html
from specviz.views import run_html as render

SETTINGS = GenerationSettings(gamma=3, max_new_tokens=10, stop_on_eos=False)


def _prompt(pair: TinyPair) -> torch.Tensor:
    return torch.tensor([pair.tokenizer.encode("def add(a, b): return a + b")])


# --- measured on the tiny pair -------------------------------------------------------------------


@pytest.fixture(scope="module")
def raced(tiny_pair: TinyPair) -> list:
    updates = iter_race(tiny_pair, _prompt(tiny_pair), SETTINGS, ["draft-model", "lookup"], 2)
    return list(updates)


def test_the_race_runs_its_lanes_interleaved_repeat_by_repeat(raced: list) -> None:
    runs = [u.message for u in raced if u.message.key == "progress.method_repeat"]
    order = [(m.values["name"].values.get("spec", PLAIN_LANE), m.values["repeat"]) for m in runs]
    assert order == [
        (PLAIN_LANE, 1), ("draft-model", 1), ("lookup", 1),
        (PLAIN_LANE, 2), ("draft-model", 2), ("lookup", 2),
    ]  # fmt: skip
    # Each drafter's lane is named by its kind and the spec it runs, in the reader's language.
    assert runs[1].text() == (
        "race: speculative decoding with Draft model (guesses) [draft-model] (1/2)"
    )
    assert "ドラフトモデル（推測） [draft-model]" in runs[1].text("ja")
    assert raced[0].message.key == "progress.warming_up"  # one short unmeasured run first
    assert [u.fraction for u in raced[1:]] == pytest.approx(
        [0, 1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6, 1]
    )


def test_every_lane_decodes_the_same_tokens_greedily_and_is_timed_by_the_engine(raced: list):
    result = raced[-1].result
    assert raced[-1].finished and result.complete and result.repeats == 2
    assert [lane.name for lane in result.lanes] == [PLAIN_LANE, "draft-model", "lookup"]
    plain_ids = result.plain.runs[0].outcome.token_ids
    for lane in result.lanes:
        assert [run.repeat for run in lane.runs] == [0, 1]
        for run in lane.runs:
            assert run.outcome.token_ids == plain_ids and len(plain_ids) == 10
            assert run.seconds == run.totals.elapsed_s + run.totals.prefill_s > 0
        speed = lane.tokens_per_s
        assert speed is not None and speed.low <= speed.median <= speed.high
    gain = result.gain("lookup")
    assert gain is not None and gain.speedup.count == 2
    # The CPU other programs took while it ran is recorded (Linux's /proc/stat), for firmness.
    assert result.others_share is not None and 0.0 <= result.others_share <= 1.0
    assert gain.firmness.label.text() == "inconclusive"  # 10 tokens a run
    assert "Every lane produced exactly the same tokens." in race_html.race_html(result)


def test_a_race_needs_a_drafter(tiny_pair: TinyPair) -> None:
    with pytest.raises(ValueError, match="at least one drafter"):
        iter_race(tiny_pair, _prompt(tiny_pair), SETTINGS, [])


# --- medians, ranges and the noise note from known times ------------------------------------------


def test_spread_is_the_median_and_range() -> None:
    spread = Spread.of([1.0, 3.0, 2.0])
    assert (spread.median, spread.low, spread.high, spread.count) == (2.0, 1.0, 3.0, 3)
    assert spread.relative == pytest.approx(1.0) and spread.noisy
    assert not Spread.of([10.0, 10.5, 11.0]).noisy  # 10 % of the median
    assert NOISY_SPREAD == 0.15
    assert Spread.of([10.0, 10.0, 11.6]).noisy and not Spread.of([10.0, 10.0, 11.4]).noisy
    assert Spread.of([4.0]).relative == 0.0
    with pytest.raises(ValueError):
        Spread.of([])


def test_speedup_is_the_ratio_of_the_median_speeds_with_the_paired_range() -> None:
    # plain 10, 5, 10 tok/s; the lane 20, 20, 10 tok/s -> medians 20 / 10, paired ratios 2, 4, 1.
    result = race_result([1.0, 2.0, 1.0], {"lookup": [1.0, 1.0, 2.0]})
    gain = result.gain("lookup")
    assert gain is not None
    assert (gain.speedup.median, gain.speedup.low, gain.speedup.high) == pytest.approx((2, 1, 4))
    # Where the median of the ratios (0.5, 2, 2: 2) and the ratio of the medians part, the
    # headline is the ratio of the medians the lanes show: plain 10, 10, 5; lane 5, 20, 10.
    parted = race_result([1.0, 1.0, 2.0], {"lookup": [4.0, 1.0, 2.0]}).gain("lookup")
    assert parted is not None and parted.speedup.median == pytest.approx(10 / 10)
    assert (parted.speedup.low, parted.speedup.high) == pytest.approx((0.5, 2))
    assert gain.tokens == 9
    # 9 tokens at plain's pace less the lane's time: 0.9 - 0.45, 1.8 - 0.45, 0.9 - 0.9.
    saved = gain.seconds_saved
    assert (saved.median, saved.low, saved.high) == pytest.approx((0.45, 0.0, 1.35))
    lane = result.lane("lookup")
    assert lane is not None and lane.tokens_per_s == Spread(20.0, 10.0, 20.0, 3)
    assert lane.shown is not None and lane.shown.tokens_per_s == pytest.approx(20.0)
    assert result.gain(PLAIN_LANE) is None and result.gain("hybrid") is None


def test_a_quiet_race_has_no_noise_note_and_a_noisy_one_says_so() -> None:
    quiet = race_result([1.0, 1.02, 0.98], {"lookup": [1.0, 1.01, 0.99]})
    assert not quiet.noisy and "noisy" not in race_html.race_html(quiet)
    noisy = race_result([1.0, 1.5, 1.0], {"lookup": [1.0, 1.0, 1.0]})  # plain 10, 6.7, 10 tok/s
    assert noisy.noisy and noisy.widest_spread == pytest.approx(1 / 3)
    assert "The machine was noisy" in race_html.race_html(noisy)
    assert "differed by 33% of their median (more than 15%)" in race_html.race_html(noisy)


def _speedups(markup: str) -> dict[str, str]:
    return dict(re.findall(r'data-lane="([^"]+)" data-speedup="([0-9.]+)"', markup))


def test_the_headline_is_the_final_ratio_in_every_replay_frame() -> None:
    lanes = {"draft-model": [2.0, 2.0, 2.0], "lookup": [1.0] * 3}
    result = lengthened(race_result([1.0, 1.0, 1.0], lanes), 16)  # 144 tokens a run
    final = _speedups(race_html.race_html(result))
    assert final == {"draft-model": "1.000", "lookup": "2.000"}
    duration = race_html.replay_duration(result)
    assert duration == pytest.approx(0.9)  # plain decoding's and the slow lane's 0.9 s
    for at_s in (0.0, 0.2, 0.5, duration):
        frame = race_html.replay_frame(result, at_s)
        assert _speedups(frame) == final and "waiting" not in frame
    early = race_html.replay_frame(result, 0.32)
    # At 0.32 s: plain has 3 of 9 tokens, lookup (its first cycle ends at 0.175 s) 3 of 9.
    bars = dict(
        re.findall(
            r'data-lane="([^"]+)"><div class="sv-race-title">.*?data-progress="([0-9.]+)"', early
        )
    )
    assert bars == {PLAIN_LANE: "33.3", "draft-model": "0.0", "lookup": "33.3"}
    assert "range 2.00–2.00× over 3 repeats" in early


def test_no_headline_until_every_run_is_measured() -> None:
    partial = race_result([1.0, 1.0], {"lookup": [1.0]}, complete=False)
    markup = race_html.race_html(partial, status="measuring")
    assert "data-speedup" not in markup and "shown once every lane has been measured" in markup
    assert race_html.race_html(None).count('class="sv-race-panel ') == 0
    # Presentation mode's strip above the stream stays empty until then, then holds the headline.
    assert race_html.present_headline_html(partial) == race_html.present_headline_html(None) == ""
    done = lengthened(race_result([1.0, 1.0], {"lookup": [1.0, 1.0]}), 16)
    strip = race_html.present_headline_html(done, lang="ja")
    assert _speedups(strip) == {"lookup": "2.000"} and "倍" in strip


def test_a_lane_slower_than_plain_decoding_is_never_called_faster() -> None:
    slow = race_result([1.0, 1.0], {"lookup": [4.0, 4.0]})  # twice plain decoding's time
    slow = lengthened(slow, 16)
    strip = race_html.present_headline_html(slow)
    assert _speedups(strip) == {"lookup": "0.500"}
    assert "0.50× as fast (slower)" in strip and "faster" not in strip
    assert "faster" not in race_html.race_html(slow)
    assert "遅い" in race_html.present_headline_html(slow, lang="ja")


def test_the_lanes_show_their_median_speed_and_range_and_each_stream() -> None:
    markup = race_html.race_html(race_result([1.0, 2.0, 1.0], {"lookup": [1.0, 1.0, 2.0]}))
    assert "Plain decoding (target only)" in markup
    named = '<span class="sv-drafter" title="lookup">Prompt lookup (copies)</span>'
    assert f"Speculative decoding · {named}" in markup
    assert "<b>10.0 tok/s</b> (5.0–10.0)" in markup and "<b>20.0 tok/s</b> (10.0–20.0)" in markup
    assert markup.count('class="sv-tok sv-target"') == 9
    assert "3 times, interleaved" in markup
    assert "runs after the speculative run" not in markup


def test_a_lane_that_parts_from_plain_decoding_says_why() -> None:
    cycles = [replace(cycle, greedy=True) for cycle in sample_run()]
    tokens = [token for cycle in cycles for token in cycle.emitted]
    same = [
        replace(step, token=replace(step.token, token_id=token.token_id))
        for step, token in zip(plain_run(len(tokens)), tokens, strict=True)
    ]
    assert race_html.divergence_note(cycles, same, "lookup") == ""
    parted = [*same[:1], replace(same[1], token=replace(same[1].token, token_id=-1)), *same[2:]]
    note = race_html.divergence_note(cycles, parted, "lookup")
    assert note.startswith("lookup: ") and "part at token 2" in note and "float32" in note
    assert race_html.divergence_note(cycles, same[:3], "lookup") == ""  # plain not finished
    sampled = [replace(cycle, greedy=False) for cycle in cycles]
    assert "random numbers" in race_html.divergence_note(sampled, parted, "lookup")


# --- the counters lead with time ------------------------------------------------------------------


def test_the_first_counter_is_time_and_passes_saved_come_second_as_work() -> None:
    result = lengthened(race_result([1.0, 1.0, 1.0], {"lookup": [1.0, 1.0, 1.0]}), 16)
    totals = result.lane("lookup").shown.totals  # type: ignore[union-attr]
    counters = render.counters_html(totals, gain=result.gain("lookup"))
    order = re.findall(r'data-stat="(\w+)"', counters)
    assert order[:3] == ["speedup", "saved", "tokens"]
    assert "2.00×" in counters and "0.45 s saved, median of 3 raced runs · firm" in counters
    assert "target passes saved (work, not time)" in counters
    unraced = render.counters_html(totals)
    assert re.findall(r'data-stat="(\w+)"', unraced)[:2] == ["speedup", "saved"]
    assert "tick Race to time it" in unraced


# --- how firm the headline is, and the words it uses ----------------------------------------------


def _headline_text(markup: str) -> str:
    """The headline as read: tags dropped, entities as written."""
    head = re.search(r'<div class="sv-race-head">(.*?)</div>', markup)
    assert head is not None
    return re.sub(r"<[^>]+>", "", head.group(1))


def test_too_few_tokens_refuse_to_rank_in_both_languages() -> None:
    short = race_result([1.0, 1.0, 1.0], {"lookup": [1.0, 1.0, 1.0]})  # 9 tokens a run
    markup = race_html.race_html(short)
    assert _headline_text(markup) == (
        "Prompt lookup (copies): inconclusive"
        "too few tokens to rank: run with at least 32 new tokens (128 for a firm result); "
        "the shortest run made 9"
    )
    assert 'data-firmness="inconclusive"' in markup and "faster" not in markup
    assert 'data-lane="lookup" data-speedup="2.000"' in markup  # the measured ratio, for scripts
    japanese = _headline_text(race_html.race_html(short, lang="ja"))
    assert japanese.startswith(
        "プロンプト参照（コピー）：判定不能トークンが少なすぎて順位をつけられません"
    )
    assert "倍" not in japanese


def test_a_long_quiet_race_is_firm_and_says_why() -> None:
    firm = lengthened(race_result([1.0] * 3, {"lookup": [1.0] * 3}), 16, others_share=0.02)
    markup = race_html.race_html(firm)
    assert _headline_text(markup) == (
        "Prompt lookup (copies): 2.00× fasterrange 2.00–2.00× over 3 repeatsfirm"
    )
    assert (
        "How firm, Prompt lookup (copies): firm: 144 tokens a run; 3 repeats within 0%; "
        "other programs took 2% of the CPU." in markup
    )
    assert 'title="firm: 144 tokens a run; 3 repeats within 0%;' in markup  # the badge's tooltip
    japanese = _headline_text(race_html.race_html(firm, lang="ja"))
    assert japanese == "プロンプト参照（コピー）：2.00倍 速い3 回の反復での範囲 2.00–2.00×確か"


def test_other_programs_on_the_cpu_are_said_and_make_it_indicative() -> None:
    busy = lengthened(race_result([1.0] * 3, {"lookup": [1.0] * 3}), 16, others_share=0.4)
    markup = race_html.race_html(busy)
    assert _headline_text(markup).endswith("indicative")
    assert "other programs took 40% of the CPU during the race (firm up to 25%)" in markup
    assert "他のプログラムが CPU の 40% を使用" in race_html.race_html(busy, lang="ja")


def test_repeats_that_disagree_on_the_winner_rank_nothing() -> None:
    # The lane's ratios to plain decoding: 0.9, 1.1, 1.0 (20 tok/s at paces 2/0.9, 2/1.1, 2).
    mixed = race_result([1.0] * 3, {"lookup": [2 / 0.9, 2 / 1.1, 2.0]})
    markup = race_html.race_html(lengthened(mixed, 16))
    assert _headline_text(markup) == (
        "Prompt lookup (copies): inconclusivetoo close to rank: the repeats disagree on which "
        "lane wins; run more repeats on a quieter machine"
    )


def test_the_time_counter_says_lost_never_a_negative_saved() -> None:
    slow = lengthened(race_result([1.0, 1.0], {"lookup": [4.0, 4.0]}), 16)
    counters = render.counters_html(None, gain=slow.gain("lookup"))
    assert "0.90 s lost, median of 2 raced runs · indicative" in counters
    assert "saved, median" not in counters and "−" not in counters
    one = lengthened(race_result([1.0], {"lookup": [1.0]}), 16)
    counters = render.counters_html(None, gain=one.gain("lookup"), lang="ja")
    assert "0.45 秒短縮（レースは 1 回のみ：ばらつき不明）· 目安" in counters
    short = race_result([1.0], {"lookup": [1.0]})
    assert "inconclusive: too few tokens to rank" in render.counters_html(
        None, gain=short.gain("lookup")
    )


# --- llama.cpp's lanes ---------------------------------------------------------------------------


def test_llama_cpps_lanes_race_beside_specviz_and_gain_over_their_own_plain(
    tiny_pair: TinyPair, tmp_path
) -> None:
    from llama_fakes import fake_llama_binary

    from specviz.engines.llama_server import LlamaServer
    from specviz.measure.race_records import LLAMA_PLAIN_LANE, LLAMA_SPEC_LANE

    binary = fake_llama_binary(tmp_path)
    with (
        LlamaServer(binary, ["-m", "t.gguf"], threads=1) as plain,
        LlamaServer(binary, ["-m", "t.gguf", "-md", "d.gguf"], threads=1) as spec,
    ):
        lanes = [(LLAMA_PLAIN_LANE, plain), (LLAMA_SPEC_LANE, spec)]
        updates = list(
            iter_race(tiny_pair, _prompt(tiny_pair), SETTINGS, ["draft-model"], 2, llama=lanes)
        )
    result = updates[-1].result
    assert [lane.name for lane in result.lanes] == [
        PLAIN_LANE, "draft-model", LLAMA_PLAIN_LANE, LLAMA_SPEC_LANE,
    ]  # fmt: skip
    assert [lane.name for lane in result.drafters] == ["draft-model", LLAMA_SPEC_LANE]
    llama_plain, llama_spec = result.lane(LLAMA_PLAIN_LANE), result.lane(LLAMA_SPEC_LANE)
    gain = result.gain(LLAMA_SPEC_LANE)
    assert gain is not None and llama_plain.tokens_per_s and llama_spec.tokens_per_s
    # Over llama.cpp's own plain decoding, not specviz's.
    assert gain.speedup.median == pytest.approx(
        llama_spec.tokens_per_s.median / llama_plain.tokens_per_s.median
    )
    assert result.gain(LLAMA_PLAIN_LANE) is None  # a baseline, not a drafter
    page = race_html.race_html(result)
    assert 'data-lane="llama.cpp speculative"' in page and "average pace" in page
    # Its text is shown once its run is over (escaped), nothing before.
    start = race_html.race_html(result, at_s=0.0)
    lane_html = start.split('data-lane="llama.cpp plain"')[1]
    assert 'data-progress="0.0"' in lane_html.split("sv-race-bar")[1][:40]
    assert "&quot;n_predict&quot;" in page  # the stand-in's text, escaped
    assert "race.differ" not in page  # llama.cpp's Q4 texts are not compared token by token
    assert race_html.drafter_name(LLAMA_SPEC_LANE, "ja").startswith("llama.cpp 投機的")
