"""Issue 37, forged reports: strings from data written into the Markdown report stay text.

A model name holding a newline and a table row rendered as a row of figures no model earned, a
``|`` in a name shifted its figures into the wrong columns, a leading ``#`` or ``-`` made a
heading or a list item, and ``<img onerror>`` reached a CommonMark renderer as HTML. The report
is rendered here with a CommonMark renderer (markdown-it-py, GFM tables on): its block structure
must be the one a benign benchmark of the same shape gives, every table row must have exactly its
header's cells, every model table exactly one row per model, named as the data names it, and no
HTML element may come from data.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import HOSTILE_TEXTS
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from keyaudit.engine.audit import Settings, run_audit
from keyaudit.engine.errors import printable
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.reports.markdown_report import render_markdown, table
from keyaudit.engine.reports.markdown_text import code, prose, table_cell
from keyaudit.engine.rule_language.rules.rule import load_rule

RENDERER = MarkdownIt("commonmark").enable("table")  # html=True: raw HTML is kept, as on GitHub


def inline_text(token: Token) -> str:
    """What an inline token renders as, as plain text (code spans by their content)."""
    return "".join(child.content for child in token.children or () if child.type != "softbreak")


def html_tokens(tokens: list[Token]) -> list[str]:
    found = [t.content for t in tokens if t.type.startswith("html")]
    for t in tokens:
        found += [c.content for c in t.children or () if c.type.startswith("html")]
    return found


# ---- each escape alone, wherever the report puts data

TRICKY = st.lists(
    st.sampled_from(
        list("`*_[]()<>&#|\\-+=.!~:;/ \n\t\r0123456789abcwW")
        + ["\u202e", "\u200b", "\u2028", "\x1b", "\x00", "\x85", "www.", "://", "<img src=x>"]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(value=TRICKY.filter(lambda v: v.strip(" ")))
def test_text_and_code_render_as_their_visible_characters_wherever_they_stand(value: str) -> None:
    shown = printable(value)
    for escape in (prose, code):
        written = escape(value)
        for source, shape in (
            (f"p {written} q", ["paragraph_open", "inline", "paragraph_close"]),
            (f"- {written}", ["bullet_list_open", "list_item_open", "paragraph_open"]),
            (f"**{written} —**", ["paragraph_open", "inline", "paragraph_close"]),
            (f"| a | b |\n| - | - |\n| {table_cell(written)} | x |", None),
        ):
            tokens = RENDERER.parse(source)
            assert not html_tokens(tokens), (value, source)
            inlines = [t for t in tokens if t.type == "inline"]
            if shape is None:  # the table: one body row of two cells, the first the value
                assert [t.type for t in tokens].count("td_open") == 2, source
                assert inline_text(inlines[-2]) == shown, (value, source)
                continue
            assert [t.type for t in tokens][: len(shape)] == shape, source
            assert len(inlines) == 1, source
            rendered = inline_text(inlines[0])
            if source.startswith("**"):
                strong = [c.type for c in inlines[0].children if c.type != "text" or c.content]
                assert strong[0] == "strong_open" and strong[-1] == "strong_close", source
            expected = {"p": f"p {shown} q", "-": shown, "*": f"{shown} —"}[source[0]]
            assert rendered == expected, (value, source, rendered)


def test_the_table_helper_escapes_pipes_in_every_cell() -> None:
    rendered = RENDERER.parse(table(["a|b", "c"], [["x | y", code("p|q")]], "lr"))
    cells = [inline_text(t) for t in rendered if t.type == "inline"]
    assert cells == ["a|b", "c", "x | y", "p|q"]


# ---- the whole report


def write_benchmark(root: Path, names: dict[str, str]) -> Path:
    """A small benchmark of one domain at L4 and L5 whose every name comes from ``names``: the
    benchmark, the domain, the models, one key that parses and one that does not, the answer
    line, the rule's name, description, reason and example."""
    domain, keys_dir, responses = names["domain"], root / "keys", root / "responses"
    keys_dir.mkdir(parents=True)
    responses.mkdir()
    keys = [
        {
            "id": f"{domain}_{i:04d}_q{level}",
            "answer": "stable" if i % 2 else "unstable; " + names["key"],
        }
        for level in (4, 5)
        for i in range(1, 9)
    ]
    keys[-1]["answer"] = names["unparsed key"]
    (keys_dir / "k.jsonl").write_text("".join(json.dumps(k) + "\n" for k in keys), "utf-8")
    for j, model in enumerate(names["models"]):
        lines = [
            {
                "id": k["id"],
                "model": model,
                "response": f"reasoning\nANSWER: {k['answer'].split(';')[0]} {names['answer']}",
                "correct": j % 2 == 0 and i % 3 == 0,
            }
            for i, k in enumerate(keys)
        ]
        (responses / f"m{j}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    (root / "benchmark.toml").write_text(
        f"name = {json.dumps(names['benchmark'])}\n"
        "id_pattern = '^(?P<domain>.+)_(?P<image>\\d+)_q(?P<level>\\d+)$'\n"
        f"roster = {json.dumps([*names['models'], names['missing model']])}\n",
        "utf-8",
    )
    rule = root.parent / "rule"
    rule.mkdir()
    (rule / "k.lark").write_text(
        "start: status REST?\nstatus: STATUS\nSTATUS: /stable|unstable/\nREST: /;.*/\n", "utf-8"
    )
    (rule / "a.lark").write_text(
        "start: _item*\n_item: status | WORD\nstatus: STATUS\nSTATUS.3: /stable|unstable/\n"
        "WORD: /\\S+/\n%ignore /\\s+/\n",
        "utf-8",
    )
    (rule / "rule.toml").write_text(
        f"""[rule]
name = {json.dumps(names["rule"])}
description = {json.dumps(names["description"])}
question = {json.dumps(names["question"])}
cells = [{{domain = {json.dumps(domain)}, level = 5}}]
key_grammar = "k.lark"
answer_grammar = "a.lark"
[key]
status = "key.status"
[[let]]
name = "said"
expr = "first([s.status for s in find(answer, 'status')])"
[[require]]
reason = {json.dumps(names["reason"])}
check = "said == target.status"
explain = {json.dumps(names["explain"])}
[output]
status = "said"
[[example]]
key = "stable"
answer = {json.dumps("stable " + names["answer"])}
extract = {{ status = "stable" }}
[[example]]
key = "stable"
answer = "unstable"
reason = {json.dumps(names["reason"])}
extract = {{ status = "unstable" }}
""",
        "utf-8",
    )
    return rule / "rule.toml"


