"""The pages keyaudit writes, in a real browser: headless Chromium (Debian's package, driven by
Playwright pointed at the system browser; nothing is downloaded) opens each from disk.

The review page (issue 25, items 2 and 3; issue 37): shows the queue, labels rows by keyboard and
mouse, downloads the adjudications, which ``check --adjudications`` reads and the page loads back;
labels another page planted in the browser's storage are never read. Answer text is shown as
text: a response holding ``<script>`` shows those characters.

The audit page (issue 35): every section of the report, tables that sort, forest plots whose
labels Chromium draws inside the picture and apart, every verdict browsable (filters, sort,
paging, each row opening to the rule's reading), on the example and on a one-level benchmark; it
asks for nothing over the network and runs no script from the data."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from keyaudit.engine.reports.forest_svg import text_width
from keyaudit.engine.reports.review_page import review_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
#: The flags a sandboxed root session needs, and no background network (this machine has none).
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def expect(locator):
    """Playwright's waiting assertions (the pages' CSP forbids the string evaluation that
    ``wait_for_function`` uses)."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


@pytest.fixture
def browser(tmp_path: Path):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        context = launched.new_context(accept_downloads=True)
        try:
            yield context
        finally:
            context.close()
            launched.close()


def _row(i: int, answer: str, verdict: str = "accept", selected: str = "uncertain"):
    return SimpleNamespace(
        id=f"item_{i:04d}_q5", model="Synth Test", epoch=1, key="stable; after removing block C",
        answer_line=answer, extracted={"status": "stable"}, verdict=verdict,
        uncertain=("a clause left unread",) if selected == "uncertain" else (), selected=selected,
        draw=None,
    )


def test_answer_text_is_shown_as_text_never_run(tmp_path: Path, browser) -> None:
    hostile = '<script>window.pwned = 1</script></script><img src=x onerror="window.pwned=2">'
    page_file = tmp_path / "review.html"
    page_file.write_text(review_html([_row(0, hostile), _row(1, "stable & <b>sure</b>")]), encoding="utf-8")
    page = browser.new_page()
    page.goto(page_file.as_uri())
    answers = page.locator(".answer").all_text_contents()
    assert answers == [hostile, "stable & <b>sure</b>"]
    assert page.evaluate("window.pwned === undefined")
    assert page.locator(".answer img").count() == 0 and page.locator(".answer b").count() == 0


def _label_by_keyboard_and_mouse(page) -> tuple[list[str], str, int]:
    rows = page.locator("section.row")
    total = rows.count()
    assert total >= 3
    assert page.locator("#progress").text_content() == f"0 of {total} labelled"
    verdicts = [text.removeprefix("rule: ") for text in page.locator(".verdict").all_text_contents()]
    # overturn the first two verdicts (keyboard: a/r label and move on), confirm the third by mouse
    for verdict in verdicts[:2]:
        page.keyboard.press("r" if verdict.startswith("accept") else "a")
    third = "accept" if verdicts[2].startswith("accept") else "reject"
    rows.nth(2).locator(f"button.{third}").click()
    rows.nth(2).locator("input").fill("checked by hand")
    assert page.locator("#progress").text_content() == f"3 of {total} labelled"
    return verdicts, third, total


