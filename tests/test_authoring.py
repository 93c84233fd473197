"""The authoring loop: ``new-rule`` scaffolds files that load and pass ``test-rule``; exit codes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import requires_rule

from keyaudit.engine.errors import UsageError
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import bundled_rules_dir, example_benchmark_dir
from keyaudit.engine.rule_language.authoring.rulecheck import keys_check, run_examples
from keyaudit.engine.rule_language.authoring.scaffold import scaffold_rule, split_template
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer


@pytest.mark.parametrize(
    ("domain", "level"), [("gauge_reading", 5), ("gear_train", 5), ("physical_stability", 5)]
)
def test_new_rule_scaffold_passes_test_rule(tmp_path: Path, run_cli, domain, level) -> None:
    made = run_cli("new-rule", domain, "--level", str(level), "--out", str(tmp_path))
    assert made.code == 0, made.err
    for name in (f"{domain}.toml", f"{domain}_key.lark", f"{domain}_answer.lark"):
        assert (tmp_path / name).is_file()
        assert f"wrote {tmp_path / name}" in made.out
    rule = load_rule(tmp_path / f"{domain}.toml")
    assert rule.cells[0].domain == domain and len(rule.examples) >= 3
    tested = run_cli("test-rule", str(tmp_path / f"{domain}.toml"))
    assert tested.code == 0, tested.out + tested.err
    assert "keys check: pass" in tested.out
    assert "rule OK" in tested.out


def test_new_rule_refuses_to_overwrite(tmp_path: Path, run_cli) -> None:
    (tmp_path / "gear_train_answer.lark").write_text("// mine\n", encoding="utf-8")
    result = run_cli("new-rule", "gear_train", "--level", "5", "--out", str(tmp_path))
    assert result.code == 2
    assert "refusing to overwrite" in result.err
    assert (tmp_path / "gear_train_answer.lark").read_text(encoding="utf-8") == "// mine\n"
    assert not (tmp_path / "gear_train.toml").exists()


def test_new_rule_unknown_cell_is_a_usage_error(tmp_path: Path, run_cli) -> None:
    result = run_cli("new-rule", "no_such_domain", "--level", "5", "--out", str(tmp_path))
    assert result.code == 2
    assert list(tmp_path.iterdir()) == []


def test_scaffold_keeps_leading_minus_of_keys(tmp_path: Path) -> None:
    keys = ["-2; orientable", "0; non-orientable", "-2; orientable", "2; orientable"]
    files = scaffold_rule("signs", 1, keys, tmp_path)
    scorer = Scorer(load_rule(files.rule))
    assert all(r.passed for r in run_examples(scorer))
    assert keys_check(scorer, keys).passed
    assert scorer.score_answer_text("-2; orientable", "-2; Orientable.").accept


def test_scaffold_answer_grammar_parses_any_text(tmp_path: Path) -> None:
    keys = ["no; new value 65", "yes; new value 10.5", "no; new value 3"]
    scorer = Scorer(load_rule(scaffold_rule("g", 5, keys, tmp_path).rule))
    for text in ["no; new value", "yes; new value about 10.5", "no no no; 65 ;;", "ü → ✓ 3"]:
        verdict = scorer.score_answer_text("no; new value 65", text)
        assert verdict.reason in ("template missing", "wrong form", "wrong number"), verdict
    accepted = scorer.score_answer_text("yes; new value 10.5", "Yes;  New value 10.50.")
    assert accepted.accept and accepted.values == {"form": "form_2", "number": 10.5}


def test_split_template() -> None:
    assert split_template("a {LETTER_1}-{NUMBER} b") == [
        ("a ", "LETTER_1"),
        ("-", "NUMBER"),
        (" b", None),
    ]


def test_scaffold_rejects_bad_domain_and_no_keys(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        scaffold_rule("../x", 5, ["yes"], tmp_path)
    with pytest.raises(UsageError):
        scaffold_rule("x", 5, [], tmp_path)


@requires_rule("gauge_reading")
def test_test_rule_bundled_rules_pass(run_cli) -> None:
    result = run_cli("test-rule", "gauge_reading", "--per-reason", "1")
    assert result.code == 0, result.out
    assert "Examples: 50/50 pass" in result.out
    assert "verdicts on stored responses" in result.out
    assert "values conflict" in result.out or "wrong value" in result.out
    assert "extracted: verdict=" in result.out


def _copy_rule(tmp_path: Path, name: str) -> Path:
    for path in [bundled_rules_dir() / f"{name}.toml"]:
        shutil.copy(path, tmp_path / path.name)
    grammars = bundled_rules_dir().parent / "grammars"
    for path in grammars.glob(f"{name}_*.lark"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path / f"{name}.toml"


@requires_rule("gear_train")
def test_test_rule_exit_1_on_failing_example(tmp_path: Path, run_cli) -> None:
    rule = _copy_rule(tmp_path, "gear_train")
    text = rule.read_text(encoding="utf-8")
    rule.write_text(
        text
        + '\n[[example]]\nkey = "increase; direction unchanged"\n'
        + 'answer = "increase; direction unchanged"\naccept = false\nreason = "wrong speed"\n',
        encoding="utf-8",
    )
    result = run_cli("test-rule", str(rule))
    assert result.code == 1
    assert "FAIL" in result.out
    assert "verdict: expected reject, got accept" in result.out


@requires_rule("gauge_reading")
def test_test_rule_exit_1_and_lists_unparsed_keys(tmp_path: Path, run_cli) -> None:
    rule = _copy_rule(tmp_path, "gauge_reading")
    key = tmp_path / "gauge_reading_key.lark"
    key.write_text(
        key.read_text(encoding="utf-8").replace("VERDICT: /yes|no/", "VERDICT: /no/"),
        encoding="utf-8",
    )
    text = rule.read_text(encoding="utf-8")
    rule.write_text(text.split("[[example]]")[0], encoding="utf-8")  # examples use yes keys
    result = run_cli("test-rule", str(rule))
    assert result.code == 1
    assert "keys check: FAIL" in result.out
    assert "unparsed gauge_reading_" in result.out
    assert "column 1: expected" in result.out


@requires_rule("gear_train")
def test_test_rule_without_responses(tmp_path: Path, run_cli) -> None:
    bench = tmp_path / "bench"
    (bench / "keys").mkdir(parents=True)
    shutil.copy(example_benchmark_dir() / "keys" / "gear_train.jsonl.gz", bench / "keys")
    assert load_benchmark(bench).responses == ()
    result = run_cli("test-rule", "gear_train", "--bench", str(bench))
    assert result.code == 0, result.out + result.err
    assert "no stored responses in this cell" in result.out


def test_scaffold_is_on_the_claim_layer(tmp_path: Path) -> None:
    """A scaffolded rule reads restatements through the claim layer from the start: denied,
    hedged, conflicting and corrected restatements get the layer's reading."""
    keys = ["no; new value 65", "yes; new value 120", "no; new value 3"]
    rule = load_rule(scaffold_rule("g", 5, keys, tmp_path).rule)
    assert rule.claims is not None and set(rule.claims.kinds) == {"restated"}
    scorer = Scorer(rule)
    key = "yes; new value 120"
    cases = {
        "Yes; new value 120.": "",
        "likely yes; new value 120 psi": "hedged",
        "I think yes; new value 120": "hedged",
        "not yes; new value 120": "template missing",
        "yes; new value 120 or yes; new value 130": "templates conflict",
        "yes; new value 130, sorry, yes; new value 120": "",
        "yes; new value 120, sorry, yes; new value 130": "wrong number",
    }
    for answer, reason in cases.items():
        assert scorer.score_answer_text(key, answer).reason == reason, answer


