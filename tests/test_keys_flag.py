"""``keyaudit keys`` / ``keyaudit flag`` and their engine: key structure (seed §1), flags (seed §5).

Figures are checked against the seed and, for §5, against an independent recomputation that
reads the example's files with gzip + json only (not keyaudit's loader).
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keyaudit.cli.app import app, main
from keyaudit.engine.errors import UsageError
from keyaudit.engine.flag import flag_cells, is_flagged
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import bundled_rule_names, example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.authoring.keystructure import (
    InducedTemplate,
    benchmark_structure,
    cell_structure,
    induce_templates,
)
from keyaudit.engine.rule_language.rules.rule import load_rule

EXAMPLE = example_benchmark_dir()
RUNNER = CliRunner()
WIDTH = {"COLUMNS": "200"}

STABLE = (
    "stable; after removing block {REMOVED}, every cumulative center of mass remains within its "
    "supporting base"
)
UNSTABLE = (
    "unstable; after removing block {REMOVED}, the cumulative center of mass at the joint between "
    "block {UPPER} and block {LOWER} lies outside its supporting base"
)

#: Seed §1's ten verbatim examples, by id.
SEED_EXAMPLE_IDS = [
    f"physical_stability_{n}_q5"
    for n in ("0001", "0002", "0004", "0005", "0007", "0009", "0012", "0016", "0019", "3000")
]

#: Seed §5 (flagged, total), plus physical_stability L4/L5, which the seed's table left out.
FLAGGED = {
    ("compass_bearing", 5): (3000, 3000),
    ("fbd", 5): (2500, 3000),
    ("gauge_reading", 4): (374, 3000),
    ("gauge_reading", 5): (3000, 3000),
    ("gear_train", 5): (3000, 3000),
    ("laser_mirror", 5): (3000, 3000),
    ("optical_illusion", 5): (3000, 3000),
    ("projectile_motion", 5): (300, 1000),
    ("surface_topology", 4): (3000, 3000),
    ("physical_stability", 5): (3000, 3000),
    ("physical_stability", 4): (1500, 3000),
}


@pytest.fixture(scope="module")
def bench():
    return load_benchmark(EXAMPLE)


@pytest.fixture(scope="module")
def rule():
    return load_rule(resolve_rule_path("physical_stability"))


@pytest.fixture(autouse=True)
def _load_example_once(bench, monkeypatch):
    """The commands load the example from disk each time; give them the module's copy."""
    real = load_benchmark

    def load(root, *, with_responses=True, responses=None, epochs="first", **options):
        if Path(root) == EXAMPLE and responses is None and epochs == "first":
            return bench
        return real(root, with_responses=with_responses, responses=responses, epochs=epochs, **options)

    monkeypatch.setattr("keyaudit.cli.common.load_benchmark", load)


def invoke(*args: str):
    result = RUNNER.invoke(app, list(args), env=WIDTH)
    assert result.exit_code == 0, result.output
    return result


# ---- independent recomputation (stdlib only) ------------------------------------------------
_ID = re.compile(r"^(?P<domain>.+)_\d+_q(?P<level>\d+)$")


def _cell(item_id: str) -> tuple[str, int]:
    match = _ID.match(item_id)
    assert match is not None
    return match["domain"], int(match["level"])


def _records(folder: Path):
    for path in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            yield from (json.loads(line) for line in handle if line.strip())


@pytest.fixture(scope="module")
def recomputed():
    """(flagged, total, evaluated, correct) per cell, from the raw files."""
    total: Counter = Counter()
    flagged: Counter = Counter()
    flagged_ids = set()
    for record in _records(EXAMPLE / "keys"):
        text, cell = record["answer"], _cell(record["id"])
        total[cell] += 1
        stripped = text.strip()
        words = re.findall(r"[A-Za-z0-9]+", text)
        if not (stripped[:1] in "{[" and stripped) and (";" in text or len(words) >= 6):
            flagged[cell] += 1
            flagged_ids.add(record["id"])
    evaluated: Counter = Counter()
    correct: Counter = Counter()
    for record in _records(EXAMPLE / "responses"):
        if record["id"] in flagged_ids:
            cell = _cell(record["id"])
            evaluated[cell] += 1
            correct[cell] += record["correct"] is True
    return {c: (flagged[c], total[c], evaluated[c], correct[c]) for c in flagged}


# ---- seed §1: physical_stability L5 ---------------------------------------------------------
def test_seed_section1_structure_with_rule(bench, rule):
    s = cell_structure(bench, "physical_stability", 5, rule)
    assert (s.n_keys, s.distinct, s.ruled, s.unparsed) == (3000, 9, True, ())
    assert [(t.template, t.count, t.status_counts) for t in s.templates] == [
        (STABLE, 1500, {"stable": 1500}),
        (UNSTABLE, 1500, {"unstable": 1500}),
    ]
    assert s.templates[1].slots == ("REMOVED", "UPPER", "LOWER")
    # the failing joints are ordered upper/lower pairs of adjacent blocks
    assert s.templates[1].target_counts["joint"] == {
        '["B", "A"]': 997,
        '["D", "C"]': 286,
        '["C", "B"]': 217,
    }
    assert sum(s.templates[0].slot_values["REMOVED"].values()) == 1500
    assert [e.id for e in s.examples] == SEED_EXAMPLE_IDS
    assert s.examples[0].key == (
        "unstable; after removing block C, the cumulative center of mass at the joint between "
        "block B and block A lies outside its supporting base"
    )


