"""Reading a Prometheus exposition in tests (``prometheus_client``'s own parser)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(text: str) -> Samples:
    """Every sample of an exposition, by name and labels."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(all: Samples, name: str, **labels: str) -> float:
    return all.get((name, frozenset(labels.items())), 0.0)
