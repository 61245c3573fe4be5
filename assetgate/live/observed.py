"""Compare a check's predictions with what live servers were observed doing.

Observations come from ``assetgate pull`` output (canonical records with
``observed_state``; ``kind: "server"`` records say which clusters and accounts were
looked at; a ``kind: "cluster"`` record says a cluster's JetStream API was unavailable)
or from the inventory's own records. An asset agrees when:

* predicted ``online``: observed online, no stored non-zero field missing from the
  config the server returned;
* ``degraded``: observed online with exactly the predicted fields missing;
* ``offline``: observed offline with the same reason, byte for byte;
* ``unloadable`` / ``detached``: not served (absent from a looked-at account, or
  ``missing``);
* ``unavailable``: its cluster was observed unavailable (JetStream API down), or, when
  the predicted outcome is ``meta_state_lost``, the asset is gone from a serving cluster.

Assets of clusters (or accounts) nobody looked at are ``not observed``, not disagreements.
Pure except :func:`read_observations`, which reads files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from assetgate.judge.gate import asset_id
from assetgate.report.common import escape_markdown, escape_terminal, pretty_json
from assetgate.wire import DECODE_FAILURES, DEFAULT_ACCOUNT

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Mapping, Sequence

    from assetgate.inventory.read import Asset
    from assetgate.run.check import Report

__all__ = [
    "Comparison",
    "Observations",
    "compare_observed",
    "dropped_paths",
    "read_observations",
    "render_comparison",
]

_NOT_SERVED: Final = frozenset({"unloadable", "detached"})


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    """One asset: predicted and observed (state, reason), and whether they agree."""

    asset: str
    predicted_state: str
    predicted_reason: str | None
    observed_state: str
    observed_reason: str | None
    agree: bool | None
    """``None``: not observed (nobody looked at its cluster or account)."""


class _Observed(msgspec.Struct, frozen=True):
    kind: str = ""
    cluster: str = ""
    account: str | None = None
    stream: str = ""
    name: str = ""
    config: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))
    observed_state: str | None = None
    observed_reason: str | None = None


class Observations:
    """What was observed, by asset, plus which clusters/accounts were looked at."""

    def __init__(self) -> None:
        """Start empty."""
        self.assets: dict[tuple[str, str, str, str, str], _Observed] = {}
        self.clusters: dict[str, tuple[str, str | None]] = {}
        self.covered: set[tuple[str, str | None]] = set()
        self.errors: list[str] = []

    def add(self, record: _Observed) -> None:
        """Account for one observation record."""
        if record.kind == "server":
            self.covered.add((record.cluster, record.account))
        elif record.kind == "cluster" and record.observed_state is not None:
            self.clusters[record.cluster] = (
                record.observed_state,
                record.observed_reason,
            )
            self.covered.add((record.cluster, None))
        elif record.kind in {"stream", "consumer"}:
            account = record.account or DEFAULT_ACCOUNT
            name = record.stream if record.kind == "stream" else record.name
            key = (record.cluster, account, record.kind, record.stream, name)
            self.assets[key] = record
            self.covered.add((record.cluster, account))

    @classmethod
    def from_assets(cls, assets: Iterable[Asset]) -> Observations:
        """Observations carried by inventory records themselves (``observed_state``)."""
        out = cls()
        for asset in assets:
            if asset.observed_state is None:
                continue
            out.add(
                _Observed(
                    kind=asset.kind,
                    cluster=asset.cluster,
                    account=asset.account,
                    stream=asset.stream,
                    name=asset.name,
                    config=msgspec.Raw(asset.config),
                    observed_state=asset.observed_state,
                    observed_reason=asset.observed_reason,
                )
            )
        return out

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, object]]) -> Observations:
        """Observations from ``assetgate pull`` records already in memory."""
        out = cls()
        for record in records:
            out.add(_DECODER.decode(msgspec.json.encode(record)))
        return out

    def looked_at(self, cluster: str, account: str) -> bool:
        """Whether the observations cover this cluster's account."""
        return (cluster, account) in self.covered or (cluster, None) in self.covered


_DECODER: Final = msgspec.json.Decoder(_Observed)


def read_observations(paths: Sequence[str | os.PathLike[str]]) -> Observations:
    """Read ``assetgate pull`` output (JSON Lines); bad lines become ``errors``."""
    out = Observations()
    for path in paths:
        with Path(path).open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    out.add(_DECODER.decode(line))
                except DECODE_FAILURES as exc:
                    out.errors.append(f"{path}:{number}: {exc}")
    return out


def _is_zero(value: object) -> bool:
    return value is None or value is False or value in (0, "", [], {})


