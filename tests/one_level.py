"""A made-up one-level benchmark, laid out as a new user would lay out their own (issue 34).

``circuit_bulbs``: 600 items, one per circuit drawing, all at level 1 ("When switch S is opened,
which bulb goes out?"), each keyed by one sentence of one template, ``bulb {LETTER} goes out``.
Three fictional models answered every item; their 1,800 responses are in **one** JSONL file
(a ``model`` field on every line, models interleaved: the most common layout). No model ever
restates the key exactly, so strict scoring gives all three 0%: a three-way tie before any rule,
and a strict order after one.

Everything is drawn from one seeded generator: the same seed writes the same bytes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

DOMAIN = "circuit_bulbs"
LEVEL = 1
N_ITEMS = 600
LETTERS = "ABCD"
#: Display names, and how often each model names the right bulb.
MODELS = {"Volt 7B": 0.62, "Ohm Large": 0.84, "Amp Mini": 0.45}
QUESTION = (
    "The drawing shows bulbs A, B, C and D and a switch S. When S is opened, which bulb goes "
    "out? Answer with the bulb's letter."
)
#: How the models word the answer line ({} is the bulb's letter), most often first. None is the
#: key as strict scoring compares it (case, a full stop, a word more or less); a few hedge or
#: offer two bulbs.
PHRASINGS = (
    ("Bulb {} goes out.", 6),
    ("{} goes out", 4),
    ("Bulb {} will go out.", 3),
    ("{}", 3),
    ("Bulb {}.", 2),
    ("bulb {} goes out; the others stay lit", 2),
    ("The bulb that goes out is {}.", 2),
    ("**Bulb {}** goes out.", 1),
    ("{} (it is in series with S)", 1),
    ("Probably bulb {}.", 1),
)
REASONING = (
    "Opening S breaks the only path through one branch.",
    "Trace the current from the battery: S sits in series with one bulb only.",
    "With S open that branch carries no current; the parallel branches keep theirs.",
)


_WORDINGS = [w for w, _ in PHRASINGS]
_WEIGHTS = [n for _, n in PHRASINGS]


def key_of(item: int) -> str:
    return f"bulb {LETTERS[item % len(LETTERS)]} goes out"


def item_id(item: int) -> str:
    return f"{DOMAIN}_{item + 1:04d}_q{LEVEL}"


def write_one_level_benchmark(root: Path, seed: int = 34) -> Path:
    """Write the benchmark under ``root`` (``benchmark.toml``, ``keys/``, one
    ``responses/all_models.jsonl``); returns ``root``."""
    rng = random.Random(seed)
    (root / "keys").mkdir(parents=True, exist_ok=True)
    (root / "responses").mkdir(exist_ok=True)
    (root / "benchmark.toml").write_text(
        'name = "Circuit bulbs (made up, one level)"\n'
        f"roster = {json.dumps(list(MODELS))}\n",
        encoding="utf-8",
    )
    keys = [
        json.dumps({"id": item_id(i), "answer": key_of(i), "question": QUESTION})
        for i in range(N_ITEMS)
    ]
    (root / "keys" / f"{DOMAIN}.jsonl").write_text("\n".join(keys) + "\n", encoding="utf-8")
    lines = []
    for i in range(N_ITEMS):
        right = LETTERS[i % len(LETTERS)]
        for model, skill in MODELS.items():
            letter = right if rng.random() < skill else rng.choice(LETTERS.replace(right, ""))
            answer = rng.choices(_WORDINGS, _WEIGHTS)[0].format(letter)
            if rng.random() < 0.02:  # two bulbs offered
                other = rng.choice(LETTERS.replace(letter, ""))
                answer = f"Bulb {letter} or bulb {other} goes out."
            text = f"{rng.choice(REASONING)}\n\nANSWER: {answer}"
            lines.append(
                json.dumps({"id": item_id(i), "model": model, "response": text, "correct": False})
            )
    (root / "responses" / "all_models.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root
