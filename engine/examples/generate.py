"""Regenerate the embedded example benchmark: real GRIP-Benchmark-34 keys, synthetic responses.

    python -m keyaudit.engine.examples.generate                  # responses into the package
    python -m keyaudit.engine.examples.generate --seed 34 --out DIR
    python -m keyaudit.engine.examples.generate --import-keys DIR   # one-off: copy the keys in
    python -m keyaudit.engine.examples.generate --summary           # intended accuracy table

Everything is a function of the seed: the 50 images sampled per domain, every model's knowledge
draws and every phrasing. Each item has its own ``random.Random`` seeded from
``seed|model|id``, so adding a model or a domain never changes another's responses. Files are
gzip with ``mtime=0`` and no file name, sorted by id, so the bytes are reproducible.

The responses are synthetic. The keys are the real ones (see ``grip34/README.md``); ``correct``
is what the benchmark's strict scorer (:func:`keyaudit.engine.load.strict.strict_correct`) says.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import io
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from ..load.strict import strict_correct
from . import phrasing
from .answers import WRITERS
from .models import DOMAINS, PROFILES, ROSTER, Profile, accuracy

PACKAGE_DIR = Path(__file__).resolve().parent / "grip34"
DEFAULT_SEED = 34
IMAGES_PER_DOMAIN = 50
LEVELS = (1, 2, 3, 4, 5)
ID_PATTERN = r"^(?P<domain>.+)_(?P<image>\d+)_q(?P<level>\d+)$"
_ID = re.compile(ID_PATTERN)

#: physical_stability sample constraints, as in the audited run (seed §2 and §2 examples).
PS_REQUIRED = ("0015", "0136")
PS_STABLE_L5 = 26
PS_TOP_KEY_COUNT = 8

NAME = "GRIP-Benchmark-34 (keyaudit example)"
SOURCE = (
    "bilaljawaid980/Geomatric-Reasoning-Benchmark-Dataset @ "
    "1c28b5ddd30715ab896278484a612f48e9ee41eb (MIT); keys regenerated with its own generators"
)
DESCRIPTION = (
    "Real answer keys of 11 GRIP-Benchmark-34 domains (155,000 items) with synthetic stored "
    "responses of 10 fictional models on the same 50 images per domain at levels q1-q5. "
    "Regenerate with: python -m keyaudit.engine.examples.generate"
)


# ------------------------------------------------------------------------------- files


def write_jsonl_gz(path: Path, rows: Iterable[dict]) -> None:
    """Write one JSON object per line, gzip with mtime=0 and no embedded name (stable bytes)."""
    raw = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())


def read_jsonl_gz(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def import_keys(source: Path, out: Path) -> None:
    """Copy ``source/<domain>.jsonl`` into ``out/keys/<domain>.jsonl.gz`` line for line."""
    for domain in DOMAINS:
        lines = (source / f"{domain}.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        write_jsonl_gz(out / "keys" / f"{domain}.jsonl.gz", rows)


def load_keys(keys_dir: Path) -> dict[str, dict[str, str]]:
    """domain -> {id: answer}."""
    out = {}
    for domain in DOMAINS:
        rows = read_jsonl_gz(keys_dir / f"{domain}.jsonl.gz")
        out[domain] = {r["id"]: r["answer"] for r in rows}
    return out


def benchmark_toml() -> str:
    roster = "".join(f'    "{name}",\n' for name in ROSTER)
    return (
        f'name = "{NAME}"\n'
        f"id_pattern = '{ID_PATTERN}'\n"
        f"roster = [\n{roster}]\n"
        f'description = "{DESCRIPTION}"\n'
        f'source = "{SOURCE}"\n'
    )


# ---------------------------------------------------------------------------- sampling


def _images(keys: dict[str, str]) -> list[str]:
    return sorted({_ID.match(i)["image"] for i in keys})


def sample_images(domain: str, keys: dict[str, str], seed: int) -> list[str]:
    """50 image numbers of ``domain``, drawn from the seed.

    physical_stability is redrawn until the sample holds images 0015 and 0136 (the seed's quoted
    items), 26 stable / 24 unstable L5 keys and a most frequent L5 key seen exactly 8 times.
    """
    rng = random.Random(f"{seed}|sample|{domain}")
    images = _images(keys)
    if domain != "physical_stability":
        return sorted(rng.sample(images, IMAGES_PER_DOMAIN))
    rest = [i for i in images if i not in PS_REQUIRED]
    for _ in range(100_000):
        chosen = sorted(rng.sample(rest, IMAGES_PER_DOMAIN - len(PS_REQUIRED)) + list(PS_REQUIRED))
        l5 = [keys[f"{domain}_{i}_q5"] for i in chosen]
        stable = sum(k.startswith("stable") for k in l5)
        if stable == PS_STABLE_L5 and max(Counter(l5).values()) == PS_TOP_KEY_COUNT:
            return chosen
    raise RuntimeError("no physical_stability sample met the constraints")  # pragma: no cover


# ---------------------------------------------------------------- short-valued answers

_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+\.\d+$")
_TIME = re.compile(r"^(\d\d):(\d\d)$")


def near_miss(rng: random.Random, value: str) -> str | None:
    """A plausible wrong number in the key's own format, or None if the key is not a number."""
    if _TIME.match(value):
        h, m = map(int, value.split(":"))
        total = (h * 60 + m + rng.choice((-1, 1)) * rng.choice((1, 5, 10, 60))) % 720
        h2, m2 = divmod(total, 60)
        return f"{h2 or 12:02d}:{m2:02d}"
    if _INT.match(value):
        v = int(value)
        delta = rng.choice((1, 1, 2, 3, 5, 10))
        w = v - delta if v - delta >= 0 or v < 0 else v + delta  # counts never go negative
        if rng.random() < 0.5 and (v >= 0) == (v + delta >= 0):
            w = v + delta
        return f"{w:0{len(value)}d}" if value.startswith("0") and len(value) > 1 else str(w)
    if _FLOAT.match(value):
        decimals = len(value.split(".")[1])
        v = float(value)
        w = v * rng.uniform(0.85, 1.15) + rng.choice((-1, 1)) * 10**-decimals
        if v >= 0 > w:
            w = -w
        return f"{w:.{decimals}f}"
    return None