HOSTILE = {
    "benchmark": HOSTILE_TEXTS[0],
    "domain": "d|<b>x</b>`",
    "models": HOSTILE_TEXTS,
    "missing model": "<script>alert(1)</script>\n## Missing",
    "key": "the `top` <b>joint</b> | x |",
    "unparsed key": "stable\n# Owned <img src=x onerror=alert(1)>",
    "answer": "<script>alert(1)</script> | a | b | `x`` \x1b]0;title\x07\x1b[31m red \x00 \u202e",
    "rule": "r|`<i>n</i>",
    "description": "# Heading\n- item\n<script>x</script>\n| a | b |\n|---|---|",
    "question": "> quoted **bold** [link](http://evil)",
    "reason": "wro|ng <u>x</u>",
    "explain": "\n# Injected\n1. list",
}
BENIGN = {
    "benchmark": "Bench",
    "domain": "dom",
    "models": [f"Model {i:02d}" for i in range(len(HOSTILE_TEXTS))],
    "missing model": "Model missing",
    "key": "the top joint x",
    "unparsed key": "stable owned",
    "answer": "done",
    "rule": "rule",
    "description": "A description.",
    "question": "A question?",
    "reason": "wrong",
    "explain": "Explained.",
}


def report_of(root: Path, names: dict[str, str]) -> str:
    rule = load_rule(write_benchmark(root / "bench", names))
    audit = run_audit(load_benchmark(root / "bench"), [rule], Settings(resamples=20))
    return render_markdown(audit)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    hostile = report_of(tmp_path_factory.mktemp("hostile-md"), HOSTILE)
    benign = report_of(tmp_path_factory.mktemp("benign-md"), BENIGN)
    return hostile, benign


def blocks(tokens: list[Token]) -> list[tuple[str, int]]:
    return [(t.type, t.level) for t in tokens if t.type != "inline"]


def test_hostile_data_gives_the_block_structure_of_benign_data(reports) -> None:
    hostile, benign = reports
    assert blocks(RENDERER.parse(hostile)) == blocks(RENDERER.parse(benign))


