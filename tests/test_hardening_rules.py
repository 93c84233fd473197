"""Issue 37, rules: a rule that accepts every answer is named as such, the keys check says which
pairs it accepted, a given rule named like a bundled one is refused under --all, and a file in
the current folder never shadows a bundled rule.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hostile import assert_one_line_error

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule

KEY_GRAMMAR = "start: status REST?\nstatus: STATUS\nSTATUS: /stable|unstable/\nREST: /;.*/\n"
ANSWER_GRAMMAR = (
    "start: _item*\n_item: status | WORD\nstatus: STATUS\nSTATUS.3: /stable|unstable/\n"
    "WORD: /\\S+/\n%ignore /\\s+/\n"
)


def benchmark(root: Path) -> Path:
    (root / "keys").mkdir(parents=True)
    (root / "responses").mkdir()
    ids = [f"dom_{i:04d}_q{level}" for level in (4, 5) for i in range(1, 7)]
    keys = [{"id": i, "answer": "stable" if n % 2 else "unstable; upper"} for n, i in enumerate(ids)]
    (root / "keys" / "k.jsonl").write_text("".join(json.dumps(k) + "\n" for k in keys), "utf-8")
    rows = [{"id": k["id"], "model": "m", "response": f"ANSWER: {k['answer']}"} for k in keys]
    (root / "responses" / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return root


def rule(folder: Path, check: str, extra: str = "", name: str = "t", domain: str = "dom") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.lark").write_text(KEY_GRAMMAR, encoding="utf-8")
    (folder / "a.lark").write_text(ANSWER_GRAMMAR, encoding="utf-8")
    path = folder / f"{name}.toml"
    path.write_text(
        f"""[rule]
