"""Catalogue integrity: every rule valid, unique, and covered by a test row."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from assetgate.catalogue.model import flat_fields
from tests.catalogue.test_rules import RULE_ROWS

if TYPE_CHECKING:
    from assetgate.catalogue.levels import Catalogue


def test_rule_ids_unique(catalogue: Catalogue) -> None:
    """No two rules share an id in the newest line (which holds every rule)."""
    ids = [rule.id for rule in catalogue.newest.rules]
    assert len(ids) == len(set(ids))


def test_every_line_keeps_earlier_rules(catalogue: Catalogue) -> None:
    """Rules are never removed: each line's rule ids include the previous line's."""
    lost = [
        f"{older.line} -> {newer.line}"
        for older, newer in zip(catalogue.lines, catalogue.lines[1:], strict=False)
        if not {rule.id for rule in older.rules} <= {rule.id for rule in newer.rules}
    ]
    assert lost == []


def test_every_rule_field_exists(catalogue: Catalogue) -> None:
    """Every rule names a field its struct has in every line that carries the rule."""
    missing = [
        f"{line.line}: {rule.id} -> {rule.struct}.{rule.field}"
        for line in catalogue.lines
        for rule in line.rules
        if rule.field not in flat_fields(line, rule.struct)
    ]
    assert missing == []


def test_equals_rules_name_enum_values(catalogue: Catalogue) -> None:
    """`equals` rules compare with a value the field's enum knows."""
    line = catalogue.newest
    bad: list[str] = []
    for rule in line.rules:
        if rule.when != "equals":
            continue
        type_name = flat_fields(line, rule.struct)[rule.field]
        enum = line.enums[type_name.removeprefix("enum:")]
        if rule.value not in enum.values:
            bad.append(rule.id)
    assert bad == []


def test_rule_ids_follow_kind_and_field(catalogue: Catalogue) -> None:
    """Rule ids start with their asset kind and name their field."""
    prefixes = {"StreamConfig": "stream.", "ConsumerConfig": "consumer."}
    bad = [
        rule.id
        for rule in catalogue.newest.rules
        if not (rule.id.startswith(prefixes[rule.struct]) and rule.field in rule.id)
    ]
    assert bad == []


def test_every_rule_has_a_note(catalogue: Catalogue) -> None:
    """Every rule carries its rationale in `note`."""
    assert [rule.id for rule in catalogue.newest.rules if not rule.note] == []


def test_every_rule_covered_by_a_row(catalogue: Catalogue) -> None:
    """The rule table in test_rules.py has a row for every catalogue rule, and no extra."""
    catalogue_ids = {rule.id for rule in catalogue.newest.rules}
    row_ids = {row.rule_id for row in RULE_ROWS}
    assert row_ids == catalogue_ids


@pytest.mark.parametrize(
    ("line", "level"),
    [("2.11", 1), ("2.12", 3), ("2.14", 4), ("2.15", 5)],
    ids=["2.11", "2.12", "2.14", "2.15"],
)
def test_rule_levels_within_line(catalogue: Catalogue, line: str, level: int) -> None:
    """No rule of a line needs more than the line's highest API level."""
    release = catalogue.release_line(line)
    assert max(rule.level for rule in release.rules) <= level


def test_api_levels_never_decrease(catalogue: Catalogue) -> None:
    """API levels only go up across the ranges of all lines."""
    levels = [
        rng.switches.api_level or 0 for line in catalogue.lines for rng in line.ranges
    ]
    assert levels == sorted(levels)
