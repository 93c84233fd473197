"""The verdict cache (issue 38, item 1): an answer a rule version has scored is not scored again;
a warm run gives what a cold run gives, byte for byte; a changed rule, a damaged entry or a
verdict reached at a limit is scored again; the cache is bounded and ``off`` turns it off."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from keyaudit.engine import verdict_cache
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import RULE_ERROR, load_rule
from keyaudit.engine.rule_language.scoring import batch
from keyaudit.engine.rule_language.scoring.answer_limits import MAX_SLOW_ANSWERS
from keyaudit.engine.rule_language.scoring.scorer import Scorer, conclusion_doubt_text
from keyaudit.engine.verdict_cache import VerdictCache, cacheable, score_cached

GEAR = [
    ("faster", "ANSWER: faster"),
    ("faster", "ANSWER: slower"),
    ("slower", "ANSWER: it turns slower"),
    ("unchanged", "ANSWER: maybe unchanged?"),
    ("faster", "I reason a lot.\nThe output gear is faster.\nANSWER: the gear"),  # a conclusion read
    ("faster", "no answer line at all"),
]


@pytest.fixture
def cache(private_cache: Path) -> Path:
    return private_cache


def _rule_copy(tmp_path: Path, name: str = "gear_train") -> Path:
    """A rule's file and grammars in a folder of their own (so a test may edit them)."""
    folder = tmp_path / f"rules-{name}"
    shutil.copytree(resolve_rule_path(name).parent, folder)
    for grammar in (resolve_rule_path(name).parent.parent / "grammars").glob("*.lark"):
        shutil.copy(grammar, folder / grammar.name)
    shutil.copytree(resolve_rule_path(name).parent.parent / "grammars" / "kinds", folder / "kinds")
    return folder / f"{name}.toml"


def _work(rows=GEAR) -> list[tuple[int, str, str]]:
    return [(0, key, response) for key, response in rows]


def _score(path: Path, rows=GEAR, jobs: int = 1) -> tuple[list, dict]:
    stats: dict = {}
    verdicts = score_cached([Scorer(load_rule(path))], _work(rows), jobs, stats)
    return list(verdicts), stats


class _Refuses:
    """Stands in for scoring: a test fails if anything is scored."""

    def __call__(self, *args, **kwargs):
        raise AssertionError("scored an answer the cache holds")