def test_label_download_load_and_check_reads_it(tmp_path: Path, browser, run_cli) -> None:
    page_file = tmp_path / "review.html"
    result = run_cli("review", "physical_stability", "--html", str(page_file), "--sample", "5")
    assert result.code == 0, result.err
    page = browser.new_page()
    page.goto(page_file.as_uri())
    verdicts, third, total = _label_by_keyboard_and_mouse(page)
    page.keyboard.press("Escape")
    page.keyboard.press("j")  # k/j move the current row
    assert page.locator("section.row.current").get_attribute("data-index") == "3"
    with page.expect_download() as download_info:
        page.locator("#download").click()
    target = tmp_path / "adjudications.jsonl"
    download_info.value.save_as(target)
    labelled = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert len(labelled) == total
    assert [row["accept"] for row in labelled[:3]] == [
        not verdicts[0].startswith("accept"), not verdicts[1].startswith("accept"), third == "accept",
    ]
    assert all(row["accept"] is None for row in labelled[3:]) and labelled[2]["note"] == "checked by hand"
    checked = run_cli("check", "physical_stability", "--resamples", "200", "--adjudications", str(target))
    assert checked.code == 0, checked.err
    match = re.search(r"3 verdicts labelled by a person, (\d+) overturned", " ".join(checked.out.split()))
    assert match and match.group(1) == "2", checked.out[-2000:]
    # the labels live in the page: a reload starts empty, and loading the file brings them back
    page.reload()
    assert page.locator("#progress").text_content() == f"0 of {total} labelled"
    page.locator("#load").set_input_files(str(target))
    expect(page.locator("#progress")).to_have_text(f"3 of {total} labelled")
    assert page.locator("section.row").nth(2).locator("input").input_value() == "checked by hand"
    assert page.locator("section.row").nth(0).locator("button.on").count() == 1
    # a file of another queue loads nothing
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({**labelled[0], "id": "not_in_this_queue"}) + "\n", encoding="utf-8")
    page.locator("#load").set_input_files(str(other))
    expect(page.locator("#loaded")).to_contain_text("not a row of this queue; nothing loaded")
    assert page.locator("#progress").text_content() == f"3 of {total} labelled"


def test_labels_planted_by_another_page_are_never_read(tmp_path: Path, browser, run_cli) -> None:
    """Every page opened from disk shares one localStorage: another downloaded page could write
    the review page's stored labels (its key was a hash of the queue, which the author of the
    benchmark can compute), and the download carried labels nobody gave."""
    import hashlib

    from keyaudit.engine.reports.review_file import review_jsonl

    rows = [_row(i, f"stable, answer {i}") for i in range(4)]
    page_file = tmp_path / "review.html"
    page_file.write_text(review_html(rows), encoding="utf-8")
    digest = hashlib.sha256(review_jsonl(rows).encode("utf-8")).hexdigest()[:16]
    forged = {str(i): {"label": "reject", "note": "planted"} for i in range(4)}
    attacker = tmp_path / "innocent.html"
    attacker.write_text(
        "<!DOCTYPE html><script>localStorage.setItem(" + json.dumps("keyaudit-review:" + digest)
        + ", " + json.dumps(json.dumps(forged)) + ");</script>", encoding="utf-8",
    )
    page = browser.new_page()
    page.goto(attacker.as_uri())
    assert page.evaluate("Object.keys(localStorage).length") == 1  # planted, in the shared storage
    page.goto(page_file.as_uri())
    assert page.locator("#progress").text_content() == "0 of 4 labelled"
    assert page.locator("button.on").count() == 0
    assert page.locator("section.row input").first.input_value() == ""
    page.keyboard.press("a")
    assert page.evaluate("localStorage.getItem({})".format(json.dumps("keyaudit-review:" + digest))) == json.dumps(forged)
    with page.expect_download() as download_info:
        page.locator("#download").click()
    target = tmp_path / "adjudications.jsonl"
    download_info.value.save_as(target)
    labels = [json.loads(line)["accept"] for line in target.read_text(encoding="utf-8").splitlines()]
    assert labels == [True, None, None, None]


# ---- the audit page -------------------------------------------------------------------------------


def _open(browser, path: Path):
    """The page from disk, with every request and console message recorded."""
    page = browser.new_page()
    page.set_viewport_size({"width": 1300, "height": 900})
    seen = {"requests": [], "console": []}
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("console", lambda m: seen["console"].append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: seen["console"].append(f"error: {e}"))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page, seen


