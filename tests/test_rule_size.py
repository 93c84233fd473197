"""Rules as declarations (issue 22, item 3): bench/rule_size.py measures the bundled rules'
expressions; no expression line may be over 120 characters, and the measure counts what the
engine compiles (a long expression line in any expression field is found, one elsewhere is not)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("rule_size", ROOT / "bench" / "rule_size.py")
rule_size = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(rule_size)


def test_no_bundled_expression_line_is_over_120_characters() -> None:
    for path in sorted((ROOT / "rules").glob("*.toml")):
        _, chars, long, longest = rule_size.measure(path.read_text(encoding="utf-8"))
        assert chars > 0 and long == 0, (path.name, longest)


def test_the_measure_counts_expression_fields_only() -> None:
    wide = "x" * 130
    text = f'''
[rule]
description = "{wide}"

[key]
status = "key.status"

[[let]]
name = "a"
expr = """len(answer)
  + {wide}"""

[[example]]
key = "{wide}"

[[component]]
name = "c"
kind = "number"
values = "[1,   2]"
'''
    count, chars, long, longest = rule_size.measure(text)
    assert count == 3
    assert chars == len("key.status") + len(f"len(answer) + {wide}") + len("[1, 2]")
    assert (long, longest) == (1, len(f"  + {wide}" + '"""'))