name = "{name}"
cells = [{{domain = "{domain}", level = 5}}]
key_grammar = "k.lark"
answer_grammar = "a.lark"
[key]
status = "key.status"
[[let]]
name = "said"
expr = "first([s.status for s in find(answer, 'status')])"
[[require]]
reason = "wrong"
check = {json.dumps(check)}
{extra}""",
        encoding="utf-8",
    )
    return path


# ---- a rule that accepts every answer


@pytest.mark.parametrize("declared", [True, False])
def test_a_rule_whose_only_clause_is_true_is_named_as_accepting_every_answer(
    tmp_path: Path, run_cli, declared: bool
) -> None:
    """With [keys_check] accepts = "true" it passed the keys check with no warning (and said
    its accepted pairs were rejected)."""
    extra = '[keys_check]\naccepts = "true"\n' if declared else ""
    path = rule(tmp_path / "rule", "true", extra)
    result = run_cli("check", str(path), "--bench", str(benchmark(tmp_path / "b")), "--resamples", "20")
    assert result.code == 1, result.out + result.err
    assert "the rule accepts every answer" in result.out


def test_accepted_pairs_are_not_said_to_be_rejected(tmp_path: Path, run_cli) -> None:
    """A rule accepting either status where [keys_check] accepts says both are right: the keys
    check passes, and says the 2 pairs were accepted, not rejected."""
    path = rule(tmp_path / "rule", "said != null", '[keys_check]\naccepts = "true"\n')
    markdown = tmp_path / "a.md"
    result = run_cli(
        "check", str(path), "--bench", str(benchmark(tmp_path / "b")), "--resamples", "20",
        "--markdown", str(markdown),
    )
    assert result.code == 0, result.out + result.err
    assert "0 pairs of different keys rejected, 2 accepted as [keys_check] accepts declares" in result.flat
    text = " ".join(markdown.read_text(encoding="utf-8").split())
    assert "0 of the 2 pairs of strings with different key values are rejected; the other 2 are accepted" in text


def test_a_rule_that_tells_keys_apart_still_passes(tmp_path: Path, run_cli) -> None:
    path = rule(tmp_path / "rule", "said == target.status")
    result = run_cli("check", str(path), "--bench", str(benchmark(tmp_path / "b")), "--resamples", "20")
    assert result.code == 0, result.out + result.err
    assert "2 pairs of different keys rejected." in result.flat


# ---- names


def test_check_all_refuses_a_given_rule_named_like_a_bundled_one(tmp_path: Path, run_cli) -> None:
    """It dropped the bundled rule without a word."""
    bench = tmp_path / "grip"
    from keyaudit.engine.load.locate import example_benchmark_dir

    shutil.copytree(example_benchmark_dir(), bench)
    path = rule(tmp_path / "rule", "said == target.status", name="physical_stability", domain="dom")
    result = run_cli("check", str(path), "--all", "--bench", str(bench), "--resamples", "20")
    assert_one_line_error(result.err, result.code, "--all", "'physical_stability'", "rename it")


def test_two_given_rules_of_one_name_are_refused(tmp_path: Path, run_cli) -> None:
    first = rule(tmp_path / "one", "said == target.status")
    second = rule(tmp_path / "two", "said == target.status", domain="other")
    result = run_cli("check", str(first), str(second), "--bench", str(benchmark(tmp_path / "b")))
    assert_one_line_error(result.err, result.code, "two rules are named 't'")


def test_a_file_in_the_current_folder_does_not_shadow_a_bundled_rule(
    tmp_path: Path, run_cli, monkeypatch
) -> None:
    """A file named physical_stability (no .toml) in the current folder was read as the rule, and
    the report named it like the bundled one."""
    monkeypatch.chdir(tmp_path)
    path = rule(tmp_path / "x", "true", name="physical_stability")
    shutil.copy(path, tmp_path / "physical_stability")
    for grammar in ("k.lark", "a.lark"):
        shutil.copy(tmp_path / "x" / grammar, tmp_path / grammar)
    result = run_cli("check", "physical_stability", "--resamples", "20")
    assert_one_line_error(result.err, result.code, "both a bundled rule and a file", "./physical_stability")
    assert resolve_rule_path("./physical_stability") == Path("./physical_stability")


# ---- a validation card is its author's claim


def test_a_lying_card_is_printed_as_its_authors_claim(tmp_path: Path, run_cli) -> None:
    """A card with the right version hash and "1,000,000 of 1,000,000 agreed" was printed as a
    measurement ("measured on the rule's files as they are now")."""
    from keyaudit.engine.rule_language.rules.rule import load_rule  # noqa: PLC0415
    from keyaudit.engine.stats.rule_version import rule_version

    path = rule(tmp_path / "rule", "said == target.status")
    (path.parent / "cards").mkdir()
    (path.parent / "cards" / "t.card.toml").write_text(
        f'format = 2\nrule = "t"\n[[set]]\nname = "blind.jsonl"\nrows = "all"\n'
        f'written_by = "independent"\ntuning = "before"\ncases = 1000000\nagree = 1000000\n'
        f'date = "2024-01-01"\nversion = "{rule_version(load_rule(path))}"\nsource = "measured"\n',
        encoding="utf-8",
    )
    markdown, report = tmp_path / "a.md", tmp_path / "a.json"
    result = run_cli(
        "check", str(path), "--bench", str(benchmark(tmp_path / "b")), "--resamples", "20",
        "--markdown", str(markdown), "--json", str(report),
    )
    assert result.code == 0, result.err
    written = report.read_text(encoding="utf-8")
    assert "its validation card claims (its author's record, not measured here)" in written
    for text in (result.flat, " ".join(markdown.read_text(encoding="utf-8").split()), written):
        assert "measured on the rule's files" not in text and "card gives" not in text
    for text in (result.flat, " ".join(markdown.read_text(encoding="utf-8").split())):
        assert "as its author recorded it (a claim that comes with the rule, not measured by keyaudit here)" in text
        assert "its validation card claims (its author's record, not measured here)" in text


# ---- a component compared with a [key] value the rule does not define

CLAIMS = '[claims]\nkinds = { status = ["stable", "unstable"] }\n'


@pytest.mark.parametrize(
    "component",
    [
        '[[component]]\nname = "time"\nkind = "choice"\nclaim = "status"\n',  # target.time
        '[[component]]\nname = "both"\nkind = "compound"\nclaim = "status"\nparts = { status = "choice", time = "number" }\n',
    ],
)
def test_a_component_compared_with_an_undefined_key_value_is_a_load_error(
    tmp_path: Path, run_cli, component: str
) -> None:
    """It read null and made every answer "wrong" (found by a new rule's author, issue 33)."""
    path = rule(tmp_path / "rule", "true", CLAIMS + component)
    result = run_cli("test-rule", str(path), "--bench", str(benchmark(tmp_path / "b")))
    assert_one_line_error(result.err, result.code, f"{path.name}:", "target.time", "[key] defines no 'time'")


def test_a_component_with_its_own_key_or_a_defined_one_loads(tmp_path: Path, run_cli) -> None:
    path = rule(tmp_path / "rule", "true", CLAIMS + '[[component]]\nname = "time"\nkind = "choice"\nclaim = "status"\nkey = "target.status"\n')
    assert "time" in load_rule(path).outputs  # a component is an output of the rule