def _perturb_numbers(rng: random.Random, text: str) -> str:
    """Shift one number in a sentence or dict key ("... 105.5 map units ..." -> 98.2)."""
    numbers = list(re.finditer(r"(?<![\d.])-?\d+(?:\.\d+)?(?![\d.=])", text))
    if not numbers:
        return text
    m = rng.choice(numbers)
    new = near_miss(rng, m.group()) or m.group()
    return text[: m.start()] + new + text[m.end() :]


_OPPOSITE = {"opposite": "same"}


def wrong_value(rng: random.Random, key: str, pool: list[str]) -> str:
    """A plausible wrong answer: another key of the same cell, or a near-miss number."""
    if rng.random() < 0.6:
        nm = near_miss(rng, key)
        if nm is not None and nm != key:
            return nm
        if key.startswith("{") or rng.random() < 0.3:
            moved = _perturb_numbers(rng, key)
            if moved != key:
                return moved
    for _ in range(20):
        other = rng.choice(pool)
        if other != key:
            return other
    return _OPPOSITE.get(key, "cannot tell")  # one-valued cells such as gear_train L2


def _dict_forms(rng: random.Random, value: str) -> str:
    try:
        data = ast.literal_eval(value)
    except (ValueError, SyntaxError):  # pragma: no cover - keys are all valid reprs
        return value
    form = rng.random()
    if form < 0.4:
        return value
    if form < 0.75:
        return json.dumps(data)
    return ", ".join(f"{k} = {v}" for k, v in data.items())


def paraphrase(rng: random.Random, domain: str, level: int, value: str) -> str:
    """Say a (possibly wrong) short or semi-structured value in the model's own words.

    The sentence-valued cells with a bundled rule have their own writers
    (:mod:`.answers`); this covers the short and semi-structured keys of the other cells."""
    rng.choice(phrasing.DASH)  # a draw the stored files depend on: every later draw follows it
    if value.startswith(("{", "[")):
        return _dict_forms(rng, value)
    if domain == "angle_estimation" and value == "190,no":
        return rng.choice(("190, no", "190°, no"))
    if domain == "compass_bearing" and level == 4:
        n, _, turn = value.partition(" degrees ")
        return f"{n}° {turn}"
    return value


def decorate(rng: random.Random, profile: Profile, text: str) -> str:
    """Strict-breaking cosmetics on short answers: capital, bold, trailing period, hedge."""
    if len(text) <= 24 and rng.random() < profile.p_hedge:
        text = f"{rng.choice(('probably', 'likely', '~', 'about'))} {text}"
    if rng.random() < profile.p_capital and text[:1].isascii() and text[:1].isalpha():
        text = text[0].upper() + text[1:]
    if rng.random() < profile.p_bold_value:
        text = f"**{text}**"
    if rng.random() < profile.p_period and not text.endswith("."):
        text += "."
    return text


