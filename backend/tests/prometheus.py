"""Read Prometheus' text format with prometheus-client's own parser, as a scraper would."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of an exposition, by (sample name, labels); a name given twice is an error."""
    found: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = (sample.name, frozenset(sample.labels.items()))
            assert key not in found, f"{key} exported twice"
            found[key] = sample.value
    return found


def value(text: str, name: str, **labels: str) -> float | None:
    """One sample's value, None when it is not exported."""
    return samples(text).get((name, frozenset(labels.items())))


def families(text: str) -> dict[str, str]:
    """Each family's name and type (counter, gauge, histogram)."""
    return {family.name: family.type for family in text_string_to_metric_families(text)}
