"""Issue 11, points 3, 6 and 9: bounded time per answer and per id, whatever the patterns.

The answer line is found in linear time and cut before anything else; a rule whose grammar
terminal backtracks catastrophically gets a ``rule error`` verdict naming the time limit (and
after a few such answers the rest are not tried); an ``id_pattern`` that backtracks is a one-line
error; noise after the claims, however much, does not change a verdict. Times are measured with
generous limits (this machine is shared and noisy): what is asserted is "bounded", not "fast".
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hostile import assert_one_line_error, run_keyaudit, status_rule

from keyaudit.engine.load.answer_line import find_answer_line
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring import scorer as scoring
from keyaudit.engine.rule_language.scoring.answer_limits import MAX_ANSWER_CHARS, MAX_SLOW_ANSWERS
from keyaudit.engine.rule_language.scoring.scorer import Scorer

KEY_GRAMMAR = "start: status REST?\nstatus: STATUS\nSTATUS: /stable|unstable/\nREST: /;.*/\n"
RULE = status_rule()
#: ``BAD`` backtracks exponentially on a run of a's without a b: (a|aa)+b.
BACKTRACKING = (
    "start: _item*\n_item: status | bad | WORD\nstatus: STATUS\nbad: BAD\n"
    "STATUS.3: /stable|unstable/\nBAD.2: /(a|aa)+b/\nWORD: /\\S+/\n%ignore /\\s+/\n"
)
#: ``@`` matches no terminal: each one is a recovery (a skipped character).
RECOVERING = (
    "start: _item*\n_item: status | pair | WORD\nstatus: STATUS\npair: \"(\" WORD \")\"\n"
    "STATUS.2: /stable|unstable/\nWORD: /[a-z]+/\n%ignore \" \"\n"
)


def make_rule(folder: Path, answer_grammar: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.lark").write_text(KEY_GRAMMAR, encoding="utf-8")
    (folder / "a.lark").write_text(answer_grammar, encoding="utf-8")
    (folder / "rule.toml").write_text(RULE, encoding="utf-8")
    return folder / "rule.toml"


# ---- point 3: the answer line, and the cut


@pytest.mark.parametrize(
    "response",
    [
        "ANSWER: " + " " * 200_000 + "stable",  # the 127 s case
        " " * 200_000,
        "ANSWER" + "*" * 200_000,
        "ANSWER" + " " * 200_000 + "x",
        "*" * 200_000 + "ANSWER: stable",
        "ANSWER: x\n" * 100_000,
    ],
)
def test_finding_the_answer_line_is_linear(response: str) -> None:
    started = time.process_time()
    find_answer_line(response)
    find_answer_line(response, which="first")
    assert time.process_time() - started < 2.0  # was quadratic: minutes


def test_a_huge_answer_is_cut_before_anything_else() -> None:
    scorer = Scorer(load_rule(resolve_rule_path("physical_stability")))
    key = scorer.rule.examples[0].key
    started = time.process_time()
    verdict = scorer.score(key, "ANSWER: " + " " * 200_000 + "stable " * 200_000)
    assert time.process_time() - started < 5.0
    assert verdict.answer_text is not None and len(verdict.answer_text) <= MAX_ANSWER_CHARS


def test_computing_correct_for_a_huge_answer_at_load_is_linear(tmp_path: Path) -> None:
    """``check`` computes the strict verdict when a file has no ``correct``: it used to hang."""
    bench = tmp_path / "b"
    (bench / "keys").mkdir(parents=True)
    (bench / "responses").mkdir()
    (bench / "keys" / "k.jsonl").write_text(
        json.dumps({"id": "dom_0001_q5", "answer": "stable"}) + "\n", encoding="utf-8"
    )
    response = "ANSWER: " + " " * 200_000 + "stable"
    (bench / "responses" / "m.jsonl").write_text(
        json.dumps({"id": "dom_0001_q5", "model": "m", "response": response}) + "\n",
        encoding="utf-8",
    )
    started = time.process_time()
    loaded = load_benchmark(bench)
    assert time.process_time() - started < 5.0
    assert loaded.responses[0].correct is True and loaded.responses[0].correct_computed


def test_a_catastrophic_terminal_gives_rule_error_naming_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scoring, "ANSWER_SECONDS", 0.5)
    scorer = Scorer(load_rule(make_rule(tmp_path / "r", BACKTRACKING)))
    assert scorer.score_answer_text("stable", "stable ab").accept  # the rule itself works
    started = time.monotonic()
    verdict = scorer.score_answer_text("stable", "stable " + "a" * 60)
    elapsed = time.monotonic() - started
    assert verdict.reason == "rule error"
    assert "took longer than the limit of 0.5 s" in verdict.detail
    assert "backtracks catastrophically" in verdict.detail
    assert elapsed < 10.0  # unbounded: (a|aa)+b on 60 a's runs for hours


def test_after_a_few_slow_answers_the_rest_are_not_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scoring, "ANSWER_SECONDS", 0.2)
    scorer = Scorer(load_rule(make_rule(tmp_path / "r", BACKTRACKING)))
    started = time.monotonic()
    verdicts = [scorer.score_answer_text("stable", f"stable {'a' * 60} {i}") for i in range(50)]
    elapsed = time.monotonic() - started
    assert all(v.reason == "rule error" for v in verdicts)
    assert sum("not scored" in v.detail for v in verdicts) == 50 - MAX_SLOW_ANSWERS
    assert elapsed < 15.0  # 50 answers x hours, unbounded


def test_a_catastrophic_terminal_through_the_console_entry_point(tmp_path: Path) -> None:
    rule = make_rule(tmp_path / "r", BACKTRACKING)
    cases = "".join(
        json.dumps({"id": i, "key": "stable", "response": f"ANSWER: stable {'a' * 60}"}) + "\n"
        for i in range(3)
    )
    run = run_keyaudit("score", str(rule), "--cases", "-", stdin=cases)
    assert run.code == 0, run.err
    rows = [json.loads(line) for line in run.out.splitlines()]
    assert [r["reason"] for r in rows] == ["rule error"] * 3
    assert "limit of 2 s of CPU time" in rows[0]["detail"]
    assert run.seconds < 60.0  # three answers at the 2 s limit, plus start-up


# ---- point 6: the id pattern


@pytest.mark.parametrize("where", ["keys", "responses"])
def test_a_backtracking_id_pattern_is_a_one_line_error(
    tmp_path: Path, run_cli, where: str
) -> None:
    bench = tmp_path / "b"
    (bench / "keys").mkdir(parents=True)
    (bench / "benchmark.toml").write_text(
        "id_pattern = '^(?P<domain>(?:\\w+_?)+)_(?P<image>\\d+)_q(?P<level>\\d+)$'\n",
        encoding="utf-8",
    )
    good = {"id": "dom_0001_q5", "answer": "stable"}
    bad = {"id": "a" * 60 + "!", "answer": "stable"}
    keys = [good] if where == "responses" else [good, bad]
    (bench / "keys" / "k.jsonl").write_text(
        "".join(json.dumps(k) + "\n" for k in keys), encoding="utf-8"
    )
    if where == "responses":
        (bench / "responses").mkdir()
        rows = [{"id": bad["id"], "model": "m", "response": "ANSWER: stable", "correct": True}]
        (bench / "responses" / "m.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )
    started = time.monotonic()
    result = run_cli("flag", "--bench", str(bench))
    elapsed = time.monotonic() - started
    line = assert_one_line_error(result.err, result.code, "id_pattern", "backtracks")
    assert ("k.jsonl:2:" in line) if where == "keys" else ("m.jsonl:1" in line)
    assert elapsed < 20.0  # unbounded: hours


def test_an_over_long_id_never_reaches_the_pattern(tmp_path: Path, run_cli) -> None:
    bench = tmp_path / "b"
    (bench / "keys").mkdir(parents=True)
    (bench / "keys" / "k.jsonl").write_text(
        json.dumps({"id": "x" * 100_000, "answer": "a"}) + "\n", encoding="utf-8"
    )
    result = run_cli("flag", "--bench", str(bench))
    assert_one_line_error(result.err, result.code, "k.jsonl:1:", "longer than 1,000 characters")


# ---- point 9: noise after the claims


def test_noise_after_the_claims_does_not_change_the_verdict(tmp_path: Path) -> None:
    scorer = Scorer(load_rule(make_rule(tmp_path / "r", RECOVERING)))
    for noise in (" @" * 600, " @" * 1990, "@" * 3990):  # 600 to 3,990 recoveries (was: 500)
        started = time.process_time()
        verdict = scorer.score_answer_text("stable", "stable" + noise)
        assert verdict.accept, (len(noise), verdict.reason, verdict.detail)
        assert time.process_time() - started < 2.0


@pytest.mark.parametrize("name", ["physical_stability", "gear_train", "gauge_reading"])
def test_bundled_rules_keep_their_verdict_under_noise(name: str) -> None:
    rule = load_rule(resolve_rule_path(name))
    scorer = Scorer(rule)
    for example in [e for e in rule.examples if e.accept][:3]:
        answer = find_answer_line(example.response)
        assert answer is not None
        plain = scorer.score_answer_text(example.key, answer.text)
        for noise in (" @#%" * 1000, " ~" * 2000):
            noisy = scorer.score_answer_text(example.key, answer.text + noise)
            assert (noisy.accept, noisy.reason) == (plain.accept, plain.reason), noise[:4]