# ----------------------------------------------------------------------- reasoning text

REASONING = {
    "angle_estimation": (
        "The two rays meet at the marked vertex.",
        "Comparing the opening with a right angle as reference.",
        "I estimate each angle from the arc drawn at the vertex.",
    ),
    "clock_reading": (
        "The short hand sits between two hour marks.",
        "The long hand points close to a minute tick.",
        "Reading the hour hand first, then the minute hand.",
    ),
    "compass_bearing": (
        "North is indicated by the arrow at the top of the map.",
        "Measuring the bearing clockwise from north.",
        "Projecting the path from the start point along the given bearing.",
    ),
    "fbd": (
        "Listing the forces drawn on the body: weight, normal, tension, friction.",
        "Summing the vertical components first.",
        "Checking whether the drawn forces balance.",
    ),
    "gauge_reading": (
        "The scale runs from the minimum mark to the maximum mark.",
        "The needle lies between two labelled ticks.",
        "Each minor tick is a fixed fraction of the range.",
    ),
    "gear_train": (
        "Adjacent meshing gears turn in opposite directions.",
        "The speed ratio depends on the tooth counts of the meshing pair.",
        "Following the train from the driver to gear D.",
    ),
    "laser_mirror": (
        "Tracing the beam from the emitter through each mirror.",
        "Each mirror reflects the beam by 90 degrees.",
        "Counting the reflections along the path.",
    ),
    "optical_illusion": (
        "The surrounding context makes one element look larger.",
        "Measuring both elements directly, ignoring the context.",
        "Comparing the pixel extents of A and B.",
    ),
    "physical_stability": (
        "Blocks are labelled A (bottom) to E (top).",
        "For each joint I compare the cumulative centre of mass above it with the supporting "
        "block's extent.",
        "Estimating each block's horizontal position from the image.",
    ),
    "projectile_motion": (
        "Using g = 9.8 m/s² and the launch speed and angle shown.",
        "Splitting the velocity into horizontal and vertical components.",
        "Time to reach the wall is distance / horizontal speed.",
    ),
    "surface_topology": (
        "Counting vertices, edges and faces of the polygonal surface.",
        "Checking the edge identifications for a twist.",
        "Euler characteristic χ = V − E + F.",
    ),
}
GENERIC_REASONING = (
    "Let me examine the figure carefully.",
    "Step 1: identify the relevant elements.",
    "Double-checking against the labels in the image.",
    "Working through it step by step.",
)
_ANSWER_WORD = re.compile(r"\banswer\s*:", re.IGNORECASE)


def build_response(
    rng: random.Random, profile: Profile, domain: str, answer: str, first_guess: str | None
) -> tuple[str, bool]:
    """Reasoning lines, an optional abandoned first answer line, then the final answer line.

    Returns the text and whether the final answer got its labelled line (≈1% do not).
    """
    lo, hi = profile.reasoning
    pool = REASONING[domain] + GENERIC_REASONING
    lines = rng.sample(pool, min(len(pool), rng.randint(lo, hi)))
    label = phrasing.pick(rng, profile.labels)
    if first_guess is not None:
        lines += [f"{label}{first_guess}", "Wait, let me re-check that before committing."]
    labelled = rng.random() >= profile.p_no_answer
    if labelled:
        lines.append(f"{label}{answer}")
    else:
        tail = rng.choice((f"So the answer is {answer}", f"My final answer is {answer}"))
        lines.append(_ANSWER_WORD.sub("answer is", tail))
    return "\n".join(lines), labelled


# --------------------------------------------------------------------------- responses


def respond(
    profile: Profile, item_id: str, key: str, pool: list[str], seed: int
) -> tuple[str, bool]:
    """One model's full response text to one item, and whether a good rule should accept it."""
    rng = random.Random(f"{seed}|{profile.slug}|{item_id}")
    m = _ID.match(item_id)
    domain, level = m["domain"], int(m["level"])
    knows = rng.random() < accuracy(profile, domain, level)
    if domain == "physical_stability" and level == 5:
        answer, intended = phrasing.stability_answer(rng, key, profile.stability, profile.p_hedge)
    elif domain == "gear_train" and level == 5:
        answer, intended = phrasing.gear_answer(rng, key, knows, profile)
    elif domain == "gauge_reading" and level == 5:
        answer, intended = phrasing.gauge_answer(rng, key, knows, profile)
    elif (domain, level) in WRITERS:
        answer, intended = WRITERS[domain, level](rng, key, knows, profile)
    else:
        value = key if knows else wrong_value(rng, key, pool)
        if rng.random() < profile.p_paraphrase:
            value = paraphrase(rng, domain, level, value)
        answer, intended = decorate(rng, profile, value), knows
    first = None
    if rng.random() < profile.p_two_answers:
        first = wrong_value(rng, key, pool) if len(key) < 40 else "unsure, checking again"
    text, labelled = build_response(rng, profile, domain, answer, first)
    return text, intended and labelled