def test_no_html_element_from_data_survives(reports) -> None:
    hostile, _ = reports
    tokens = RENDERER.parse(hostile)
    assert html_tokens(tokens) == []
    html = RENDERER.render(hostile)
    for tag in ("<script", "<img", "<b>", "<i>", "<u>", "<blockquote", "<a "):
        assert tag not in html, tag


def tables(tokens: list[Token]) -> list[list[list[str]]]:
    found, rows = [], None
    for t in tokens:
        if t.type == "table_open":
            rows = []
        elif t.type == "tr_open":
            rows.append([])
        elif t.type == "inline" and rows is not None and rows:
            rows[-1].append(inline_text(t))
        elif t.type == "table_close":
            found.append(rows)
            rows = None
    return found


def test_every_table_has_the_rows_and_cells_the_data_has(reports) -> None:
    hostile, _ = reports
    models = {printable(m) for m in HOSTILE_TEXTS}
    found = tables(RENDERER.parse(hostile))
    assert len(found) >= 6
    model_tables = 0
    for rows in found:
        header = rows[0]
        assert all(len(row) == len(header) for row in rows), rows
        if header[0] == "Model":
            model_tables += 1
            assert sorted(row[0] for row in rows[1:]) == sorted(models), rows
        if header[:2] == ["Cell", "Model"]:
            assert {row[1] for row in rows[1:]} == models
            assert {row[0] for row in rows[1:]} == {printable(HOSTILE["domain"]) + " L5"}
    assert model_tables >= 3


def test_names_are_printed_visibly_and_literally(reports) -> None:
    hostile, _ = reports
    tokens = RENDERER.parse(hostile)
    prose = "\n".join(inline_text(t) for t in tokens if t.type == "inline")
    for value in (
        *HOSTILE_TEXTS,
        HOSTILE["benchmark"],
        HOSTILE["missing model"],
        HOSTILE["unparsed key"],
        HOSTILE["rule"],
        " ".join(HOSTILE["description"].split()),
    ):
        assert printable(value) in prose, value
    headings = [
        inline_text(tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "heading_open"
    ]
    assert not any(word in h for h in headings for word in ("Heading", "Missing", "Injected", "Owned"))
    assert "\u202e" not in hostile and "\u200b" not in hostile


# ---- the terminal


def test_the_terminal_prints_no_control_character_from_data(tmp_path: Path, run_cli) -> None:
    """The worked-examples table printed the answer line's ESC, OSC title sequence and NUL raw
    (its cell was a rich Text, which the console does not escape)."""
    passing = {**HOSTILE, "unparsed key": "unstable; " + HOSTILE["key"]}  # check audits a passing rule
    rule = write_benchmark(tmp_path / "bench", passing)
    result = run_cli("check", str(rule), "--bench", str(tmp_path / "bench"), "--resamples", "20")
    assert result.code == 0, result.err
    for raw in ("\x1b", "\x07", "\x00", "\u202e", "\u200b"):
        assert raw not in result.out, repr(raw)
    assert "\\x1b]0;title\\x07" in result.out  # shown, escaped


def test_a_stdout_that_cannot_encode_every_character_gets_escapes(tmp_path: Path) -> None:
    """PYTHONIOENCODING=ascii (a pipe that cannot encode the tables' arrows) ended in
    UnicodeEncodeError, exit 3: the text now carries escapes, and JSON on stdout its JSON
    escapes, so it reads back as the same document the file holds."""
    from hostile import run_keyaudit

    passing = {**HOSTILE, "unparsed key": "unstable; " + HOSTILE["key"]}
    rule = write_benchmark(tmp_path / "bench", passing)
    args = ("check", str(rule), "--bench", str(tmp_path / "bench"), "--resamples", "20")
    ascii_only = {"PYTHONIOENCODING": "ascii", "KEYAUDIT_CACHE_DIR": "off"}
    run = run_keyaudit(*args, env=ascii_only)
    assert run.code == 0, run.err
    assert "\\u2192" in run.out  # the arrows of "wrong→right", escaped
    piped = run_keyaudit(*args, "--json", "-", env=ascii_only)
    written = run_keyaudit(*args, "--json", str(tmp_path / "a.json"), env={"KEYAUDIT_CACHE_DIR": "off"})
    assert piped.code == written.code == 0, piped.err + written.err
    assert json.loads(piped.out) == json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
