"""Coverage of the intervals that carry the rule's extraction error, on simulation with a known
misreading rate.

    python bench/extraction_coverage.py [--datasets 1000] [--resamples 1000] [--labelled 200]

Each dataset is one model on the seed's shape — 31 paired domains x 50 image clusters, one item
per level per image, within-image correlation rho = 0.6 — with true accuracies fixed across
datasets (L5 well below L4, so a misreading that shrinks every difference shows). Every cell is
ruled, and the rule misreads at a known rate: a wrong answer is accepted with probability
``--false-accept`` and a right one rejected with ``--false-reject`` (defaults 6% and 4%: about 5%
of verdicts wrong, the order issue 23 measured on unseen phrasing). A random sample of
``--labelled`` verdicts is labelled with the truth, as ``keyaudit review --sample`` and a person
would; the rest keep the rule's verdict. Per dataset:

* the **corrected** L5−L4 interval (:func:`keyaudit.engine.stats.corrected.corrected_bootstrap`:
  image clusters resampled and the error rates redrawn in each replicate) against the true
  population difference (from the true accuracies and the baselines);
* the **uncorrected** interval of the same data (rule verdicts taken at their word, as a report
  without adjudications would), against the same truth;
* the corrected **Raw L5** interval (rate draws alone) against the dataset's own true Raw L5 (the
  share of its stored responses that are truly right: what that interval claims to cover).

Writes ``bench/results/extraction_coverage.md``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from keyaudit.engine.stats.aggregate import OutcomeColumns, cluster_counts
from keyaudit.engine.stats.bootstrap import bootstrap_clusters
from keyaudit.engine.stats.corrected import (
    CorrectionInputs,
    corrected_accuracies,
    corrected_bootstrap,
)
from keyaudit.engine.stats.extraction_error import RuleErrorSample, rate_draws

RESULTS = Path(__file__).parent / "results" / "extraction_coverage.md"


def columns(domains: int, images: int, values: np.ndarray) -> OutcomeColumns:
    """One model's items (domain, image, level) with ``values`` as their ``correct``."""
    d = np.repeat(np.arange(domains), images * 2)
    i = np.tile(np.repeat(np.arange(images), 2), domains) + d * images
    level = np.tile(np.array([4, 5]), domains * images)
    return OutcomeColumns(
        models=("model",),
        domains=tuple(f"domain_{k:02d}" for k in range(domains)),
        images=tuple(f"image_{k:05d}" for k in range(domains * images)),
        model=np.zeros(len(d), dtype=np.int64),
        domain=d.astype(np.int64),
        image=i.astype(np.int64),
        level=level.astype(np.int64),
        n=np.ones(len(d), dtype=np.int64),
        correct=np.asarray(values, dtype=np.int64),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--domains", type=int, default=31)
    parser.add_argument("--images", type=int, default=50)
    parser.add_argument("--rho", type=float, default=0.6)
    parser.add_argument("--false-accept", type=float, default=0.06)
    parser.add_argument("--false-reject", type=float, default=0.04)
    parser.add_argument("--labelled", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--append", action="store_true", help="add this run to the results file")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    nd, ni = args.domains, args.images
    mu4 = rng.uniform(0.45, 0.9, size=nd)
    mu5 = np.clip(mu4 - rng.uniform(0.05, 0.3, size=nd), 0.05, None)
    mu = np.stack([mu4, mu5], axis=1)  # [domain, level]
    base = rng.uniform(0.05, 0.4, size=(nd, 2))
    names = [f"domain_{k:02d}" for k in range(nd)]
    baselines = {(names[s], lv): float(base[s, j]) for s in range(nd) for j, lv in enumerate((4, 5))}
    adj = (mu - base) / (1 - base)
    truth = float(np.mean(adj[:, 1] - adj[:, 0]))
    rule_of_cell = {(d, lv): 0 for d in names for lv in (4, 5)}
    n_items = nd * ni * 2
    p_item = np.repeat(mu, ni, axis=0).reshape(-1)  # items in (domain, image, level) order
    hits = {"corrected": 0, "plain": 0, "raw": 0}
    below = {"corrected": 0, "plain": 0}
    widths = {"corrected": [], "plain": [], "raw": []}
    errors_seen = []
    t0 = time.perf_counter()
    for k in range(args.datasets):
        u = np.repeat(rng.random(nd * ni), 2)
        shared = rng.random(n_items) < args.rho
        own = rng.random(n_items)
        right = np.where(shared, u < p_item, own < p_item)
        flip = rng.random(n_items)
        accept = np.where(right, flip >= args.false_reject, flip < args.false_accept)
        labelled = np.zeros(n_items, dtype=bool)
        labelled[rng.choice(n_items, size=args.labelled, replace=False)] = True
        errors_seen.append(int((accept != right).sum()))
        ca = (~labelled) & accept
        cr = (~labelled) & ~accept
        sample = RuleErrorSample(
            "sim",
            # the false-accept rate is measured on the labelled wrong answers, the false-reject
            # rate on the labelled right ones
            (int((labelled & ~right).sum()), int((labelled & right).sum()), 0, 0),
            (int((labelled & ~right & accept).sum()), int((labelled & right & ~accept).sum()), 0, 0),
            (int(ca.sum()), int(cr.sum()), 0, 0),
        )
        zero = np.zeros(n_items, dtype=bool)
        sides = tuple(
            columns(nd, ni, v) for v in (labelled & right, ca, cr, zero, zero)
        )
        inputs = CorrectionInputs(sides, rule_of_cell, (sample,), baselines)
        rates = rate_draws((sample,), args.resamples, seed=k)
        fixed = corrected_bootstrap(inputs, (4, 5), rates, args.resamples, k, 0.95)["model"]
        plain = bootstrap_clusters(
            cluster_counts(columns(nd, ni, accept), (4, 5)), baselines, args.resamples, seed=k
        )["model"]
        raw = corrected_accuracies(inputs, 5, rates, 0.95, seed=k).raw_hi["model"]
        true_raw = float(right[1::2].reshape(nd, ni).mean(axis=1).mean())
        for name, low, high in (
            ("corrected", fixed.ci_low, fixed.ci_high),
            ("plain", plain.ci_low, plain.ci_high),
        ):
            hits[name] += low <= truth <= high
            below[name] += high < truth
            widths[name].append(high - low)
        hits["raw"] += raw.low <= true_raw <= raw.high
        widths["raw"].append(raw.high - raw.low)
    seconds = time.perf_counter() - t0
    n = args.datasets

    def share(hit: int) -> str:
        rate = hit / n
        return f"{hit} / {n} = **{100 * rate:.1f}%** (binomial SE {100 * np.sqrt(rate * (1 - rate) / n):.1f} pp)"

    lines = [
        "# Coverage of the intervals that carry the extraction error",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')}: `python bench/extraction_coverage.py"
        f" --datasets {n} --resamples {args.resamples} --labelled {args.labelled}"
        f" --false-accept {args.false_accept} --false-reject {args.false_reject}` —"
        f" {n:,} simulated datasets, each {nd} paired domains x {ni} image clusters, one item per"
        f" level per image (rho = {args.rho}); every cell ruled by one rule that accepts a wrong"
        f" answer with probability {args.false_accept:.0%} and rejects a right one with"
        f" {args.false_reject:.0%} (mean {np.mean(errors_seen) / n_items:.1%} of verdicts wrong);"
        f" {args.labelled} verdicts per dataset labelled at random; {args.resamples:,} resamples"
        f" per dataset; seed {args.seed}; {seconds:.0f} s in total.",
        "",
        f"- true L5−L4 adjusted difference: {100 * truth:+.2f} pp",
        f"- corrected 95% interval (clusters resampled, error rates redrawn per replicate) covers it"
        f" in {share(hits['corrected'])}; target 93–97%; misses with the interval below / above"
        f" the truth: {below['corrected']} / {n - hits['corrected'] - below['corrected']}; mean width"
        f" {100 * np.mean(widths['corrected']):.2f} pp",
        f"- uncorrected 95% interval of the same data (the rule's verdicts at their word) covers it"
        f" in {share(hits['plain'])}; below / above: {below['plain']} /"
        f" {n - hits['plain'] - below['plain']}; mean width {100 * np.mean(widths['plain']):.2f} pp",
        f"- corrected Raw L5 interval (the rates' draws and which answers were misread, no"
        " resampling of the responses) covers the dataset's own true"
        f" Raw L5 (share of its stored responses truly right) in {share(hits['raw'])}; mean width"
        f" {100 * np.mean(widths['raw']):.2f} pp",
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines) + "\n"
    if args.append and RESULTS.exists():
        text = RESULTS.read_text(encoding="utf-8") + "\n" + "\n".join(lines[2:]) + "\n"
    RESULTS.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
