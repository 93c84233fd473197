"""The review page in a real browser (issue 25, items 2 and 3): headless Chromium (Debian's
package, driven by Playwright pointed at the system browser; nothing is downloaded) opens the page
``review --html`` wrote from disk, shows the queue, labels rows by keyboard and mouse, keeps the
labels across a reload, downloads the adjudications, and ``check --adjudications`` reads them.
Answer text is shown as text: a response holding ``<script>`` shows those characters."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

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


def test_label_reload_download_and_check_reads_it(tmp_path: Path, browser, run_cli) -> None:
    page_file = tmp_path / "review.html"
    result = run_cli("review", "physical_stability", "--html", str(page_file), "--sample", "5")
    assert result.code == 0, result.err
    page = browser.new_page()
    page.goto(page_file.as_uri())
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
    page.reload()  # labels stay in the browser's storage
    assert page.locator("#progress").text_content() == f"3 of {total} labelled"
    assert rows.nth(2).locator("input").input_value() == "checked by hand"
    page.keyboard.press("j")  # k/j move the current row
    assert page.locator("section.row.current").get_attribute("data-index") == "1"
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
    match = re.search(r"3 verdicts labelled by a person, (\d+) overturned", checked.out)
    assert match and match.group(1) == "2", checked.out[-2000:]


def test_the_audit_page_sorts_filters_and_opens_an_item(tmp_path: Path, browser, run_cli) -> None:
    """check --html (issue 25, item 1): from disk, the summary and leaderboard show, a table sorts,
    the filters narrow the items, a flip opens to its answer line, claims and reason; the same
    inputs give the same bytes."""
    first, second = tmp_path / "audit.html", tmp_path / "again.html"
    for target in (first, second):
        result = run_cli("check", "physical_stability", "--resamples", "200", "--html", str(target))
        assert result.code == 0, result.err
    assert first.read_bytes() == second.read_bytes()
    page = browser.new_page()
    page.goto(first.as_uri())
    assert "physical_stability L5" in page.locator("#summary").text_content()
    assert page.locator("#leaderboard tr").count() == 11  # a header and ten models
    assert page.locator("#forest svg circle").count() == 10
    # sort the per-model table by the rule's accuracy, ascending then descending
    rule_column = page.locator("#models th", has_text="Rule")
    rule_column.click()
    ascending = page.locator("#models tr td:nth-child(5)").all_text_contents()
    rule_column.click()
    descending = page.locator("#models tr td:nth-child(5)").all_text_contents()
    as_number = lambda cells: [float(c.rstrip("%")) for c in cells]  # noqa: E731
    assert as_number(ascending) == sorted(as_number(ascending))
    assert as_number(descending) == sorted(as_number(descending), reverse=True)
    # filters
    total = page.locator("details.item").count()
    page.locator("#f-model").select_option("Synth Birch 7B")
    birch = page.locator("details.item").count()
    assert 0 < birch < total
    assert all("Synth Birch 7B" in s for s in page.locator("details.item summary").all_text_contents())
    page.locator("#f-model").select_option("all")
    page.locator("#f-uncertain").check()
    assert 0 < page.locator("details.item").count() < total
    page.locator("#f-uncertain").uncheck()
    # open a flip: its answer line (as text), what was extracted, the claims, the reason
    item = page.locator("details.item").first
    item.locator("summary").click()
    assert item.locator(".answer").is_visible()
    text = item.text_content()
    assert "extracted:" in text and "claims (" in text and "verdict:" in text
    assert "status" in item.locator("li").first.text_content()