def dropped_paths(stored: object, seen: object, path: str = "") -> list[str]:
    """Paths of non-zero stored fields absent from ``seen`` (``sources[0].consumer``)."""
    out: list[str] = []
    if isinstance(stored, dict) and isinstance(seen, dict):
        for key, value in stored.items():
            where = f"{path}.{key}" if path else key
            if key not in seen:
                if not _is_zero(value):
                    out.append(where)
            else:
                out.extend(dropped_paths(value, seen[key], where))
    elif isinstance(stored, list) and isinstance(seen, list):
        for index, (left, right) in enumerate(zip(stored, seen, strict=False)):
            out.extend(dropped_paths(left, right, f"{path}[{index}]"))
    return out


def _observed_pair(
    key: tuple[str, str, str, str, str],
    stored: bytes | None,
    observations: Observations,
) -> tuple[str, str | None]:
    cluster = observations.clusters.get(key[0])
    if cluster is not None:
        return cluster
    if not observations.looked_at(key[0], key[1]):
        return "not observed", None
    seen = observations.assets.get(key)
    if seen is None:
        return "absent", None
    state = seen.observed_state or "online"
    if state == "online" and stored is not None and bytes(seen.config) != b"null":
        lost = dropped_paths(
            msgspec.json.decode(stored), msgspec.json.decode(seen.config)
        )
        if lost:
            return "degraded", ", ".join(lost)
    return state, seen.observed_reason


def _agrees(
    state: str, reason: str | None, seen: tuple[str, str | None], outcome: str | None
) -> bool:
    observed, detail = seen
    if state == "online":
        return seen == ("online", None)
    if state == "offline":
        return seen == ("offline", reason)
    if state in _NOT_SERVED:
        return observed in {"absent", "missing"}
    if state == "unavailable":  # the cluster's outcome says how it shows
        if outcome == "meta_state_lost":  # serves, but has lost (deleted) the asset
            return observed in {"absent", "missing"}
        return observed == "unavailable"
    return observed == "degraded" and detail == reason


def compare_observed(
    report: Report, assets: Sequence[Asset], observations: Observations
) -> list[Comparison]:
    """Predicted vs observed, per asset of the report, in report order."""
    stored = {
        (a.cluster, a.account, a.kind, a.stream, a.name): a.config for a in assets
    }
    outcomes = {c.cluster: c.outcome for c in report.clusters}
    out: list[Comparison] = []
    for verdict in report.assets:
        key = (
            verdict.cluster,
            verdict.account,
            verdict.kind,
            verdict.stream,
            verdict.name,
        )
        reason = verdict.reason
        if verdict.state == "degraded":
            reason = ", ".join(verdict.dropped_fields)
        seen = _observed_pair(key, stored.get(key), observations)
        agree = (
            None
            if seen[0] == "not observed"
            else _agrees(verdict.state, reason, seen, outcomes.get(verdict.cluster))
        )
        out.append(
            Comparison(
                asset=asset_id(verdict),
                predicted_state=verdict.state,
                predicted_reason=reason,
                observed_state=seen[0],
                observed_reason=seen[1],
                agree=agree,
            )
        )
    return out


def render_comparison(comparisons: Sequence[Comparison], fmt: str) -> str:
    """Text, JSON or Markdown: counts, then every disagreement and unobserved asset."""
    agree = sum(1 for c in comparisons if c.agree)
    differ = [c for c in comparisons if c.agree is False]
    unseen = [c for c in comparisons if c.agree is None]
    observed = agree + len(differ)
    rate = f"{100 * agree / observed:.1f}%" if observed else "n/a"
    head = (
        f"{agree} of {observed} observed assets agree ({rate}); "
        f"{len(differ)} disagree, {len(unseen)} not observed"
    )
    if fmt == "json":
        body = {
            "agree": agree,
            "disagree": len(differ),
            "not_observed": len(unseen),
            "assets": list(comparisons),
        }
        return pretty_json(body)
    if fmt == "markdown":
        lines = ["## assetgate: predicted vs observed", "", f"**{head}.**"]
        if differ or unseen:
            lines += ["", "| asset | predicted | observed |", "| --- | --- | --- |"]
            lines += [
                f"| {escape_markdown(c.asset)} | {escape_markdown(_pair(c.predicted_state, c.predicted_reason))}"
                f" | {escape_markdown(_pair(c.observed_state, c.observed_reason))} |"
                for c in (*differ, *unseen)
            ]
        return "\n".join(lines) + "\n"
    lines = [f"assetgate check --compare-observed: {head}"]
    for title, group in (("disagree", differ), ("not observed", unseen)):
        if group:
            lines += ["", f"{title} ({len(group)})"]
            for c in group:
                lines.append(f"  {escape_terminal(c.asset)}")
                lines.append(
                    f"      predicted {escape_terminal(_pair(c.predicted_state, c.predicted_reason))}"
                )
                lines.append(
                    f"      observed  {escape_terminal(_pair(c.observed_state, c.observed_reason))}"
                )
    return "\n".join(lines) + "\n"


def _pair(state: str, reason: str | None) -> str:
    return state if reason is None else f"{state}: {reason}"
