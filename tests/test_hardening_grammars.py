"""Issue 11, points 2 and 11 (grammars): every file the grammar loader opens is resolved and
confined; nothing that is not a grammar is ever opened or echoed; hostile grammar names and
grammars are one-line errors (exit 2), never an internal error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hostile import assert_one_line_error, inside, opened_files, run_keyaudit, status_rule

SECRET = "root:x:0:0:SECRET-LINE-7f3a:/root:/bin/bash"
KEY_GRAMMAR = "start: status REST?\nstatus: STATUS\nSTATUS: /stable|unstable/\nREST: /;.*/\n"
ANSWER_GRAMMAR = (
    "start: _item*\n_item: status | WORD\nstatus: STATUS\nSTATUS.2: /stable|unstable/\n"
    "WORD: /\\S+/\n%ignore /\\s+/\n"
)
CASE = json.dumps({"key": "stable", "response": "ANSWER: stable"}) + "\n"


def make_rule(
    folder: Path,
    answer: str = ANSWER_GRAMMAR,
    answer_name: str = "a.lark",
    key_name: str = "k.lark",
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.lark").write_text(KEY_GRAMMAR, encoding="utf-8")
    if answer_name == "a.lark":
        (folder / "a.lark").write_text(answer, encoding="utf-8")
    rule = folder / "rule.toml"
    rule.write_text(
        status_rule(key_name, answer_name), encoding="utf-8"
    )
    return rule


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    path = outside / "passwd"
    path.write_text(SECRET + "\n", encoding="utf-8")
    return path


def score(run_cli, rule: Path):
    return run_cli("score", str(rule), "--cases", "-", stdin=CASE)


def test_the_test_rule_itself_works(tmp_path: Path, run_cli) -> None:
    result = score(run_cli, make_rule(tmp_path / "r"))
    assert result.code == 0 and json.loads(result.out)["accept"] is True


def test_import_through_a_symlinked_file_is_refused_unread(
    tmp_path: Path, secret: Path, run_cli
) -> None:
    rule = make_rule(
        tmp_path / "r", ANSWER_GRAMMAR.replace("WORD: /\\S+/\n", "%import .evil.WORD\n")
    )
    (rule.parent / "evil.lark").symlink_to(secret)
    with opened_files() as opened:
        result = score(run_cli, rule)
    line = assert_one_line_error(result.err, result.code, "a.lark", "evil.lark", "outside")
    assert "SECRET" not in line and "root:x" not in result.out + result.err
    assert not [p for p in opened if inside(p, secret.parent)]


def test_import_through_a_symlinked_folder_is_refused_unread(
    tmp_path: Path, secret: Path, run_cli
) -> None:
    (secret.parent / "x.lark").write_text(SECRET + "\n", encoding="utf-8")
    rule = make_rule(
        tmp_path / "r", ANSWER_GRAMMAR.replace("WORD: /\\S+/\n", "%import .sub.x.WORD\n")
    )
    (rule.parent / "sub").symlink_to(secret.parent, target_is_directory=True)
    with opened_files() as opened:
        result = score(run_cli, rule)
    line = assert_one_line_error(result.err, result.code, "sub/x.lark", "outside")
    assert "SECRET" not in line
    assert not [p for p in opened if inside(p, secret.parent)]


def test_lark_fallbacks_to_the_current_folder_are_never_reached(
    tmp_path: Path, secret: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lark tries the importing file's folder and the current folder when a loader fails with
    OSError: keyaudit's loader never does, so those files are never opened."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "nowhere.lark").write_text(SECRET + "\n", encoding="utf-8")
    monkeypatch.chdir(cwd)
    rule = make_rule(
        tmp_path / "r", ANSWER_GRAMMAR.replace("WORD: /\\S+/\n", "%import .nowhere.WORD\n")
    )
    with opened_files() as opened:
        result = score(run_cli, rule)
    assert_one_line_error(result.err, result.code, "cannot find imported grammar 'nowhere.lark'")
    assert not [p for p in opened if inside(p, cwd)] and "SECRET" not in result.err


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("../outside/passwd", "must be a .lark file"),
        ("passwd.txt", "must be a .lark file"),
        ("../outside/x.lark", "outside the allowed grammar folders"),
        ("/etc/x.lark", "outside the allowed grammar folders"),
        ("a\u0000b.lark", "NUL"),
        ("x" * 5000 + ".lark", "longer than 1,024 characters"),
        ("y" * 300 + ".lark", "name too long"),
        ("loop.lark", "symbolic link loop"),
        ("dir.lark", "is a directory"),
        ("fifo.lark", "FIFO"),
        ("dangling.lark", "dangling symbolic link"),
    ],
)
def test_hostile_grammar_names_are_one_line_errors(
    tmp_path: Path, secret: Path, run_cli, name: str, fragment: str
) -> None:
    folder = tmp_path / "r"
    rule = make_rule(folder, answer_name=name)
    (tmp_path / "outside" / "x.lark").write_text(SECRET, encoding="utf-8")
    (folder / "passwd.txt").write_text(SECRET, encoding="utf-8")
    (folder / "loop.lark").symlink_to(folder / "loop2.lark")
    (folder / "loop2.lark").symlink_to(folder / "loop.lark")
    (folder / "dir.lark").mkdir()
    os.mkfifo(folder / "fifo.lark")
    (folder / "dangling.lark").symlink_to(folder / "missing.lark")
    with opened_files() as opened:
        result = score(run_cli, rule)
    line = assert_one_line_error(result.err, result.code, "rule.toml", fragment)
    assert "SECRET" not in line and len(line) < 600
    assert not [p for p in opened if p.endswith(("passwd", "passwd.txt", "fifo.lark"))]


@pytest.mark.parametrize(
    "grammar, fragment",
    [
        (ANSWER_GRAMMAR + "%import .a.STATUS -> OTHER\n", "import cycle"),  # imports itself
        (ANSWER_GRAMMAR.replace("WORD: /\\S+/\n", "%import .b.WORD\n"), "import cycle"),
        (ANSWER_GRAMMAR.replace("/\\S+/", "/a{99999999999}/"), "repetition number is too large"),
        (ANSWER_GRAMMAR.replace("/\\S+/", "/(/"), "grammar"),
        ("\ufeffstart: WORD\nWORD: /x/\n\udcff", "UTF-8"),
    ],
)
def test_hostile_grammars_are_one_line_errors(
    tmp_path: Path, run_cli, grammar: str, fragment: str
) -> None:
    folder = tmp_path / "r"
    rule = make_rule(folder)
    (folder / "a.lark").write_bytes(grammar.encode("utf-8", "surrogateescape"))
    (folder / "b.lark").write_text("WORD: /\\S+/\n%import .a.STATUS\n", encoding="utf-8")
    result = score(run_cli, rule)
    assert_one_line_error(result.err, result.code, "a.lark", fragment)


def test_an_import_explosion_is_stopped(tmp_path: Path, run_cli) -> None:
    """Two files per level, each importing both of the next level: 2^40 loads unless stopped."""
    folder = tmp_path / "r"
    rule = make_rule(folder, ANSWER_GRAMMAR.replace("WORD: /\\S+/\n", "%import .a0.T -> WORD\n"))
    for i in range(40):
        for name in "ab":
            (folder / f"{name}{i}.lark").write_text(
                f"%import .a{i + 1}.T -> TA\n%import .b{i + 1}.T -> TB\nT: TA | TB\n",
                encoding="utf-8",
            )
    for name in "ab":
        (folder / f"{name}40.lark").write_text("T: /\\S+/\n", encoding="utf-8")
    result = score(run_cli, rule)
    assert_one_line_error(result.err, result.code, "more than 500 grammar files")


def test_a_grammar_error_through_the_console_entry_point(tmp_path: Path) -> None:
    rule = make_rule(tmp_path / "r", answer_name="../x.lark")
    run = run_keyaudit("score", str(rule), "--cases", "-", stdin=CASE)
    assert_one_line_error(run.err, run.code, "outside the allowed grammar folders")


def test_a_deep_rule_chain_gives_verdicts(tmp_path: Path, run_cli) -> None:
    """A chain of a thousand rules never crashes: the parser builds (building has a fixed
    recursion headroom from where it starts, so the outcome does not depend on the caller's stack
    depth, as it once did in one full-suite run in four) and an answer through the chain is a
    rule-error verdict naming the nesting."""
    grammar = (
        ANSWER_GRAMMAR.replace("_item: status | WORD", "_item: status | WORD | r0")
        + "".join(f"r{i}: r{i + 1}\n" for i in range(1000))
        + 'r1000: "zz"\n'
    )
    rule = make_rule(tmp_path / "r", grammar)
    case = json.dumps({"key": "stable", "response": "ANSWER: stable zz"}) + "\n"
    result = run_cli("score", str(rule), "--cases", "-", stdin=case)
    assert result.code == 0, result.err
    record = json.loads(result.out)
    assert record["reason"] == "rule error" and "nests too deeply" in record["detail"]


def _laughs(width: int, depth: int, joiner: str) -> str:
    """A phrase lexicon of ``width`` references per level, ``depth`` levels deep: width**depth
    copies of the first part if expanded in full (issue 26, item 2)."""
    lines = ["%part L0: a | b"]
    for level in range(1, depth + 1):
        lines.append(f"%part L{level}: " + joiner.join([f"{{L{level - 1}}}"] * width))
    return "\n".join(lines) + f"\n%phrase LAUGH: {{L{depth}}}\n"


@pytest.mark.parametrize(
    "lexicon, fragment",
    [
        (_laughs(20, 8, " "), "compiles to over 60000 characters"),  # sequences: 20**8 copies
        (_laughs(20, 8, " | "), "compiles to over 60000 characters"),  # choices
        ("%part P: " + " | ".join(f"w{i}x" for i in range(5000)) + "\n", "over 60000"),
        (  # many phrases, each under the per-phrase size, over the whole file's
            "%part P: " + " | ".join(f"w{i}" for i in range(1500)) + "\n"
            + "".join(f"%phrase LAUGH{i}: {{P}}\n" for i in range(200)),
            "compile to over 2000000 characters",
        ),
        ("%phrase LAUGH: " + "(" * 5000 + "a" + ")" * 5000 + "\n", "nest deeper than 100"),
        ("%phrase LAUGH: " + "&(" * 3000 + "a" + ")" * 3000 + " b\n", "nest deeper than 100"),
        ("%phrase LAUGH: a /x{4294967296}/\n", "repetition number is too large"),
    ],
)
def test_phrase_lexicon_explosions_are_one_line_errors_in_bounded_time(
    lexicon: str, fragment: str
) -> None:
    """Parts are compiled once and measured as they grow, before anything is built in full."""
    import resource
    import time

    from keyaudit.engine.rule_language.reading.phrases import PhraseError, expand_phrases

    grammar = "start: LAUGH\n" + lexicon
    if "%phrase" not in lexicon:
        grammar += "%phrase LAUGH: {P}\n"
    started = time.process_time()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(PhraseError) as raised:
        expand_phrases(grammar)
    assert fragment in raised.value.message
    assert raised.value.line >= 2
    assert time.process_time() - started < 20  # unbounded: never ends (80 s CPU measured)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000  # KiB


def test_a_phrase_explosion_through_the_cli_is_file_line_exit_2(tmp_path: Path, run_cli) -> None:
    folder = tmp_path / "r"
    rule = make_rule(folder)
    (folder / "a.lark").write_text(ANSWER_GRAMMAR + _laughs(20, 8, " "), encoding="utf-8")
    result = score(run_cli, rule)
    assert_one_line_error(result.err, result.code, "a.lark:", "compiles to over 60000 characters")


def test_a_shared_part_is_compiled_once_and_means_the_same() -> None:
    """Memoised parts change no match: a part used twice compiles to the same regex both times."""
    import re

    from keyaudit.engine.rule_language.reading.phrases import expand_phrases

    grammar = "start: A B\n%part P: red | green\n%phrase A: {P} light\n%phrase B: no {P}\n"
    out = expand_phrases(grammar)
    a = re.search(r"^A: /(.*)/i$", out, re.M).group(1)
    b = re.search(r"^B: /(.*)/i$", out, re.M).group(1)
    assert re.fullmatch(a, "Green  light", re.I) and re.fullmatch(b, "no red", re.I)
    assert not re.fullmatch(a, "blue light", re.I)


# ---- issue 26 item 9 (old F07): a grammar of thousands of keywords


def _keywords(count: int) -> str:
    return ANSWER_GRAMMAR.replace("_item: status | WORD", "_item: status | WORD | kw") + (
        "kw: " + " | ".join(f'"kw{i}x"' for i in range(count)) + "\n"
    )


def test_a_grammar_of_5000_keywords_is_a_bounded_one_line_error(tmp_path: Path) -> None:
    """5,000 string literals took 33 s and 2.95 GB and failed with ``SystemError: <function ...
    at 0x7f...> returned NULL``. Now the terminals are counted as Lark compiles the grammar, before
    any table is built. The child runs under a 1.5 GB address-space cap and a 120 s timeout, so
    the old behaviour fails fast instead of taking the machine."""
    import resource
    import subprocess
    import sys
    import time

    from hostile import ENTRY

    folder = tmp_path / "r"
    rule = make_rule(folder, _keywords(5000))

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024,) * 2)

    started = time.monotonic()
    child = subprocess.run(
        [sys.executable, "-c", ENTRY, "score", str(rule), "--cases", "-"],
        input=CASE, capture_output=True, text=True, timeout=120, preexec_fn=cap,
        env={**os.environ, "KEYAUDIT_CACHE_DIR": "off"},
    )
    seconds = time.monotonic() - started
    line = assert_one_line_error(
        child.stderr, child.returncode, str(folder / "a.lark"), "at most 500 terminals"
    )
    assert "0x" not in line and "SystemError" not in line
    assert seconds < 60, seconds  # about 1.5 s of CPU time on the 2-core test machine


def test_the_terminal_limit_counts_what_lark_keeps(tmp_path: Path, monkeypatch) -> None:
    """The limit is on the compiled grammar: every named terminal and distinct literal it uses
    (here STATUS, WORD, the %ignore pattern and the keywords), not on unused definitions."""
    from keyaudit.engine.errors import RuleError
    from keyaudit.engine.rule_language.reading import grammar

    monkeypatch.setattr(grammar, "MAX_TERMINALS", 10)
    folder = tmp_path / "r"
    folder.mkdir()
    fits = folder / "fits.lark"
    fits.write_text(_keywords(7) + 'UNUSED: "never"\n', encoding="utf-8")  # 3 + 7 = 10
    assert len(grammar.CompiledGrammar(fits)._lark.terminals) == 10
    over = folder / "over.lark"
    over.write_text(_keywords(8), encoding="utf-8")
    with pytest.raises(RuleError, match=r"over\.lark: grammar error: a grammar may have at most 10 terminals"):
        grammar.CompiledGrammar(over)


def test_bundled_grammars_are_well_within_the_terminal_limit() -> None:
    from keyaudit.engine.load.locate import bundled_rules_dir
    from keyaudit.engine.rule_language.reading.grammar import MAX_TERMINALS
    from keyaudit.engine.rule_language.rules.rule import load_rule

    counts = {}
    for path in sorted(bundled_rules_dir().glob("*.toml")):
        rule = load_rule(path)
        for compiled in (rule.key_grammar, rule.answer_grammar):
            counts[compiled.path.name] = len(compiled._lark.terminals)
    assert counts and max(counts.values()) <= MAX_TERMINALS // 5, counts


def test_running_out_of_memory_while_building_is_a_plain_one_line_error(
    tmp_path: Path, monkeypatch
) -> None:
    """What a C function out of memory raises says nothing to a user and names an address."""
    from keyaudit.engine.errors import RuleError
    from keyaudit.engine.rule_language.reading import grammar

    def fail(*args, **kwargs):
        raise SystemError("<built-in method build of object at 0x7f3a2c1e5d00> returned NULL")

    monkeypatch.setattr(grammar, "build_parser_noting_conflicts", fail)
    path = tmp_path / "g.lark"
    path.write_text(ANSWER_GRAMMAR, encoding="utf-8")
    with pytest.raises(RuleError) as raised:
        grammar.CompiledGrammar(path)
    assert str(raised.value) == f"{path}: grammar error: building the parser ran out of memory"
