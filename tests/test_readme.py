"""README is the user's manual: its commands and its example report must stay true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: The whole manual: the README and the reference pages it links in docs/ (not the rule pages).
MANUAL = README + "".join(
    page.read_text(encoding="utf-8") for page in sorted((ROOT / "docs").glob("*.md"))
)


def test_quick_start_has_exactly_the_two_commands_and_ci_runs_both_in_order() -> None:
    quick = README[README.index("## Quick start") : README.index("## What `keyaudit check` shows")]
    commands = re.findall(r"```bash\n(.*?)\n```", quick, flags=re.S)
    assert len(commands) == 2
    assert commands[0].endswith("keyaudit check physical_stability")
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[0] in lines and commands[1] in lines
    # in the README's order, in one clone, with nothing between them but comments
    first, second = lines.index(commands[0]), lines.index(commands[1])
    assert second == first + 1


@pytest.mark.skipif(not (ROOT / "docs").exists(), reason="not a checkout")
def test_example_report_in_readme_and_docs_is_what_check_writes(tmp_path: Path, run_cli) -> None:
    target = tmp_path / "report.md"
    result = run_cli("check", "physical_stability", "--markdown", str(target))
    assert result.code == 0, result.err
    written = target.read_text(encoding="utf-8")
    hint = "regenerate: keyaudit check physical_stability --markdown docs/example-report.md, then paste its opening into README"
    assert (ROOT / "docs" / "example-report.md").read_text(encoding="utf-8") == written, hint
    start = README.index("<!-- example-report:start -->\n```markdown\n") + 42
    embedded = README[start : README.index("\n```\n<!-- example-report:end -->")]
    # The README shows only the report's opening (its sections stay out of the manual's outline).
    assert embedded == written[: written.index("\n## ")].rstrip(), hint
    assert "\n## " not in embedded


def test_every_function_of_the_rule_language_is_documented() -> None:
    from keyaudit.engine.rule_language.expressions.expression import FUNCTIONS

    for name in FUNCTIONS:
        assert f"- `{name}`:" in MANUAL, name


def test_every_bundled_rule_and_its_reasons_are_documented() -> None:
    from keyaudit.engine.load.locate import bundled_rule_names, resolve_rule_path
    from keyaudit.engine.rule_language.rules.rule import load_rule

    for name in bundled_rule_names():
        rule = load_rule(resolve_rule_path(name))
        # a rule of issue 13 is documented in docs/rules/<name>.md (the README links it)
        page = ROOT / "docs" / "rules" / f"{name}.md"
        text = MANUAL + (page.read_text(encoding="utf-8") if page.exists() else "")
        assert f"| {name} L" in text
        for reason in rule.reasons:
            assert reason in text, (name, reason)