def generate(keys: dict[str, dict[str, str]], seed: int = DEFAULT_SEED) -> dict[str, list[dict]]:
    """model slug -> sorted response rows; rows carry ``intended`` (dropped when written)."""
    items: list[tuple[str, str, list[str]]] = []
    for domain in DOMAINS:
        dkeys = keys[domain]
        pools = {lv: sorted(v for k, v in dkeys.items() if k.endswith(f"_q{lv}")) for lv in LEVELS}
        for image in sample_images(domain, dkeys, seed):
            for lv in LEVELS:
                item_id = f"{domain}_{image}_q{lv}"
                items.append((item_id, dkeys[item_id], pools[lv]))
    items.sort()
    out = {}
    for profile in PROFILES:
        rows = []
        for item_id, key, pool in items:
            text, intended = respond(profile, item_id, key, pool, seed)
            correct = strict_correct(text, key)
            rows.append(
                {
                    "id": item_id,
                    "model": profile.name,
                    "response": text,
                    "correct": correct,
                    "intended": intended,
                }
            )
        out[profile.slug] = rows
    return out


def write_benchmark(
    out: Path, seed: int = DEFAULT_SEED, keys_dir: Path | None = None
) -> dict[str, list[dict]]:
    """Write ``benchmark.toml`` and ``responses/*.jsonl.gz`` into ``out``; return the rows."""
    if keys_dir is None:
        keys_dir = out / "keys" if (out / "keys").is_dir() else PACKAGE_DIR / "keys"
    keys = load_keys(keys_dir)
    result = generate(keys, seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "benchmark.toml").write_text(benchmark_toml(), encoding="utf-8")
    fields = ("id", "model", "response", "correct")
    for slug, rows in result.items():
        write_jsonl_gz(
            out / "responses" / f"{slug}.jsonl.gz", ({f: r[f] for f in fields} for r in rows)
        )
    return result


def summary(result: dict[str, list[dict]]) -> str:
    """Per model: strict vs intended accuracy, overall and on the three sentence cells."""
    cells = ("physical_stability_q5", "gear_train_q5", "gauge_reading_q5")
    head = f"{'model':<20}{'strict':>8}{'intended':>9}" + "".join(f"{c:>26}" for c in cells)
    lines = [head]
    for rows in result.values():
        name = rows[0]["model"]
        n = len(rows)
        s = sum(r["correct"] for r in rows) / n
        i = sum(r["intended"] for r in rows) / n
        parts = []
        for cell in cells:
            dom, lv = cell.rsplit("_", 1)
            sub = [r for r in rows if r["id"].startswith(dom) and r["id"].endswith(lv)]
            parts.append(
                f"{sum(r['correct'] for r in sub):>3}/{len(sub)} strict "
                f"{sum(r['intended'] for r in sub):>3} rule"
            )
        lines.append(f"{name:<20}{s:>8.1%}{i:>9.1%}" + "".join(f"{p:>26}" for p in parts))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m keyaudit.engine.examples.generate")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="generation seed")
    parser.add_argument("--out", type=Path, default=PACKAGE_DIR, help="benchmark folder")
    parser.add_argument("--keys", type=Path, default=None, help="keys folder (*.jsonl.gz)")
    parser.add_argument(
        "--import-keys", type=Path, default=None, metavar="DIR", help="copy DIR/<domain>.jsonl"
    )
    parser.add_argument("--summary", action="store_true", help="print intended accuracies")
    args = parser.parse_args(argv)
    if args.import_keys is not None:
        import_keys(args.import_keys, args.out)
        print(f"imported {len(DOMAINS)} key files into {args.out / 'keys'}")
        return 0
    start = time.perf_counter()
    result = write_benchmark(args.out, args.seed, args.keys)
    n = sum(len(rows) for rows in result.values())
    print(
        f"wrote {n} responses of {len(result)} models to {args.out} in "
        f"{time.perf_counter() - start:.1f} s"
    )
    if args.summary:
        print(summary(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
