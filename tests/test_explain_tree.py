"""``test-rule --explain TEXT --key KEY --tree`` (issue 22, item 4): the answer grammar's parse tree."""

from __future__ import annotations

from keyaudit.engine.rule_language.reading.ast import Leaf, Node, format_tree


def test_the_tree_shows_which_terminal_each_word_became(run_cli) -> None:
    result = run_cli(
        "test-rule", "gauge_reading", "--explain", "No; new value 4½ psi", "--key", "no; new value 4.5",
        "--tree",
    )
    assert result.code == 0, result.err
    tree = result.out.split("tree:\n", 1)[1].splitlines()
    assert tree[0] == "  start"
    assert "      NO 'No'" in tree  # verdict > NO, two levels under start
    assert any(line.strip() == "DECIMAL '4½'" for line in tree)
    assert any(line.strip() == "VALUE_CUE 'new value'" for line in tree)


def test_tree_without_explain_is_a_usage_error(run_cli) -> None:
    result = run_cli("test-rule", "gauge_reading", "--tree")
    assert result.code == 2 and "--tree goes with --explain" in result.err


def test_a_long_tree_is_cut_and_says_so() -> None:
    root = Node("start", [Leaf("WORD", str(i), i, i + 1) for i in range(10)], "0123456789", 0, 10)
    lines = format_tree(root, max_lines=4)
    assert lines == ["start", "  WORD '0'", "  WORD '1'", "  WORD '2'", "… (cut at 4 lines)"]


def test_a_deep_tree_does_not_exhaust_the_stack() -> None:
    node: Node | Leaf = Leaf("X", "x", 0, 1)
    for _ in range(5000):
        node = Node("n", [node], "x", 0, 1)
    lines = format_tree(node, max_lines=10_000)
    assert len(lines) == 5001 and lines[-1].strip() == "X 'x'"
