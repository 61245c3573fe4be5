"""One row per required-level rule (nats-server jetstream_versioning_test.go style).

Each row sets exactly one feature; the server stamps that rule's level. The rows also
pin the catalogue: a rule whose level changes must change its row here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

import pytest

from assetgate import decode, validate
from assetgate.judge.metadata import required_level

if TYPE_CHECKING:
    from assetgate.catalogue.levels import Catalogue
    from assetgate.wire import AssetKind


class RuleRow(NamedTuple):
    """A config using exactly one feature, the first release with it, and its level."""

    rule_id: str
    kind: AssetKind
    body: str
    first: str
    level: int


RULE_ROWS: Final[tuple[RuleRow, ...]] = (
    # 2.11: level 1
    RuleRow(
        "stream.allow_msg_ttl",
        "stream",
        '{"name":"S","allow_msg_ttl":true}',
        "2.11.0",
        1,
    ),
    RuleRow(
        "stream.subject_delete_marker_ttl",
        "stream",
        '{"name":"S","subject_delete_marker_ttl":1000000000,"allow_msg_ttl":true}',
        "2.11.0",
        1,
    ),
    RuleRow(
        "consumer.pause_until",
        "consumer",
        '{"name":"C","pause_until":"1970-01-01T00:00:00Z"}',
        "2.11.0",
        1,
    ),
    RuleRow(
        "consumer.priority_policy",
        "consumer",
        '{"name":"C","priority_policy":"pinned_client","priority_groups":["g"]}',
        "2.11.0",
        1,
    ),
    RuleRow(
        "consumer.priority_timeout",
        "consumer",
        '{"name":"C","priority_timeout":120000000000,"priority_policy":"pinned_client","priority_groups":["a"]}',
        "2.11.0",
        1,
    ),
    RuleRow(
        "consumer.priority_groups",
        "consumer",
        '{"name":"C","priority_groups":["a"],"priority_policy":"overflow"}',
        "2.11.0",
        1,
    ),
    # 2.12: level 2
    RuleRow(
        "stream.allow_msg_counter",
        "stream",
        '{"name":"S","allow_msg_counter":true}',
        "2.12.0",
        2,
    ),
    RuleRow(
        "stream.allow_atomic", "stream", '{"name":"S","allow_atomic":true}', "2.12.0", 2
    ),
    RuleRow(
        "stream.allow_msg_schedules",
        "stream",
        '{"name":"S","allow_msg_schedules":true}',
        "2.12.0",
        2,
    ),
    RuleRow(
        "stream.persist_mode",
        "stream",
        '{"name":"S","persist_mode":"async"}',
        "2.12.0",
        2,
    ),
    # 2.14: level 4
    RuleRow(
        "stream.allow_batched",
        "stream",
        '{"name":"S","allow_batched":true}',
        "2.14.0",
        4,
    ),
    RuleRow(
        "consumer.ack_policy_flow_control",
        "consumer",
        '{"name":"C","ack_policy":"flow_control","deliver_subject":"dl.c"}',
        "2.14.0",
        4,
    ),
)

_NEWEST: Final = "2.15.1"


@pytest.mark.parametrize("row", RULE_ROWS, ids=[row.rule_id for row in RULE_ROWS])
def test_rule_stamps_level(catalogue: Catalogue, row: RuleRow) -> None:
    """The newest server stamps _nats.req.level with the rule's level."""
    result = validate(row.body, kind=row.kind, server=_NEWEST, catalogue=catalogue)
    actual = (result.accepted, result.required_level, result.stamped_metadata)
    assert actual == (True, row.level, {"_nats.req.level": str(row.level)})


@pytest.mark.parametrize("row", RULE_ROWS, ids=[row.rule_id for row in RULE_ROWS])
def test_rule_in_catalogue(catalogue: Catalogue, row: RuleRow) -> None:
    """The catalogue holds the rule with this level, introduced by this release line."""
    rules = {rule.id: rule for rule in catalogue.newest.rules}
    rule = rules[row.rule_id]
    assert (rule.level, rule.since) == (row.level, row.first)


@pytest.mark.parametrize("row", RULE_ROWS, ids=[row.rule_id for row in RULE_ROWS])
def test_rule_on_first_release(catalogue: Catalogue, row: RuleRow) -> None:
    """The first release with the feature accepts it and already stamps its level."""
    result = validate(row.body, kind=row.kind, server=row.first, catalogue=catalogue)
    assert (result.accepted, result.required_level) == (True, row.level)


@pytest.mark.parametrize("row", RULE_ROWS, ids=[row.rule_id for row in RULE_ROWS])
def test_rule_minimum_release(catalogue: Catalogue, row: RuleRow) -> None:
    """The config's minimum release is the feature's first release."""
    result = validate(row.body, kind=row.kind, server=_NEWEST, catalogue=catalogue)
    assert result.min_server_version == row.first


@pytest.mark.parametrize("row", RULE_ROWS, ids=[row.rule_id for row in RULE_ROWS])
def test_rule_level_within_server(catalogue: Catalogue, row: RuleRow) -> None:
    """Every rule's level is at most the API level of its first release (v2.12+ test asserts this)."""
    api_level = catalogue.server(row.first).api_level
    assert api_level is not None
    assert row.level <= api_level


@pytest.mark.parametrize("row", RULE_ROWS, ids=[row.rule_id for row in RULE_ROWS])
def test_rule_direct_evaluator(catalogue: Catalogue, row: RuleRow) -> None:
    """required_level() on the decoded config agrees with validate()."""
    line = catalogue.server(_NEWEST).line
    struct = "StreamConfig" if row.kind == "stream" else "ConsumerConfig"
    config = decode(row.body, line, struct).config
    assert required_level(config, line, row.kind) == row.level