def test_seed_section1_structure_induced(bench):
    s = cell_structure(bench, "physical_stability", 5)
    assert (s.ruled, s.unparsed, s.distinct) == (False, None, 9)
    assert [(t.count, t.slots) for t in s.templates] == [
        (1500, ("LETTER",)),
        (1500, ("LETTER_1", "LETTER_2", "LETTER_3")),
    ]
    assert s.templates[0].template.startswith("stable; after removing block {LETTER},")


def test_keys_cli_cell_json(rule):
    result = invoke("keys", "--domain", "physical_stability", "--level", "5", "--json", "-")
    [cell] = json.loads(result.stdout)  # stdout holds only the JSON
    assert (cell["domain"], cell["level"], cell["n_keys"], cell["distinct"]) == (
        "physical_stability",
        5,
        3000,
        9,
    )
    assert [(t["template"], t["count"], t["share"]) for t in cell["templates"]] == [
        (STABLE, 1500, 0.5),
        (UNSTABLE, 1500, 0.5),
    ]
    assert cell["templates"][1]["slots"] == ["REMOVED", "UPPER", "LOWER"]
    assert cell["rule"] == "physical_stability" and cell["unparsed"] == []
    assert [e["id"] for e in cell["examples"]] == SEED_EXAMPLE_IDS


def test_keys_cli_every_cell_json_and_table():
    cells = json.loads(invoke("keys", "--json", "-").stdout)
    assert len(cells) == 55
    ruled = {(c["domain"], c["level"]): c["rule"] for c in cells if c["ruled"]}
    bundled = [load_rule(resolve_rule_path(name)) for name in bundled_rule_names()]
    # every bundled rule is used automatically, for exactly the cells it covers
    assert ruled == {(c.domain, c.level): r.name for r in bundled for c in r.cells}
    assert ruled[("physical_stability", 5)] == "physical_stability"
    assert all(c["unparsed"] is None for c in cells if not c["ruled"])
    assert all(sum(t["count"] for t in c["templates"]) == c["n_keys"] for c in cells)
    table = invoke("keys", "--level", "5").stdout
    assert "physical_stability" in table and "angle_estimation" in table
    assert "L4" not in table


def test_keys_cli_cell_table():
    out = invoke("keys", "--domain", "physical_stability", "--level", "5").stdout
    assert "9 distinct strings, 2 templates" in out
    assert "physical_stability_3000_q5" in out
    assert "Every key matches a template" in out


# ---- induction ------------------------------------------------------------------------------
def test_induce_templates_counts_order_and_numbering():
    got = induce_templates(
        [
            "x 1 y 2.5 A",
            "x -3 y 4 B",
            "x 1 y 7 A",
            "plain",
            "A and B",
            "T1 at 3-5",  # digits glued to a letter stay; a dash between numbers is no sign
        ]
    )
    assert got == [
        InducedTemplate(
            "x {NUMBER_1} y {NUMBER_2} {LETTER}",
            3,
            ("NUMBER_1", "NUMBER_2", "LETTER"),
            "x 1 y 2.5 A",
            {
                "NUMBER_1": {"1": 2, "-3": 1},
                "NUMBER_2": {"2.5": 1, "4": 1, "7": 1},
                "LETTER": {"A": 2, "B": 1},
            },
        ),
        InducedTemplate(
            "T1 at {NUMBER_1}-{NUMBER_2}",
            1,
            ("NUMBER_1", "NUMBER_2"),
            "T1 at 3-5",
            {
                "NUMBER_1": {"3": 1},
                "NUMBER_2": {"5": 1},
            },
        ),
        InducedTemplate("plain", 1, (), "plain", {}),
        InducedTemplate(
            "{LETTER_1} and {LETTER_2}",
            1,
            ("LETTER_1", "LETTER_2"),
            "A and B",
            {"LETTER_1": {"A": 1}, "LETTER_2": {"B": 1}},
        ),
    ]


@pytest.mark.parametrize(
    ("text", "template"),
    [
        ("Angle 2", "Angle {NUMBER}"),
        ("I think", "{LETTER} think"),  # induction cannot tell the pronoun from a block letter
        ("-0.5 m", "{NUMBER} m"),
        ("08:03", "{NUMBER_1}:{NUMBER_2}"),
        ("block C's", "block {LETTER}'s"),
    ],
)
def test_induced_shapes(text, template):
    assert induce_templates([text])[0].template == template


def test_induce_templates_empty():
    assert induce_templates([]) == []


