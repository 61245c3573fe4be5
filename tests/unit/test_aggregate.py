"""A run's aggregates say what check's report says: counts, failing, first finding, verdict."""

from __future__ import annotations

import functools
import random
from typing import TYPE_CHECKING, Final

import msgspec
import pytest

from assetgate.judge.outcomes import causes, judge_clusters
from assetgate.report.common import verdict_line
from assetgate.run.aggregate import SAMPLE, Partial, Tally, summarize, summary_of_report
from assetgate.run.check import check, count_findings, first_failing, iter_records
from assetgate.run.collect import Collector, target_profile
from benchmarks.gen_inventory import generate
from tests.conftest import REPO

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue
    from assetgate.run.check import Report

INVENTORIES: Final = (
    str(REPO / "fixtures/inventories/demo.jsonl"),
    str(REPO / "fixtures/inventories/formats/mixed.jsonl"),
    str(REPO / "fixtures/inventories/golden.jsonl"),
)
FAIL_ONS: Final = (
    ("offline", "unloadable", "detached", "stamp_too_low"),
    ("offline", "overlap", "ignored", "stamp_missing", "record-error"),
    (),
)
ACCEPTS: Final = (
    (),
    ("overlap:*", "unloadable:*", "stamp_missing:*/*/S1*", "record-error:*:4*"),
    ("*:*", "crash:east", "meta_unavailable:*", "ignored:*"),
)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A generated fleet with bad lines and overlaps."""
    path: Path = tmp_path_factory.mktemp("agg") / "fleet.jsonl"
    path.write_bytes(
        b"".join(generate(1500, seed=4, bad_fraction=0.04, overlap_fraction=0.05))
    )
    return str(path)


def _reports(catalogue: Catalogue, fleet: str) -> list[tuple[Report, tuple[str, ...]]]:
    out: list[tuple[Report, tuple[str, ...]]] = []
    for index, (target, accept) in enumerate(
        [(t, a) for t in ("2.10.26", "2.11.11", "2.12.8", "2.15.1") for a in ACCEPTS]
    ):
        for mode in ("cluster", "single"):
            report = check(
                [*INVENTORIES, fleet],
                target=target,
                catalogue=catalogue,
                accept=list(accept),
                mode=mode,
            )
            out.append((report, FAIL_ONS[index % len(FAIL_ONS)]))
    return out


def test_summary_of_a_report_counts_and_words_as_check(
    catalogue: Catalogue, fleet: str
) -> None:
    """failing, the first finding, the verdict and the counts equal check's own."""
    for report, fail_on in _reports(catalogue, fleet):
        summary = summary_of_report(report, fail_on)
        first = first_failing(report, fail_on)
        assert summary.failing == count_findings(report, fail_on)
        assert summary.main_finding == (
            None if first is None else {"finding": first[0], "reason": first[1]}
        )
        assert summary.verdict == verdict_line(report)
        assert summary.summary == report.summary
        assert summary.outcomes == report.clusters
        assert [a.matched for a in summary.acceptances] == [
            len(a.matched) for a in report.accepted
        ]
        for rule, found in summary.findings.items():
            having = [
                v
                for v in report.assets
                if rule in {v.state, v.drift} and rule != "online"
            ]
            assert found["count"] == len(having)
            assert found["sample"] == having[:SAMPLE]
        assert summary.health["count"] == len(report.health)


def test_tallies_of_parts_merge_into_the_tally_of_the_whole(
    catalogue: Catalogue, fleet: str
) -> None:
    """Entries tallied in any split and merged in any order give the whole's summary."""
    rng = random.Random(3)  # noqa: S311 (test data)
    for report, fail_on in _reports(catalogue, fleet)[::3]:
        entries = [
            *(("asset", (i,), v) for i, v in enumerate(report.assets)),
            *(("health", (i,), h) for i, h in enumerate(report.health)),
            *(("error", (i,), e) for i, e in enumerate(report.errors)),
            *(("ignored", (i,), g) for i, g in enumerate(report.ignored)),
            *(("overlap", (i,), o) for i, o in enumerate(report.overlaps)),
        ]
        rng.shuffle(entries)
        cuts = sorted(rng.sample(range(len(entries) + 1), 4))
        parts: list[Partial] = []
        for start, end in zip([0, *cuts], [*cuts, len(entries)], strict=True):
            tally = Tally(fail_on, len(report.accepted))
            for kind, order, item in entries[start:end]:
                getattr(tally, f"add_{kind}")(order, item)
            # travel as the executors' tallies do
            parts.append(
                msgspec.msgpack.decode(
                    msgspec.msgpack.encode(tally.partial()), type=Partial
                )
            )
        matched = Tally(fail_on, len(report.accepted))
        matched.add_matched(report.accepted)
        parts.append(matched.partial())
        rng.shuffle(parts)
        whole = Partial(matched=[(0, []) for _ in report.accepted])
        for part in parts:
            whole = whole.merge(part)
        merged = summarize(
            whole,
            outcomes=report.clusters,
            causes={c.cluster: len(c.assets) for c in report.clusters},
            acceptances=[(a.rule, a.asset) for a in report.accepted],
            target=report.target,
            catalogue=report.catalogue,
            inventory=report.inventory,
        )
        assert merged == summary_of_report(report, fail_on)