def assert_figures_fit(page) -> int:
    """Every text of every forest plot inside its picture, as Chromium draws it; the tick labels
    apart; and the width bound the layout uses above Chromium's own measure of every text."""
    boxes = page.evaluate(
        """() => Array.from(document.querySelectorAll('#figures svg')).map(svg => ({
            width: svg.width.baseVal.value,
            texts: Array.from(svg.querySelectorAll('text')).map(t => {
              const b = t.getBBox();
              const own = Array.from(t.childNodes).filter(n => n.nodeType === 3).map(n => n.data).join('');
              return {x: b.x, width: b.width, cls: t.getAttribute('class'), text: own,
                      size: Number(t.getAttribute('font-size'))};
            })}))"""
    )
    for svg in boxes:
        ticks = []
        for t in svg["texts"]:
            assert t["x"] >= 0 and t["x"] + t["width"] <= svg["width"], t
            assert t["width"] <= text_width(t["text"], t["size"]), t
            if t["cls"] == "tick":
                ticks.append((t["x"], t["x"] + t["width"]))
        ticks.sort()
        assert len(ticks) >= 2 and all(a[1] < b[0] for a, b in zip(ticks, ticks[1:], strict=False))
    return len(boxes)


def _explain_lines(rule: str, key: str, answer: str) -> list[str]:
    from keyaudit.engine.load.locate import resolve_rule_path
    from keyaudit.engine.reports.explain_text import explain_answer
    from keyaudit.engine.rule_language.rules.rule import load_rule
    from keyaudit.engine.rule_language.scoring.scorer import Scorer

    return explain_answer(Scorer(load_rule(resolve_rule_path(rule))), key, answer).lines()


def test_the_audit_page_shows_the_whole_audit(tmp_path: Path, browser, run_cli) -> None:
    target = tmp_path / "audit.html"
    result = run_cli("check", "physical_stability", "--resamples", "200", "--html", str(target))
    assert result.code == 0, result.err
    page, seen = _open(browser, target)
    assert seen["requests"] == [target.as_uri()] and seen["console"] == []
    titles = page.locator("section.report h2").all_text_contents()
    assert titles[0] == "Scope limitation" and titles[-1].startswith("5. Other sentence-valued")
    assert page.locator("nav#contents a").count() == len(titles) + 2  # and the figures, every verdict
    assert assert_figures_fit(page) == 2
    assert page.locator("#figures svg").first.locator("circle").count() == 2 + 2 * 10  # legend, two per model
    # a report table sorts by a column: §3's proposed accuracy, ascending then descending
    table = page.locator("section.report table", has=page.locator("th", has_text="Proposed structured"))
    head = table.locator("th", has_text="Proposed structured")
    column = [h.strip() for h in table.locator("th").all_text_contents()].index("Proposed structured") + 1
    values = lambda: [float(c.rstrip("%")) for c in table.locator(f"tbody td:nth-child({column})").all_text_contents()]  # noqa: E731
    head.click()
    assert values() == sorted(values())
    head.click()
    assert values() == sorted(values(), reverse=True)

    # every verdict: 500 responses in pages of 50
    assert page.locator("#v-count").text_content() == "500 of 500 shown"
    assert page.locator("#v-table tbody tr").count() == 50
    assert page.locator("#v-page").text_content() == "page 1 of 10 (rows 1–50)"
    page.locator("#v-next").click()
    assert page.locator("#v-page").text_content() == "page 2 of 10 (rows 51–100)"
    page.locator("#v-last").click()
    assert page.locator("#v-page").text_content() == "page 10 of 10 (rows 451–500)"
    page.locator("#v-size").select_option("200")  # the first row shown stays in view
    assert page.locator("#v-page").text_content() == "page 3 of 3 (rows 401–500)"
    page.locator("#v-first").click()
    assert page.locator("#v-table tbody tr").count() == 200
    page.locator("#v-size").select_option("50")
    # filters: model, verdict, reason, uncertain, an id
    page.locator("#v-model").select_option(label="Synth Birch 7B")
    assert page.locator("#v-count").text_content() == "50 of 500 shown"
    assert set(page.locator("#v-table td.model").all_text_contents()) == {"Synth Birch 7B"}
    page.locator("#v-verdict").select_option("up")
    ups = page.locator("#v-table tbody tr").count()
    assert ups == 24 and set(page.locator("#v-table td.change").all_text_contents()) == {"wrong → right"}
    page.locator("#v-verdict").select_option("reject")
    page.locator("#v-reason").select_option(page.locator("#v-reason option", has_text="wrong status").get_attribute("value"))
    assert set(page.locator("#v-table td.reason").all_text_contents()) == {"wrong status"}
    page.locator("#v-model").select_option("")
    page.locator("#v-verdict").select_option("")
    page.locator("#v-reason").select_option("")
    page.locator("#v-uncertain").check()
    assert page.locator("#v-count").text_content() == "3 of 500 shown"
    assert all(t for t in page.locator("#v-table td.uncertain").all_text_contents())
    page.locator("#v-uncertain").uncheck()
    page.locator("#v-find").fill("physical_stability_0015")
    assert page.locator("#v-count").text_content() == "10 of 500 shown"
    page.locator("#v-find").fill("")
    # sort by the answer line, then by model descending
    page.locator("#v-table th", has_text="Answer line").click()
    answers = page.locator("#v-table td.answer").all_text_contents()
    assert answers == sorted(answers)
    page.locator("#v-table th", has_text="Model").click()
    page.locator("#v-table th", has_text="Model").click()
    assert page.locator("#v-table td.model").first.text_content() == "Synth Juniper 70B"
    # a row opens to the rule's reading of its answer line, as test-rule --explain prints it
    row = page.locator("#v-table tr.row").first
    key, answer = row.locator("td.key").get_attribute("title"), row.locator("td.answer").text_content()
    row.click()
    explained = page.locator("#v-table tr.detail pre.explain").text_content()
    assert explained.split("\n") == _explain_lines("physical_stability", key, answer)
    assert "claims (" in explained and "why:" in explained and "verdict:" in explained
    row.press("Enter")
    assert page.locator("#v-table tr.detail").count() == 0