def test_a_warm_run_scores_nothing_and_gives_the_same_verdicts(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _rule_copy(tmp_path)
    cold, cold_stats = _score(path)
    assert cold_stats["cached_items"] == 0
    assert cold == [Scorer(load_rule(path)).score(k, r) for k, r in GEAR]  # the cache changes nothing
    monkeypatch.setattr(Scorer, "score_answer_text", _Refuses())
    monkeypatch.setattr(Scorer, "conclusion_doubt", _Refuses())
    monkeypatch.setattr(batch, "clean_answer", _Refuses())  # the cleaned texts are known too
    warm, warm_stats = _score(path)
    assert warm == cold
    assert warm_stats["cached_items"] == warm_stats["line_items"] + warm_stats["conclusion_items"] > 0


def test_a_warm_run_in_workers_gives_the_same_verdicts(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With workers (the parallel path), half the answers known: the known ones come from the
    cache, the rest from the workers, in order."""
    monkeypatch.setenv("KEYAUDIT_PARALLEL_MIN", "0")
    path = _rule_copy(tmp_path)
    here = [Scorer(load_rule(path)).score(k, r) for k, r in GEAR]
    _score(path, GEAR[::2])  # every other answer known
    mixed, stats = _score(path, GEAR, jobs=2)
    assert stats["workers"] == 2 and 0 < stats["cached_items"] < stats["line_items"]
    assert mixed == here
    warm, _ = _score(path, GEAR, jobs=2)
    assert warm == here


def test_workers_start_only_for_what_is_left_to_score(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _rule_copy(tmp_path)
    _score(path)
    monkeypatch.setenv("KEYAUDIT_PARALLEL_MIN", "1")
    _, stats = _score(path, jobs=2)
    assert stats["workers"] == 0  # everything known: no worker is started


def test_an_edited_rule_is_scored_again(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _rule_copy(tmp_path)
    _score(path)
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    _, stats = _score(path)
    assert stats["cached_items"] == 0
    grammar = next(path.parent.glob("gear_train*.lark"))
    _score(path)
    grammar.write_text(grammar.read_text(encoding="utf-8") + "\n// edited\n", encoding="utf-8")
    _, stats = _score(path)
    assert stats["cached_items"] == 0


def test_a_damaged_or_foreign_entry_is_a_miss(cache: Path, tmp_path: Path) -> None:
    path = _rule_copy(tmp_path)
    cold, _ = _score(path)
    (entry,) = (cache / verdict_cache.FOLDER).iterdir()
    data = entry.read_bytes()
    entry.write_bytes(data[:-10] + b"0123456789")  # the payload no longer matches its checksum
    again, stats = _score(path)
    assert stats["cached_items"] == 0 and again == cold
    # a sealed entry of the right key whose values have another shape: each such value is a miss
    rule_entry = VerdictCache([Scorer(load_rule(path))]).entries[0]
    odd = {("l", key, r.split("ANSWER: ")[-1]): ("not", "a verdict") for key, r in GEAR}
    entry.write_bytes(verdict_cache._sealed(rule_entry.key, odd))
    again, stats = _score(path)
    assert again == cold and stats["cached_items"] == 0


def test_verdicts_reached_at_a_limit_are_never_stored() -> None:
    verdict = ("ok", "reason", {}, "text", "", ())
    assert cacheable("line", (True, "accepted", {}, "x", "", ()))
    assert not cacheable("line", (False, RULE_ERROR, {}, "x", "scoring this answer took longer", ()))
    assert not cacheable(
        "line",
        (True, "accepted", {}, "x", "", ("judging the verdict's certainty took longer than the "
                                         "limit of 2 s of CPU time",)),
    )
    assert not cacheable("line", (True, "", {}, "x", "", ("judging the verdict's certainty nests too "
                                                          "deeply for Python",)))
    assert cacheable("conclusion", None) and cacheable("conclusion", conclusion_doubt_text(True))
    assert not cacheable("conclusion", "judging the verdict's certainty took longer than the limit "
                                       "of 2 s of CPU time")
    assert verdict  # the shape the line phase stores


def test_a_rule_error_is_scored_again(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _rule_copy(tmp_path)
    real = Scorer.score_answer_text

    def failing(self, key, raw):
        verdict = real(self, key, raw)
        return verdict if "slower" not in raw else type(verdict)(False, RULE_ERROR, {}, raw, "boom")

    monkeypatch.setattr(Scorer, "score_answer_text", failing)
    first, _ = _score(path)
    monkeypatch.undo()
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", str(cache))
    second, stats = _score(path)
    errored = [n for n, v in enumerate(first) if v.reason == RULE_ERROR]
    assert errored and all(second[n].reason != RULE_ERROR for n in errored)
    assert stats["cached_items"] == stats["line_items"] + stats["conclusion_items"] - len(errored)


def test_after_the_time_limit_cut_a_known_answer_is_not_scored_either(
    cache: Path, tmp_path: Path
) -> None:
    """A scorer that has stopped trying answers (five over the CPU limit) gives "not scored" to
    the rest, known to the cache or not, as a run without the cache would."""
    path = _rule_copy(tmp_path)
    _score(path)
    scorer = Scorer(load_rule(path))
    scorer.slow_answers = MAX_SLOW_ANSWERS
    verdicts = list(score_cached([scorer], _work(), 1))
    scorer_cold = Scorer(load_rule(path))
    scorer_cold.slow_answers = MAX_SLOW_ANSWERS
    cold = list(batch.score_many([scorer_cold], _work(), 1))
    assert verdicts == cold
    assert {v.reason for v in verdicts if v.answer_text is not None} == {RULE_ERROR}


def test_the_cache_keeps_the_most_recently_used_answers(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(verdict_cache, "MAX_ANSWERS", 3)
    path = _rule_copy(tmp_path)
    _score(path, GEAR[:3])
    _score(path, GEAR[3:4])  # the newest first, then older ones up to the bound
    cached = VerdictCache([Scorer(load_rule(path))])
    stored = verdict_cache._read(cached.entries[0])
    assert len(stored) == 3
    assert next(iter(stored))[2] == "maybe unchanged?"
    _, stats = _score(path, GEAR[3:4])
    assert stats["cached_items"] == 1


def test_the_cache_keeps_a_bounded_number_of_rule_versions(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(verdict_cache, "KEEP", 1)
    gear = _rule_copy(tmp_path)
    _score(gear)
    fbd = Scorer(load_rule(resolve_rule_path("fbd")))
    score_cached([fbd], [(0, "right (0 degrees; 0=right, 90=up)", "ANSWER: 0 degrees")])
    assert len(list((cache / verdict_cache.FOLDER).iterdir())) == 1
    _, stats = _score(gear)
    assert stats["cached_items"] == 0  # the older rule version was removed


def test_an_entry_too_large_keeps_its_newest_half(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _rule_copy(tmp_path)
    _score(path)
    entry = VerdictCache([Scorer(load_rule(path))]).entries[0]
    whole = len(verdict_cache._read(entry))
    size = len((cache / verdict_cache.FOLDER / entry.name).read_bytes())
    monkeypatch.setattr(verdict_cache, "MAX_ENTRY_BYTES", size - 1)
    (cache / verdict_cache.FOLDER / entry.name).unlink()
    _score(path)
    monkeypatch.setattr(verdict_cache, "MAX_ENTRY_BYTES", size)
    assert 0 < len(verdict_cache._read(entry)) < whole


def test_off_turns_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", "off")
    path = _rule_copy(tmp_path)
    assert VerdictCache.open([Scorer(load_rule(path))]) is None
    _score(path)
    _, stats = _score(path)
    assert stats["cached_items"] == 0


def test_check_cold_and_warm_is_byte_identical(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole report, terminal, JSON and Markdown, cold (an empty cache folder) and warm."""
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", str(folder))
    outputs = []
    for run in ("cold", "warm"):
        json_out, md_out = tmp_path / f"{run}.json", tmp_path / f"{run}.md"
        result = run_cli(
            "check", "gear_train", "--resamples", "200", "--json", str(json_out),
            "--markdown", str(md_out),
        )
        assert result.code == 0, result.err
        terminal = result.out.replace(str(json_out), "J").replace(str(md_out), "M")
        outputs.append((terminal, json_out.read_bytes(), md_out.read_bytes()))
        assert list((folder / verdict_cache.FOLDER).iterdir())  # the cold run wrote its entry
    assert outputs[0] == outputs[1]
