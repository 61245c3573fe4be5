"""The scan job: read inventories with Spark, judge them with the core, commit a directory.

:func:`scan` runs on a session it is given (tests, notebooks); :func:`build_session`
builds the quiet session ``assetgate scan`` uses; :func:`main` is the thin entry point
for ``spark-submit`` (``python -m assetgate.batch.job ...``, same flags as
``assetgate scan``). The output directory is written next to its final place and
renamed into it once complete: ``_SUCCESS`` is written last, so a killed run never
looks complete, and a rerun replaces the previous output.

Every line is read on its own with :func:`assetgate.inventory.read_records` (JSON Lines
of any format ``check`` reads, one record or list page per line); a pretty-printed
document spread over many lines is not reassembled (use ``check`` for those). The
report (the requested format, as ``check`` prints it) is rendered on the driver, so it
brings every verdict there; the Parquet outputs and counts do not.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
import uuid
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec
import structlog

from assetgate.batch.schema import (
    ASSET_COLUMNS,
    ERROR_COLUMNS,
    IGNORED_COLUMNS,
    OVERLAP_COLUMNS,
)
from assetgate.batch.transform import (
    ScanContext,
    file_key,
    judge_transform,
    overlaps_transform,
    settle_transform,
)
from assetgate.check import (
    Collector,
    ErrorEntry,
    InventoryInfo,
    Overlap,
    Report,
    Summary,
    inventory_digest,
)
from assetgate.gate import STATES, Mode, Verdict
from assetgate.inventory import Ignored
from assetgate.report import render

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pyspark.sql import DataFrame, SparkSession

    from assetgate.levels import Catalogue

__all__ = ["REPORT_FILES", "ScanError", "ScanResult", "build_session", "main", "scan"]

log = structlog.get_logger(__name__)

REPORT_FILES: Final = {
    "text": "report.txt",
    "json": "report.json",
    "markdown": "report.md",
    "sarif": "report.sarif",
    "junit": "report.xml",
}
QUIET: Final = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.log.level": "ERROR",
}
_GLOB: Final = frozenset("*?[")


class ScanError(Exception):
    """The scan cannot run or did not account for every line (nothing is committed)."""


class ScanResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a committed scan produced: the report and where it was written."""

    report: Report
    text: str
    out: str


def build_session(
    master: str | None = "local[*]", conf: Mapping[str, str] | None = None
) -> SparkSession:
    """A quiet session whose Python workers run this interpreter (assetgate installed).

    Args:
        master: ``local[*]``, ``spark://host:7077``...; ``None`` keeps what
            ``spark-submit`` chose.
        conf: extra Spark settings (they win over the quiet defaults).
    """
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    if master is not None and master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    log4j = resources.files("assetgate.batch") / "log4j2.properties"
    settings = {
        **QUIET,
        "spark.driver.extraJavaOptions": f"-Dlog4j.configurationFile=file:{log4j}",
        **(conf or {}),
    }
    builder = SparkSession.builder.appName("assetgate-scan")
    if master is not None:
        builder = builder.master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    session: SparkSession = builder.getOrCreate()
    return session


def resolve_inputs(
    inputs: Sequence[str],
) -> tuple[list[str], dict[str, tuple[str, int]]]:
    """Spark paths to read, and each local file's (name in sources, rank).

    Local globs and directories are expanded here (sorted; hidden and ``_`` files
    skipped, as Spark does), so that sources name files as given, as ``check`` does,
    and duplicates are resolved in argument order. Other URIs go to Spark unchanged.
    """
    paths: list[str] = []
    names: dict[str, tuple[str, int]] = {}
    missing: list[str] = []
    for item in inputs:
        scheme = item.partition("://")[0] if "://" in item else ""
        if scheme not in {"", "file"}:
            paths.append(item)
            continue
        local = file_key(item)
        if _GLOB & set(local):
            found = sorted(glob.glob(local))  # noqa: PTH207 (a pattern, not a path)
        elif Path(local).is_dir():
            found = sorted(
                str(Path(local) / p.name)
                for p in Path(local).iterdir()
                if p.is_file() and p.name[:1] not in {".", "_"}
            )
        else:
            found = [local] if Path(local).is_file() else []
        if not found:
            missing.append(item)
        for name in found:
            key = os.path.abspath(name)  # noqa: PTH100 (no symlink resolution, like Spark)
            if key not in names:
                names[key] = (name, len(names))
                paths.append(key)
    if missing:
        msg = f"inventory not found: {', '.join(map(repr, missing))}"
        raise ScanError(msg)
    return paths, names