def test_a_one_level_benchmark_s_page(tmp_path: Path, browser, run_cli) -> None:
    from test_html_report import one_level_bench

    bench, expected = one_level_bench(tmp_path / "bench")
    target = tmp_path / "audit.html"
    result = run_cli("check", "gear_train", "--bench", str(bench), "--resamples", "200", "--html", str(target))
    assert result.code == 0, result.err
    page, seen = _open(browser, target)
    assert seen["requests"] == [target.as_uri()] and seen["console"] == []
    assert assert_figures_fit(page) == 1  # no L5−L4: the overall change only
    titles = page.locator("section.report h2").all_text_contents()
    assert "4. Effect on aggregates" in titles and not any("L4" in t for t in titles)
    assert "This benchmark has one level (L5)" in page.locator("section.report").all_text_contents()[titles.index("4. Effect on aggregates")]
    assert page.locator("#v-count").text_content() == "60 of 60 shown"
    page.locator("#v-verdict").select_option("up")
    assert page.locator("#v-table tbody tr").count() == sum(ruled and not strict for strict, ruled in expected.values())


def test_data_in_the_audit_page_never_runs(tmp_path: Path, browser, run_cli) -> None:
    from test_html_report import one_level_bench

    name = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
    bench, _ = one_level_bench(tmp_path / "bench", models=(name,), name=name)
    responses = bench / "responses" / "m0.jsonl"
    responses.write_text(responses.read_text(encoding="utf-8").replace(
        "ANSWER: D's", "ANSWER: <img src=y onerror=window.pwned=3> D's"), encoding="utf-8")
    target = tmp_path / "audit.html"
    result = run_cli("check", "gear_train", "--bench", str(bench), "--resamples", "100", "--html", str(target))
    assert result.code == 0, result.err
    page, seen = _open(browser, target)
    page.locator("#v-table tr.row").first.click()
    assert page.evaluate("window.pwned === undefined") and page.locator("img").count() == 0
    assert seen["requests"] == [target.as_uri()] and seen["console"] == []
    assert name in page.locator("#v-table td.model").first.text_content()
    assert page.title() == f"keyaudit audit: {name}"
