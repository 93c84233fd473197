"""The audit page ``check --html`` writes, read without a browser (issue 35; issue 37's HTML items):
the page holds every section and table of the Markdown report with the same figures in the same
order; the forest plots' labels stay inside the picture and apart at any range; every scored
response of a ruled cell is in the page's data, placed by the (model, id, epoch) the audit scored
(ids holding ``#`` or ending in ``#2`` included); data that looks like the page's placeholders
stays text; the same inputs give the same bytes. The browser tests are in
``tests/test_review_page_browser.py``."""

from __future__ import annotations

import html
import json
import math
import random
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from keyaudit.engine.reports.forest_svg import (
    WIDTH,
    ForestRow,
    Mark,
    Series,
    forest_svg,
    text_width,
)

PS = "physical_stability"
NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


# ---- reading the page and the Markdown -----------------------------------------------------------


class _Sections(HTMLParser):
    """The text of the page's report: its head and each ``section.report``, as (title, text,
    table shapes); an ordered list's items carry their numbers, as a browser shows them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[dict] = []
        self.depth = 0  # inside a report part: the nesting of its elements
        self.lists: list[list[int]] = []
        self.in_title = False
        self.rows: list[int] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self.depth == 0:
            if (tag == "header" and attrs.get("id") == "head") or (
                tag == "section" and "report" in (attrs.get("class") or "").split()
            ):
                self.parts.append({"title": "", "text": [], "tables": []})
                self.depth = 1
            return
        self.depth += 1
        part = self.parts[-1]
        if tag == "h2":
            self.in_title = True
        elif tag == "ol":
            self.lists.append([int(attrs.get("start") or 1)])
        elif tag == "ul":
            self.lists.append([])
        elif tag == "li" and self.lists and self.lists[-1]:
            part["text"].append(f" {self.lists[-1][0]}. ")
            self.lists[-1][0] += 1
        elif tag == "table":
            part["tables"].append([])
        elif tag == "tr":
            part["tables"][-1].append(0)
        elif tag in ("td", "th"):
            part["tables"][-1][-1] += 1
        if tag in ("p", "li", "td", "th", "h2", "h3", "tr"):
            part["text"].append(" ")

    def handle_endtag(self, tag):
        if self.depth == 0:
            return
        self.depth -= 1
        if tag == "h2":
            self.in_title = False
        elif tag in ("ol", "ul") and self.lists:
            self.lists.pop()
        if tag in ("p", "li", "td", "th", "h2", "h3"):
            self.parts[-1]["text"].append(" ")

    def handle_data(self, data):
        if self.depth:
            self.parts[-1]["text"].append(data)
            if self.in_title:
                self.parts[-1]["title"] += data


def page_sections(page: str) -> list[dict]:
    parser = _Sections()
    parser.feed(page)
    return [
        {"title": p["title"].strip(), "text": "".join(p["text"]), "tables": [[c for c in t] for t in p["tables"]]}
        for p in parser.parts
    ]


def markdown_sections(markdown: str) -> list[dict]:
    """The Markdown report cut at its ``##`` headings: title, text, the shape of each table (cells
    per row, the delimiter row left out)."""
    parts: list[dict] = [{"title": "", "lines": []}]
    for line in markdown.splitlines():
        if line.startswith("## "):
            parts.append({"title": line[3:].replace("`", "").strip(), "lines": []})
        parts[-1]["lines"].append(line)
    out = []
    for part in parts:
        tables, current = [], None
        for line in part["lines"]:
            if line.startswith("|"):
                if current is None:
                    current = []
                    tables.append(current)
                if not re.fullmatch(r"\|[\s:|-]+\|", line):
                    current.append(len(re.findall(r"(?<!\\)\|", line)) - 1)
            else:
                current = None
        out.append({"title": part["title"], "text": html.unescape("\n".join(part["lines"])), "tables": tables})
    return out


def numbers(text: str) -> list[str]:
    return NUMBER.findall(text)


def page_data(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="audit-data">(.*?)</script>', page, re.S)
    return json.loads(found.group(1))


def page_rows(page: str) -> dict[str, list[dict]]:
    """The verdict browser's rows of each cell, decoded as the page's script decodes them."""
    data = page_data(page)
    strings, verdicts = data["strings"], data["verdicts"]
    out = {}
    for cell in data["cells"]:
        rows = []
        for i, code in enumerate(cell["verdict"]):
            answer, accept, reason, extracted, uncertain, explanation = verdicts[code]
            rows.append(
                {
                    "model": data["models"][cell["model"][i]],
                    "id": cell["ids"][cell["item"][i]],
                    "epoch": cell["epoch"][i] if cell["epoch"] else 1,
                    "key": strings[cell["keys"][cell["item"][i]]],
                    "answer": None if answer < 0 else strings[answer],
                    "strict": cell["strict"][i] == "1",
                    "accept": accept == 1,
                    "reason": strings[reason],
                    "extracted": strings[extracted],
                    "uncertain": [strings[u] for u in uncertain],
                    "explanation": None if explanation < 0 else [strings[s] for s in data["explanations"][explanation]],
                }
            )
        out[cell["name"]] = rows
    return out


# ---- benchmarks ---------------------------------------------------------------------------------

GEAR_KEYS = ("decrease; direction unchanged", "increase; direction unchanged", "stay the same; direction unchanged")


def one_level_bench(
    root: Path, ids: list[str] | None = None, models=("M1", "M2"), name: str = "one level",
    id_pattern: str = r"^(?P<domain>.+)_(?P<image>\d+)_q(?P<level>\d+)$",
) -> tuple[Path, dict]:
    """A made-up benchmark of one level (gear_train L5, 30 items): what each model's stored
    verdict (``strict``) and the rule's verdict (``ruled``) are, per (model, id)."""
    ids = ids or [f"gear_train_{i:04d}_q5" for i in range(30)]
    root.mkdir(parents=True)
    (root / "keys").mkdir()
    (root / "responses").mkdir()
    roster = ", ".join(json.dumps(m) for m in models)
    (root / "benchmark.toml").write_text(
        f"name = {json.dumps(name)}\nid_pattern = {json.dumps(id_pattern)}\nroster = [{roster}]\n"
        '[keys]\npath = "keys/gear_train.jsonl"\n',
        encoding="utf-8",
    )
    keys = {item: GEAR_KEYS[i % 3] for i, item in enumerate(ids)}
    (root / "keys" / "gear_train.jsonl").write_text(
        "".join(json.dumps({"id": item, "answer": key}) + "\n" for item, key in keys.items()), encoding="utf-8"
    )
    rng = random.Random(4)
    expected = {}
    for n, model in enumerate(models):
        lines = []
        for item, key in keys.items():
            speed = key.split(";")[0] if rng.random() < 0.8 - 0.3 * n else ("increase" if key[0] != "i" else "decrease")
            text = f"Reasoning.\nANSWER: D's speed will {speed}; its direction stays the same"
            verbatim = rng.random() < 0.2
            if verbatim:
                text = f"Reasoning.\nANSWER: {key}"
            expected[(model, item)] = (verbatim, verbatim or speed == key.split(";")[0])
            lines.append(json.dumps({"id": item, "model": model, "response": text, "correct": verbatim}))
        (root / "responses" / f"m{n}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root, expected


@pytest.fixture(scope="module")
def example_page(tmp_path_factory) -> tuple[str, str]:
    """The example's page and Markdown report (physical_stability, 200 resamples)."""
    from typer.testing import CliRunner

    from keyaudit.cli.app import app

    folder = tmp_path_factory.mktemp("page")
    page, markdown = folder / "audit.html", folder / "audit.md"
    result = CliRunner().invoke(
        app, ["check", PS, "--resamples", "200", "--html", str(page), "--markdown", str(markdown)]
    )
    assert result.exit_code == 0, result.output
    return page.read_text(encoding="utf-8"), markdown.read_text(encoding="utf-8")


def assert_same_report(page: str, markdown: str) -> None:
    """Every section of the Markdown in the page, in order, with the same numbers in the same
    order and tables of the same shape."""
    want, got = markdown_sections(markdown), page_sections(page)
    assert [s["title"] for s in got] == [s["title"] for s in want]
    for w, g in zip(want, got, strict=True):
        assert numbers(g["text"]) == numbers(w["text"]), w["title"]
        assert g["tables"] == w["tables"], w["title"]


# ---- the report's sections ------------------------------------------------------------------------


def test_the_page_has_every_section_and_figure_of_the_markdown(example_page) -> None:
    page, markdown = example_page
    assert_same_report(page, markdown)
    titles = [s["title"] for s in page_sections(page)]
    for start in ("Scope", "1. Structure", "2. Proposed scoring rule", "3. Counterfactual", "4. Effect on aggregates",
                  "Before → after", "5. Other sentence-valued"):
        assert any(t.startswith(start) for t in titles), start
    text = " ".join(s["text"] for s in page_sections(page))
    for table_head in ("Raw L5 before", "Analytic SE after", "Design effect after", "Could be", "Overall macro after"):
        assert table_head in text


def test_a_one_level_page_leaves_out_what_the_markdown_leaves_out(tmp_path: Path, run_cli) -> None:
    bench, _ = one_level_bench(tmp_path / "bench")
    page, markdown = tmp_path / "audit.html", tmp_path / "audit.md"
    result = run_cli("check", "gear_train", "--bench", str(bench), "--resamples", "200",
                     "--html", str(page), "--markdown", str(markdown))
    assert result.code == 0, result.err
    page_text, md = page.read_text(encoding="utf-8"), markdown.read_text(encoding="utf-8")
    assert_same_report(page_text, md)
    assert "L4" not in md and "L4" not in page_text
    assert page_text.count("<svg") == 1  # the overall change only: no L5−L4 to plot


@pytest.fixture(scope="module")
def labelled(tmp_path_factory) -> Path:
    """A review file of physical_stability, 40 sampled verdicts labelled, four against the rule."""
    from typer.testing import CliRunner

    from keyaudit.cli.app import app

    folder = tmp_path_factory.mktemp("labels")
    queue = folder / "queue.jsonl"
    result = CliRunner().invoke(app, ["review", PS, "--out", str(queue), "--sample", "40"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in queue.read_text(encoding="utf-8").split("\n") if line]
    for n, row in enumerate(rows):
        said = row["verdict"] == "accept"
        row["accept"] = (not said) if n in (0, 7, 19, 30) else said
    path = folder / "labelled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_with_adjudications_the_page_has_the_extraction_error_and_the_labels(
    tmp_path: Path, run_cli, labelled: Path
) -> None:
    page, markdown = tmp_path / "audit.html", tmp_path / "audit.md"
    result = run_cli("check", PS, "--resamples", "200", "--adjudications", str(labelled),
                     "--html", str(page), "--markdown", str(markdown))
    assert result.code == 0, result.err
    page_text, md = page.read_text(encoding="utf-8"), markdown.read_text(encoding="utf-8")
    assert_same_report(page_text, md)
    assert "corrected" in page_text and "Adjudications from" in page_text
    rows = page_rows(page_text)[f"{PS} L5"]
    labels = {(r["model"], r["id"]): r["accept"] for r in map(json.loads, labelled.read_text().split("\n")[:-1])}
    for row in rows:  # the verdict the audit counted: a person's label where there is one
        if (row["model"], row["id"]) in labels:
            assert row["accept"] == labels[(row["model"], row["id"])]


def test_the_same_inputs_give_the_same_page(tmp_path: Path, run_cli, example_page) -> None:
    again = tmp_path / "again.html"
    result = run_cli("check", PS, "--resamples", "200", "--html", str(again))
    assert result.code == 0, result.err
    assert again.read_text(encoding="utf-8") == example_page[0]


def test_the_page_loads_nothing_and_runs_only_its_own_script(example_page) -> None:
    page = example_page[0]
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy
    assert re.findall(r"<script[^>]*>", page) == ['<script type="application/json" id="audit-data">', "<script>"]
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs and all(h.startswith("#") for h in hrefs)  # the contents' links, within the page


# ---- every verdict --------------------------------------------------------------------------------


def test_every_scored_response_is_in_the_page_with_its_explanation(example_page) -> None:
    from keyaudit.cli.common import bench_dir
    from keyaudit.engine.load.benchmark import load_benchmark
    from keyaudit.engine.load.locate import resolve_rule_path
    from keyaudit.engine.reports.explain_text import explain_answer
    from keyaudit.engine.rule_language.rules.rule import load_rule
    from keyaudit.engine.rule_language.scoring.scorer import Scorer

    rows = page_rows(example_page[0])[f"{PS} L5"]
    benchmark = load_benchmark(bench_dir(None))
    scorer = Scorer(load_rule(resolve_rule_path(PS)))
    stored = [r for r in benchmark.responses if r.id.startswith(PS) and r.id.endswith("_q5")]
    assert len(rows) == len(stored) == 500
    by_sample = {(r.model, r.id, r.epoch): r for r in stored}
    assert [(r["model"], r["id"]) for r in rows] == sorted((r["model"], r["id"]) for r in rows)
    for row in rows[::7]:
        response = by_sample[(row["model"], row["id"], row["epoch"])]
        key = benchmark.keys[row["id"]].answer
        verdict = scorer.score(key, response.text)
        assert row["key"] == key and row["strict"] == response.correct
        assert (row["accept"], row["reason"], row["answer"]) == (verdict.accept, verdict.reason, verdict.answer_text)
        assert row["uncertain"] == list(verdict.uncertain)
        assert row["explanation"] == explain_answer(scorer, key, verdict.answer_text).lines()


@pytest.mark.parametrize("suffixes", [("#x", "#2", ""), ("#2",)])
def test_ids_holding_a_hash_are_placed_by_the_sample_not_by_their_name(tmp_path: Path, run_cli, suffixes) -> None:
    """An id holding ``#`` ended the page in ValueError (exit 3: the page split ``id#epoch`` at
    the first ``#``), and ids ending in ``#2`` lost their flips without a word (each was looked
    up as epoch 2 of another id: the page listed none of 28). Every sample is now in the page,
    as scored."""
    ids = [f"gear_train_{i:04d}_q5" + suffixes[i % len(suffixes)] for i in range(30)]
    pattern = r"^(?P<domain>[a-z_]+?)_(?P<image>\d+)_q(?P<level>\d+)(?:#.*)?$"
    bench, expected = one_level_bench(tmp_path / "bench", ids=ids, id_pattern=pattern)
    page = tmp_path / "audit.html"
    result = run_cli("check", "gear_train", "--bench", str(bench), "--resamples", "100", "--html", str(page))
    assert result.code == 0, result.err
    rows = page_rows(page.read_text(encoding="utf-8"))["gear_train L5"]
    assert {(r["model"], r["id"]): (r["strict"], r["accept"]) for r in rows} == expected
    flips = [r for r in rows if r["accept"] != r["strict"]]
    assert {s for s in suffixes if s} <= {r["id"][-2:] for r in flips}


def test_several_epochs_are_rows_of_their_own(tmp_path: Path, run_cli) -> None:
    """With ``--epochs all`` each sample is a row with its epoch (the flips' names are
    ``id#epoch``; the page never reads them back)."""
    data = Path(__file__).parent / "data"
    page = tmp_path / "audit.html"
    result = run_cli("check", "gear_train", "--bench", str(data / "Dataset"), "--responses",
                     str(data / "logs" / "inspect" / "synth-atlas-xl.eval"), "--epochs", "all",
                     "--resamples", "100", "--html", str(page))
    assert result.code == 0, result.err
    rows = page_rows(page.read_text(encoding="utf-8"))["gear_train L5"]
    assert len(rows) == 16 and {r["epoch"] for r in rows} == {1, 2}
    assert len({(r["id"], r["epoch"]) for r in rows}) == 16
    assert [(r["id"], r["epoch"]) for r in rows] == sorted((r["id"], r["epoch"]) for r in rows)


def test_data_that_looks_like_the_page_s_placeholders_stays_text(tmp_path: Path, run_cli) -> None:
    """A benchmark or model named ``{{SVG}}``, ``{{DATA}}``… was expanded again by the next
    placeholder's replace: the data block or the plot landed inside a name."""
    hostile = "{{SVG}}{{DATA}}{{SCRIPT}}{{CSS}}{{TITLE}}"
    bench, _ = one_level_bench(tmp_path / "bench", models=(hostile, "M2 {{DATA}}"), name=hostile)
    page = tmp_path / "audit.html"
    result = run_cli("check", "gear_train", "--bench", str(bench), "--resamples", "100", "--html", str(page))
    assert result.code == 0, result.err
    text = page.read_text(encoding="utf-8")
    assert text.count('<script type="application/json"') == 1 and text.count("<svg") == 1
    assert text.count("<style>") == 1 and text.count('"use strict"') == 1
    assert page_data(text)["models"] == [hostile, "M2 {{DATA}}"]
    assert f"<title>keyaudit audit: {hostile}</title>" in text


def test_markup_in_data_is_text_in_the_page(tmp_path: Path, run_cli) -> None:
    """A model name and an answer holding HTML reach the page as text: no element, no link."""
    name = '<img src=x onerror="alert(1)"><script>alert(2)</script>[a](javascript:alert(3))'
    bench, _ = one_level_bench(tmp_path / "bench", models=(name,))
    responses = bench / "responses" / "m0.jsonl"
    responses.write_text(responses.read_text(encoding="utf-8").replace(
        "ANSWER: D's", "ANSWER: <b onclick=alert(4)>D's"), encoding="utf-8")
    page = tmp_path / "audit.html"
    result = run_cli("check", "gear_train", "--bench", str(bench), "--resamples", "100", "--html", str(page))
    assert result.code == 0, result.err
    text = page.read_text(encoding="utf-8")
    assert "<img" not in text and "<b " not in text and "javascript:" not in text.replace("[a](javascript:", "")
    assert re.findall(r"<script[^>]*>", text) == ['<script type="application/json" id="audit-data">', "<script>"]
    assert not re.search(r"<a [^>]*href=\"(?!#)", text)
    rows = page_rows(text)["gear_train L5"]
    assert all(r["model"] == name for r in rows) and any("<b onclick=alert(4)>" in (r["answer"] or "") for r in rows)


# ---- the forest plots -----------------------------------------------------------------------------


def _own_text(node) -> str:
    """A text element's words, without its <title> tooltip."""
    return (node.text or "") + "".join(child.tail or "" for child in node)


def assert_labels_fit(svg: str) -> None:
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert float(root.get("width")) == WIDTH
    texts = root.iter(f"{ns}text")
    ticks = []
    for node in texts:
        x, size = float(node.get("x")), float(node.get("font-size"))
        width = text_width(_own_text(node), size)
        anchor = node.get("text-anchor", "start")
        start = x - width if anchor == "end" else x - width / 2 if anchor == "middle" else x
        assert start >= 0 and start + width <= WIDTH, (_own_text(node), start, start + width)
        if node.get("class") == "tick":
            ticks.append((start, start + width))
    assert len(ticks) >= 2
    ticks.sort()
    for (_, end), (start, _) in zip(ticks, ticks[1:], strict=False):
        assert end < start, ticks
    axis = [line for line in root.iter(f"{ns}line") if line.get("stroke") == "#57606a" and line.get("y1") == line.get("y2")]
    left, right = float(axis[0].get("x1")), float(axis[0].get("x2"))
    for circle in root.iter(f"{ns}circle"):
        if circle.find(f"{ns}title") is not None:  # a mark, not the legend
            assert left - 0.1 <= float(circle.get("cx")) <= right + 0.1
    labels = [n for n in root.iter(f"{ns}text") if n.get("class") == "label"]
    assert all(float(n.get("x")) < left for n in labels)


RANGES = [
    [(0.0, 0.0, 0.0)],  # nothing moves
    [(-0.0385, -0.06, -0.01), (0.0, 0.0, 0.0)],  # the overlap once seen: "-3.85" over "+0.00 pp"
    [(0.8094, 0.79, 0.83), (0.023, 0.01, 0.03)],  # the clipped "+80.94 pp" and "+2.30 p"
    [(1e-9, 0.0, 2e-9)],
    [(-1.0, -1.0, 1.0), (1.0, -1.0, 1.0)],
    [(-0.62512, -0.6, -0.65), (-0.5169, -0.5991, -0.4383)],
    [(123.0, 100.0, 150.0)],  # nonsense values still lay out
    [(0.5, math.nan, math.nan), (math.nan, math.nan, math.nan)],
]


@pytest.mark.parametrize("values", RANGES)
def test_forest_labels_never_overlap_or_clip(values) -> None:
    rows = [ForestRow(f"Model {n}", (Mark(*v), Mark(v[0] / 2, v[1] / 2, v[2] / 2))) for n, v in enumerate(values)]
    svg = forest_svg("Adjusted L5−L4 per model, before and after, with its 95% bootstrap interval",
                     "percentage points", (Series("before (strict)", "#888"), Series("after (rule)", "#00f")), rows)
    assert_labels_fit(svg)


def test_forest_labels_fit_at_random_ranges_and_names() -> None:
    rng = random.Random(35)
    for _ in range(300):
        scale = 10 ** rng.uniform(-7, 0.5)
        centre = rng.uniform(-1, 1) * scale * rng.choice((0, 1, 10, 100))
        rows = []
        for n in range(rng.randint(1, 12)):
            estimate = centre + rng.gauss(0, scale)
            low, high = sorted((estimate + rng.gauss(0, scale), estimate + rng.gauss(0, scale)))
            name = rng.choice(["M", "Synth Juniper 70B", "模型" * rng.randint(1, 30), "x" * rng.randint(1, 90)])
            rows.append(ForestRow(f"{name} {n}", (Mark(estimate, low, high),)))
        assert_labels_fit(forest_svg("Overall score after − before per model, with its 95% interval",
                                     "percentage points (overall: the mean adjusted score over every cell)",
                                     (Series("after − before", "#00f"),), rows))


def test_a_plot_with_nothing_to_show_is_left_out() -> None:
    assert forest_svg("t", "a", (Series("s", "#000"),), [ForestRow("M", (Mark(math.nan, math.nan, math.nan),))]) == ""


# ---- the review page ------------------------------------------------------------------------------


def test_review_page_keeps_texts_with_unicode_line_separators(tmp_path: Path, run_cli) -> None:
    """``review --html`` split its JSON Lines with str.splitlines, which also ends a line at
    U+2028, U+2029 and U+0085 (json.dumps writes them as they are): a queue holding one in a
    model name or a key ended in JSONDecodeError, exit 3."""
    model = "M\u2028one\u2029two\u0085three"
    bench, _ = one_level_bench(tmp_path / "bench", models=(model,))
    keys = bench / "keys" / "gear_train.jsonl"
    keys.write_text(keys.read_text(encoding="utf-8").replace("unchanged", "unchanged\\u2028\\u0085"), encoding="utf-8")
    page = tmp_path / "review.html"
    result = run_cli("review", "gear_train", "--bench", str(bench), "--sample", "30", "--html", str(page))
    assert result.code == 0, result.err
    found = re.search(r'<script type="application/json" id="queue">(.*?)</script>', page.read_text(encoding="utf-8"), re.S)
    records = json.loads(found.group(1))["records"]
    assert len(records) == 30 and {r["model"] for r in records} == {model}
    assert all(r["key"].endswith("unchanged\u2028\u0085") for r in records)


def test_review_page_placeholders_in_data_stay_text() -> None:
    from types import SimpleNamespace

    from keyaudit.engine.reports.review_page import review_html

    row = SimpleNamespace(id="{{DATA}}", model="{{SCRIPT}}", epoch=1, key="{{CSP}}", answer_line="{{TITLE}}",
                          extracted={}, verdict="accept", uncertain=(), selected="uncertain", draw=None)
    page = review_html([row], title="{{DATA}}")
    assert page.count('<script type="application/json"') == 1 and page.count('"use strict"') == 1
    found = re.search(r'<script type="application/json" id="queue">(.*?)</script>', page, re.S)
    (record,) = json.loads(found.group(1))["records"]
    assert (record["id"], record["model"], record["key"], record["answer_line"]) == ("{{DATA}}", "{{SCRIPT}}", "{{CSP}}", "{{TITLE}}")
    assert "<title>{{DATA}}</title>" in page


def test_the_page_is_the_same_for_any_number_of_workers(tmp_path: Path, run_cli, monkeypatch, example_page) -> None:
    monkeypatch.setenv("KEYAUDIT_PARALLEL_MIN", "0")  # workers even for the example's few answers
    page = tmp_path / "jobs.html"
    result = run_cli("check", PS, "--resamples", "200", "--jobs", "2", "--html", str(page))
    assert result.code == 0, result.err
    assert page.read_text(encoding="utf-8") == example_page[0]