# ---- issue 26 item 10: a long domain, and key text that is grammar syntax


def test_a_300_character_domain_is_a_one_line_usage_error(tmp_path: Path, run_cli) -> None:
    """A benchmark whose domain is 300 characters long: new-rule used to crash writing
    ``DOMAIN.toml`` (file name too long, exit 3)."""
    domain = "a" * 300
    bench = tmp_path / "bench"
    (bench / "keys").mkdir(parents=True)
    (bench / "keys" / "k.jsonl").write_text(
        "".join(f'{{"id": "{domain}_{i:04d}_q5", "answer": "stable {i}"}}\n' for i in range(3)),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    out.mkdir()
    result = run_cli("new-rule", domain, "--level", "5", "--bench", str(bench), "--out", str(out))
    assert result.code == 2, result.err
    assert result.err.strip() == (
        "keyaudit: error: a domain name for new-rule is at most 100 characters (it names the "
        "rule's files), got 300"
    )
    assert list(out.iterdir()) == []
    with pytest.raises(UsageError, match="at most 100 characters"):
        scaffold_rule(domain, 5, ["stable 1"], out)
    files = scaffold_rule("d" * 100, 5, ["stable 1", "stable 2"], out)  # the longest works
    assert files.rule.name == "d" * 100 + ".toml" and load_rule(files.rule).cells


#: Keys whose text is Lark or TOML syntax, or holds what would end a literal, a regex or a line.
HOSTILE_KEYS = [
    'say "hi" 5', 'say "hi" 7',
    "back\\slash 5", "end\\",
    "a/b 5", "//not a comment 6", "/x/i 3",
    'x" | /.*/ | "y 4', "%ignore /x/ 6", "?start: form_1 2",
    "a {NUMBER} b 5", "{LETTER} 6",
    "nul\x00here 5", "del\x7fhere 6", "tick''' 7",
    "first line\n%import .common.WORD\nstart: WORD 5",
]


def test_new_rule_quotes_key_text_in_its_grammars(tmp_path: Path) -> None:
    """Key text is data in the scaffolded grammars: quoted and escaped, never grammar. Every key
    still parses with the key grammar (so each literal means exactly its key text), the grammars
    have no line a key wrote, and the single-line keys pass the keys check."""
    for half, keys in enumerate((HOSTILE_KEYS[:8], HOSTILE_KEYS[8:])):  # 12 templates at most
        files = scaffold_rule(f"hostile{half}", 5, keys, tmp_path)
        scorer = Scorer(load_rule(files.rule))
        for key in keys:
            assert scorer.parse_key(key).node is not None, key
        assert all(r.passed for r in run_examples(scorer))
        assert keys_check(scorer, [k for k in keys if "\n" not in k]).passed
        for text in (files.key_text, files.answer_text):
            lines = text.splitlines()
            assert not any(line.startswith(("%import .common.WORD", "start: WORD")) for line in lines)
            assert "\x00" not in text and "\x7f" not in text
    # a key's own "{NUMBER}" is text, not a slot: the template has only the real number slot
    a_b = scorer.score_answer_text("a {NUMBER} b 5", "a {NUMBER} b 5")
    assert a_b.accept and a_b.values["number"] == 5
    assert not scorer.score_answer_text("a {NUMBER} b 5", "a 7 b 5").accept
