"""Corpus overview and per-cell strict accuracy: what a benchmark holds, before any rule."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .benchmark import Benchmark


@dataclass(frozen=True)
class CorpusOverview:
    name: str
    n_keys: int
    domains: tuple[str, ...]
    levels: tuple[int, ...]
    n_responses: int
    models_found: tuple[str, ...]
    roster_size: int
    missing_models: tuple[str, ...]
    computed_models: tuple[str, ...]


def corpus_overview(benchmark: Benchmark) -> CorpusOverview:
    """Counts of keys, domains, levels, responses and models found vs the roster."""
    cells = benchmark.cells()
    return CorpusOverview(
        name=benchmark.config.name,
        n_keys=len(benchmark.keys),
        domains=tuple(sorted({d for d, _ in cells})),
        levels=tuple(sorted({level for _, level in cells})),
        n_responses=len(benchmark.responses),
        models_found=benchmark.models,
        roster_size=len(benchmark.config.roster),
        missing_models=benchmark.missing_models,
        computed_models=benchmark.computed_models,
    )


@dataclass(frozen=True)
class StrictRow:
    model: str
    n: int
    correct: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None


def strict_cell_accuracy(benchmark: Benchmark, domain: str, level: int) -> list[StrictRow]:
    """Per model: evaluated responses in the cell and how many the strict scorer accepts."""
    n: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    for response in benchmark.responses:
        if response.ref.domain == domain and response.ref.level == level:
            n[response.model] += 1
            correct[response.model] += response.correct
    return [StrictRow(model, n[model], correct[model]) for model in benchmark.models if n[model]]