def scan(
    spark: SparkSession,
    inputs: Sequence[str],
    out: str | os.PathLike[str],
    *,
    targets: Mapping[str, str],
    catalogue: Catalogue,
    mode: Mode = "cluster",
    fmt: str = "text",
) -> ScanResult:
    """Scan inventories and commit ``out`` atomically.

    Args:
        spark: the session (see :func:`build_session`).
        inputs: files, directories or globs (local), or URIs Spark reads.
        out: the output directory (a local or shared filesystem path).
        targets: cluster -> version, ``"*"`` the default (:func:`check.parse_targets`).
        catalogue: the level catalogue; pickled to the workers with the profiles.
        mode: ``single`` or ``cluster``.
        fmt: the report format (``text``, ``json``, ``markdown``, ``sarif``, ``junit``).

    Raises:
        ScanError: no input, an output directory that is not a scan's, or lines not
            accounted for.
    """
    from pyspark.sql import functions as F  # noqa: N812 (Spark's convention)

    final = Path(out).absolute()
    if final.exists() and any(final.iterdir()) and not (final / "_SUCCESS").exists():
        msg = f"output directory is not empty and not a scan's output: {str(final)!r}"
        raise ScanError(msg)
    paths, names = resolve_inputs(inputs)
    profiles = {c: catalogue.server(v) for c, v in targets.items()}
    ctx = ScanContext(profiles=profiles, mode=mode, catalogue=catalogue, files=names)
    tmp = final.with_name(f".{final.name}.tmp-{uuid.uuid4().hex[:12]}")
    tmp.mkdir(parents=True)
    try:
        raw = spark.read.option("lineSep", "\n").text(paths)
        lines = raw.select(
            F.col("value").cast("binary").alias("value"),
            F.col("_metadata.file_path").alias("_file_path"),
            F.col("_metadata.file_block_start").alias("_block_start"),
        )
        entries = _with_lines(lines.transform(judge_transform(ctx)), lines).persist()
        assets = entries.where(F.col("record") == "asset")
        verdicts = assets.transform(settle_transform(ctx)).persist()
        overlaps = verdicts.transform(overlaps_transform()).persist()
        _write(verdicts, entries, overlaps, tmp)
        report = _report(verdicts, entries, overlaps, ctx, targets)
        _account(raw, entries, verdicts, overlaps, report.summary)
        text = render(report, fmt)
        (tmp / REPORT_FILES[fmt]).write_text(text, encoding="utf-8")
        _write_summary(tmp, report, verdicts)
        for frame in (entries, verdicts, overlaps):
            frame.unpersist()
        (tmp / "_SUCCESS").write_bytes(b"")  # last: only complete output has it
        _commit(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    summary = report.summary
    log.info(
        "scan_finished",
        out=str(final),
        records=summary.records,
        assets=summary.assets,
        errors=summary.errors,
        ignored=summary.ignored,
        overlaps=summary.overlaps,
    )
    return ScanResult(report=report, text=text, out=str(final))


def _with_lines(entries: DataFrame, lines: DataFrame) -> DataFrame:
    """Add ``line`` (1-based, in its file) and ``source`` (``file:line[#n]``).

    Rows of one split are contiguous and ordered, so a row's line is the number of
    rows in the earlier splits of its file (a prefix sum over ``_block_start``) plus
    its position in its split, plus one.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812

    per_block = lines.groupBy("_file_path", "_block_start").count()
    earlier = (
        Window.partitionBy("_file_path")
        .orderBy("_block_start")
        .rowsBetween(Window.unboundedPreceding, -1)
    )
    offsets = per_block.select(
        "_file_path",
        "_block_start",
        F.coalesce(F.sum("count").over(earlier), F.lit(0)).alias("_offset"),
    )
    line = F.col("_offset") + F.col("_row") + 1
    return (
        entries.join(F.broadcast(offsets), ["_file_path", "_block_start"])
        .withColumn("line", line)
        .withColumn(
            "source",
            F.concat(
                F.col("source_file"), F.lit(":"), line.cast("string"), F.col("_suffix")
            ),
        )
    )


_ENTRY_ORDER: Final = ("_rank", "source_file", "line", "_entry")
_VERDICT_ORDER: Final = (
    "_duplicate",
    "cluster",
    "account",
    "stream",
    "_position",
    *_ENTRY_ORDER,
)


def _write(
    verdicts: DataFrame, entries: DataFrame, overlaps: DataFrame, tmp: Path
) -> None:
    """The Parquet outputs, rows in a deterministic order, columns as in ``schema``."""
    from pyspark.sql import functions as F  # noqa: N812

    verdicts.orderBy(*_VERDICT_ORDER).select(*ASSET_COLUMNS).write.parquet(
        str(tmp / "assets")
    )
    for record, columns, folder in (
        ("error", ERROR_COLUMNS, "errors"),
        ("ignored", IGNORED_COLUMNS, "ignored"),
    ):
        chosen = entries.where(F.col("record") == record).orderBy(*_ENTRY_ORDER)
        chosen.select(*columns).write.parquet(str(tmp / folder))
    overlaps.orderBy("cluster", "account", "stream", "subject").select(
        *OVERLAP_COLUMNS
    ).write.parquet(str(tmp / "overlaps"))


def _report(
    verdicts: DataFrame,
    entries: DataFrame,
    overlaps: DataFrame,
    ctx: ScanContext,
    targets: Mapping[str, str],
) -> Report:
    """The report ``check`` builds for the same records (rows streamed to the driver)."""
    from pyspark.sql import functions as F  # noqa: N812

    decoder = msgspec.msgpack.Decoder(Verdict)
    settled: list[tuple[tuple[str, str, str, int], Verdict]] = []
    duplicates: list[tuple[tuple[int, str, int, int], Verdict]] = []
    hashes: list[bytes] = []
    for row in verdicts.select(*_VERDICT_ORDER, "_hash", "_verdict").toLocalIterator(
        prefetchPartitions=True
    ):
        verdict = decoder.decode(row["_verdict"])
        hashes.append(bytes(row["_hash"]))
        if row["_duplicate"]:
            duplicates.append(
                (
                    (row["_rank"], row["source_file"], row["line"], row["_entry"]),
                    verdict,
                )
            )
        else:
            key = (row["cluster"], row["account"], row["stream"], row["_position"])
            settled.append((key, verdict))
    assets = [v for _, v in sorted(settled, key=lambda i: i[0])]
    assets += [v for _, v in sorted(duplicates, key=lambda i: i[0])]
    errors = [
        ErrorEntry(source=r["source"], message=r["message"], retriable=r["retriable"])
        for r in _ordered(entries.where(F.col("record") == "error"))
    ]
    ignored = [
        Ignored(source=r["source"], reason=r["reason"])
        for r in _ordered(entries.where(F.col("record") == "ignored"))
    ]
    pairs = sorted(_pairs(overlaps), key=lambda o: (o.cluster, o.account, o.streams))
    counts = dict.fromkeys(STATES, 0)
    for verdict in assets:
        counts[verdict.state] += 1
    # an empty check report carries the target and catalogue exactly as check words them
    empty = Collector(dict(ctx.profiles), ctx.mode, ctx.catalogue).report(
        dict(targets), []
    )
    return msgspec.structs.replace(
        empty,
        inventory=InventoryInfo(digest=inventory_digest(hashes)),
        summary=Summary(
            records=len(assets) + len(errors) + len(ignored),
            assets=len(assets),
            errors=len(errors),
            ignored=len(ignored),
            overlaps=len(pairs),
            accepted=0,
            **counts,
        ),
        assets=assets,
        overlaps=pairs,
        errors=errors,
        ignored=ignored,
    )


def _ordered(frame: DataFrame) -> list[dict[str, Any]]:
    rows = [
        r.asDict()
        for r in frame.select(
            *_ENTRY_ORDER, "source", "message", "retriable", "reason"
        ).toLocalIterator(prefetchPartitions=True)
    ]
    return sorted(rows, key=lambda r: tuple(r[c] for c in _ENTRY_ORDER))


def _pairs(overlaps: DataFrame) -> list[Overlap]:
    """``check``'s one-row-per-pair overlaps, from the grouped output rows."""
    out: list[Overlap] = []
    for row in overlaps.toLocalIterator(prefetchPartitions=True):
        hub = (row["stream"], row["subject"], bool(row["offline"]))
        for other in row["overlaps"]:
            a, b = sorted(
                [hub, (other["stream"], other["subject"], bool(other["offline"]))]
            )
            out.append(
                Overlap(
                    cluster=row["cluster"],
                    account=row["account"],
                    streams=(a[0], b[0]),
                    subjects=(a[1], b[1]),
                    offline=tuple(side[0] for side in (a, b) if side[2]),
                )
            )
    return out


def _account(
    raw: DataFrame,
    entries: DataFrame,
    verdicts: DataFrame,
    overlaps: DataFrame,
    summary: Summary,
) -> None:
    """Check, with Spark's own counts, that every line and record is accounted for."""
    from pyspark.sql import functions as F  # noqa: N812

    nonblank = raw.where(
        F.length(F.btrim(F.col("value"), F.lit(" \t\r\n"))) > 0
    ).count()
    lines = entries.select("_file_path", "line").distinct().count()
    kinds = {
        r["record"]: r["count"]
        for r in entries.groupBy("record")
        .count()
        .toLocalIterator(prefetchPartitions=True)
    }
    pairs = overlaps.agg(F.sum("pairs").alias("n")).first()
    counted = {
        "lines": lines,
        "records": sum(kinds.values()),
        "assets": verdicts.count(),
        "errors": kinds.get("error", 0),
        "ignored": kinds.get("ignored", 0),
        "overlaps": int((pairs["n"] if pairs is not None else 0) or 0),
    }
    expected = {
        "lines": nonblank,
        "records": summary.records,
        "assets": kinds.get("asset", 0),
        "errors": summary.errors,
        "ignored": summary.ignored,
        "overlaps": summary.overlaps,
    }
    if counted != expected or summary.assets != counted["assets"]:
        msg = f"lines or records not accounted for: counted {counted}, expected {expected}"
        raise ScanError(msg)


def _write_summary(tmp: Path, report: Report, verdicts: DataFrame) -> None:
    """``summary.json`` (check's summary, plus counts per cluster/account/state) and ``.md``."""
    cells: defaultdict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(STATES, 0)
    )
    grouped = verdicts.groupBy("cluster", "account", "state").count()
    for row in grouped.toLocalIterator(prefetchPartitions=True):
        cells[(row["cluster"], row["account"])][row["state"]] = row["count"]
    clusters: defaultdict[str, dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(STATES, 0)
    )
    for (cluster, _), counts in cells.items():
        for state, n in counts.items():
            clusters[cluster][state] += n
    body = {
        "summary": msgspec.to_builtins(report.summary),
        "target": msgspec.to_builtins(report.target),
        "catalogue": msgspec.to_builtins(report.catalogue),
        "inventory": msgspec.to_builtins(report.inventory),
        "clusters": {c: clusters[c] for c in sorted(clusters)},
        "accounts": [
            {"cluster": c, "account": a, **cells[(c, a)]} for c, a in sorted(cells)
        ],
    }
    (tmp / "summary.json").write_text(
        json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    (tmp / "summary.md").write_text(_summary_markdown(body), encoding="utf-8")


def _summary_markdown(body: dict[str, Any]) -> str:
    from assetgate.report import escape_markdown as md

    summary = body["summary"]
    lines = [
        f"## assetgate scan: target {md(body['target']['version'])}",
        "",
        f"Catalogue `{body['catalogue']['digest'][:12]}`.",
        "",
        "| " + " | ".join(summary) + " |",
        "| " + " | ".join("---:" for _ in summary) + " |",
        "| " + " | ".join(str(v) for v in summary.values()) + " |",
        "",
        "| cluster | account | " + " | ".join(STATES) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in STATES) + " |",
    ]
    for row in body["accounts"]:
        cells = [md(row["cluster"]), md(row["account"]), *(str(row[s]) for s in STATES)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _commit(tmp: Path, final: Path) -> None:
    """Move the complete output into place, replacing a previous run's."""
    if not final.exists():
        tmp.rename(final)
        return
    old = final.with_name(f".{final.name}.old-{uuid.uuid4().hex[:12]}")
    final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    """``spark-submit`` entry point: the flags of ``assetgate scan``; returns the exit code."""
    import argparse

    from assetgate._cli_check import UsageError
    from assetgate._cli_scan import add_scan_arguments, run_scan
    from assetgate._logconfig import configure_logging
    from assetgate.errors import AssetgateError
    from assetgate.levels import load_catalogue

    parser = argparse.ArgumentParser(prog="python -m assetgate.batch.job")
    add_scan_arguments(parser, default_master=None)
    parser.add_argument("--levels", metavar="DIR", help="a level catalogue folder")
    args = parser.parse_args(argv)
    configure_logging(json=not sys.stderr.isatty())
    cat = load_catalogue(args.levels) if args.levels else load_catalogue()
    try:
        return run_scan(args, cat)
    except (UsageError, AssetgateError) as exc:
        print(f"assetgate: error: {exc}", file=sys.stderr)  # noqa: T201
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