def test_gear_train_and_gauge_reading_l5_induced(bench):
    gear = cell_structure(bench, "gear_train", 5)
    assert [(t.count, t.slots) for t in gear.templates] == [(1000, ())] * 3
    assert {t.template for t in gear.templates} == {
        "decrease; direction unchanged",
        "increase; direction unchanged",
        "stay the same; direction unchanged",
    }
    gauge = cell_structure(bench, "gauge_reading", 5)
    assert {t.template for t in gauge.templates} == {
        "no; new value {NUMBER}",
        "yes; new value {NUMBER}",
    }
    assert sum(t.count for t in gauge.templates) == 3000
    assert all(t.slots == ("NUMBER",) for t in gauge.templates)
    assert sum(len(t.slot_values["NUMBER"]) for t in gauge.templates) == gauge.distinct == 69


# ---- seed §5 --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("key", "flagged"),
    [
        ("yes", False),
        ("0; orientable", True),
        ("one two three four five", False),
        ("one two three four five six", True),
        ("60.0 map units", False),  # 60, 0, map, units: four tokens
        ("tips between block D and block C", True),
        ("{'a': 1; 'b': 2, 'c': 3, 'd': 4}", False),
        ("  [1, 2, 3, 4, 5, 6]", False),
        ("no danger zone marked", False),
    ],
)
def test_is_flagged(key, flagged):
    assert is_flagged(key) is flagged


def test_flag_cells_seed_counts(bench, recomputed):
    rows = flag_cells(bench)
    assert [(r.domain, r.level) for r in rows] == sorted(FLAGGED)
    assert {(r.domain, r.level): (r.flagged, r.total) for r in rows} == FLAGGED
    assert {
        (r.domain, r.level): (r.flagged, r.total, r.evaluated, r.strict_correct) for r in rows
    } == recomputed
    for r in rows:
        assert r.strict_accuracy == (r.strict_correct / r.evaluated if r.evaluated else None)
        assert r.candidate == (r.evaluated > 0 and r.strict_correct == 0)


def test_flag_cli_json(recomputed):
    rows = json.loads(invoke("flag", "--json", "-").stdout)
    got = {
        (r["domain"], r["level"]): (r["flagged"], r["total"], r["evaluated"], r["strict_correct"])
        for r in rows
    }
    assert got == recomputed
    for r in rows:
        assert r["strict_accuracy"] is None or 0 <= r["strict_accuracy"] <= 1
        assert r["candidate"] == (r["evaluated"] > 0 and r["strict_correct"] == 0)
    assert any(r["candidate"] for r in rows)
    ps5 = next(r for r in rows if (r["domain"], r["level"]) == ("physical_stability", 5))
    assert (ps5["strict_correct"], ps5["candidate"]) == (0, True)


def test_flag_cli_table():
    out = invoke("flag").stdout
    assert "Flagged corpus items" in out and "candidates for their own rule" in out
    assert "projectile_motion" in out and "1,000" in out


# ---- small benchmarks: unparsed keys and bad input ------------------------------------------
def _tiny_bench(tmp_path: Path, answers: dict[str, str]) -> Path:
    (tmp_path / "keys").mkdir()
    lines = [json.dumps({"id": i, "answer": a}) for i, a in answers.items()]
    (tmp_path / "keys" / "k.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_unparsed_keys_listed(tmp_path, rule):
    good = "stable; after removing block E, every cumulative center of mass remains within its supporting base"
    root = _tiny_bench(
        tmp_path,
        {
            "physical_stability_0001_q5": good,
            "physical_stability_0002_q5": "stable; no block removed",
        },
    )
    s = benchmark_structure(load_benchmark(root), [rule])[0]
    assert [(u.id, u.key) for u in s.unparsed] == [
        ("physical_stability_0002_q5", "stable; no block removed")
    ]
    assert s.unparsed[0].error
    assert [(t.template, t.count) for t in s.templates] == [(STABLE, 1)]
    [cell] = json.loads(invoke("keys", "--bench", str(root), "--json", "-").stdout)
    assert [u["id"] for u in cell["unparsed"]] == ["physical_stability_0002_q5"]
    assert set(cell["unparsed"][0]) == {"id", "key", "error"}


def test_rule_must_cover_cell(tmp_path, rule):
    bench = load_benchmark(_tiny_bench(tmp_path, {"fbd_0001_q5": "yes"}))
    with pytest.raises(UsageError, match="covers physical_stability L5"):
        cell_structure(bench, "fbd", 5, rule)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--domain", "nope"], "no keys for domain 'nope'; domains: fbd"),
        (["--domain", "fbd", "--level", "3"], "no keys at level 3 in domain 'fbd'; levels: L5"),
        (["--rule", "physical_stability"], "none of the selected cells"),
    ],
)
def test_keys_bad_input_one_line_exit_2(tmp_path, monkeypatch, capsys, args, message):
    root = _tiny_bench(tmp_path, {"fbd_0001_q5": "yes"})
    monkeypatch.setattr(sys, "argv", ["keyaudit", "keys", "--bench", str(root), *args])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("keyaudit: error: ")
    assert message in err