def test_an_inventory_with_no_asset_fails_with_no_assets(catalogue: Catalogue) -> None:
    """Nothing to judge is a failing finding, and the first one."""
    report = check([], target="2.11.11", catalogue=catalogue)
    summary = summary_of_report(report, ())
    assert summary.failing == 1
    assert summary.main_finding is not None
    assert summary.main_finding["finding"].startswith("no-assets: ")


def test_the_kept_causes_give_the_outcomes_of_all_causes(
    catalogue: Catalogue, tmp_path: Path
) -> None:
    """Outcomes judged on the tally's bounded causes equal those judged on every asset.

    The scan's driver never holds every verdict that takes a cluster down: the tally
    keeps the first ten per cluster and the first of each rule.
    """
    rng = random.Random(8)  # noqa: S311 (test data)
    fleet = tmp_path / "causes.jsonl"
    fleet.write_bytes(b"".join(generate(8000, seed=6, bad_fraction=0.01)))
    seen = 0
    for target in ("2.10.26", "2.11.11", "2.12.8", "2.15.1"):
        profiles = {"*": catalogue.server(target)}
        collector = Collector(profiles, "cluster", catalogue)
        for record in iter_records([*INVENTORIES, str(fleet)]):
            collector.add(record)
        settled = collector.verdicts()
        profile_of = functools.partial(target_profile, profiles)
        expected, down = judge_clusters(settled, profile_of)
        indexed = list(enumerate(settled))
        rng.shuffle(indexed)
        parts = []
        for chunk in (indexed[: len(indexed) // 3], indexed[len(indexed) // 3 :]):
            tally = Tally(())
            for index, verdict in chunk:
                rules = causes(profile_of(verdict.cluster).cluster_outcomes, verdict)
                if rules:
                    tally.add_cause((index,), verdict, [r.id for r in rules])
            parts.append(tally.partial())
        whole = parts[0].merge(parts[1])
        names = sorted({v.cluster for v in settled})
        found, found_down = judge_clusters(whole.causing(), profile_of, names=names)
        assert found_down == down
        assert [
            msgspec.structs.replace(c, assets=c.assets[:SAMPLE]) for c in found
        ] == [msgspec.structs.replace(c, assets=c.assets[:SAMPLE]) for c in expected]
        assert whole.cause_counts == {
            c.cluster: len(c.assets) for c in expected if c.assets
        }
        seen += sum(1 for c in expected if len(c.assets) > SAMPLE)
    assert seen > 0  # some cluster had more causes than the tally keeps


def test_summary_renderings_name_the_verdict_first_findings_and_tables(
    catalogue: Catalogue,
) -> None:
    """Text, Markdown and JSON of a summary: verdict, first findings with their words."""
    import json

    from assetgate.report.common import OUTCOME_HEAD, drift_text, outcome_row
    from assetgate.report.scan import summary_json, summary_markdown, summary_text

    report = check([INVENTORIES[0]], target="2.11.11", catalogue=catalogue)
    summary = summary_of_report(report, ())
    text = summary_text(summary, "/out")
    first_missing = summary.findings["stamp_missing"]["sample"][0]
    assert text.endswith(f"verdict: {summary.verdict}\n")
    count = summary.findings["stamp_missing"]["count"]
    assert f"stamp_missing ({count}, first {min(count, SAMPLE)})" in text
    assert drift_text(first_missing) in text
    assert "tables: /out/{assets,errors,ignored,overlaps}" in text
    markdown = summary_markdown(summary, "/out")
    assert "\n".join(OUTCOME_HEAD) in markdown
    assert all(outcome_row(c) in markdown for c in summary.outcomes)
    body = json.loads(summary_json(summary))
    assert body["failing"] == summary.failing
    assert body["causes"] == {c.cluster: len(c.assets) for c in report.clusters}
