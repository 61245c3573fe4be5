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
brings every verdict there (as Arrow tables, one collect each); the driver then writes
the Parquet outputs from the same rows, in ``check``'s order. The judged entries and
the settled verdicts are cached once, so each input line is read and judged once.
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
    BLOCK,
    ScanContext,
    file_key,
    judge_transform,
    overlaps_transform,
    settle_transform,
)
from assetgate.check import (
    ErrorEntry,
    Overlap,
    Parts,
    Report,
    Summary,
    assemble,
    parse_accept,
)
from assetgate.gate import STATES, Mode, Verdict
from assetgate.inventory import Ignored
from assetgate.report import render

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import pyarrow as pa
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
# Python workers live for the session (the catalogue and decoders are built once per
# worker, not per task) and get batches large enough to amortise the Arrow hand-off.
FAST: Final = {
    "spark.python.worker.reuse": "true",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "10000",
}
# what a Spark Connect client may set: session settings, not the server's static ones
REMOTE: Final = {"spark.sql.execution.arrow.maxRecordsPerBatch": "10000"}
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
            ``spark-submit`` chose; ``sc://host:15002`` connects to a Spark Connect
            server (its Python workers are the server's: assetgate must be installed
            there, and only the session settings of ``conf`` and the Arrow batch size
            are set from here).
        conf: extra Spark settings (they win over the quiet defaults).
    """
    from pyspark.sql import SparkSession

    if master is not None and master.startswith("sc://"):
        remote = SparkSession.builder.remote(master)
        for key, value in {**REMOTE, **(conf or {})}.items():
            remote = remote.config(key, value)
        connected: SparkSession = remote.getOrCreate()
        return connected
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    if master is not None and master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    log4j = resources.files("assetgate.batch") / "log4j2.properties"
    settings = {
        **QUIET,
        **FAST,
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
    accept: Sequence[str] = (),
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
        accept: ``RULE:ASSET`` exceptions, exactly as ``check``'s ``accept``.

    Raises:
        ScanError: no input, an output directory that is not a scan's, or lines not
            accounted for.
        ValueError: a malformed acceptance (before Spark runs anything).
    """
    from pyspark.sql import Observation
    from pyspark.sql import functions as F  # noqa: N812 (Spark's convention)

    rules = [parse_accept(item) for item in accept]
    final = Path(out).absolute()
    if final.exists() and any(final.iterdir()) and not (final / "_SUCCESS").exists():
        msg = f"output directory is not empty and not a scan's output: {str(final)!r}"
        raise ScanError(msg)
    paths, names = resolve_inputs(inputs)
    profiles = {c: catalogue.server(v) for c, v in targets.items()}
    ctx = ScanContext(profiles=profiles, mode=mode, catalogue=catalogue, files=names)
    tmp = final.with_name(f".{final.name}.tmp-{uuid.uuid4().hex[:12]}")
    tmp.mkdir(parents=True)
    cached: list[DataFrame] = []
    try:
        # Spark's own count of the lines read, taken in the same pass as the judging
        read = Observation(f"assetgate-lines-{uuid.uuid4().hex[:12]}")
        text = F.length(F.btrim(F.col("value"), F.lit(" \t\r\n"))) > 0
        lines = (
            spark.read.option("lineSep", "\n")
            .text(paths)
            .observe(
                read,
                F.count(F.lit(1)).alias("lines"),
                F.coalesce(F.sum(text.cast("long")), F.lit(0)).alias("nonblank"),
            )
            .select(
                F.col("value").cast("binary").alias("value"),
                F.col("_metadata.file_path").alias("_file_path"),
                F.col("_metadata.file_block_start").alias("_block_start"),
            )
        )
        judged = lines.transform(judge_transform(ctx)).persist()
        cached.append(judged)
        tally = _tally(judged)  # runs the judging, once
        entries = _with_lines(spark, judged, tally.offsets)
        assets = entries.where(F.col("record") == "asset")
        tasks = _tasks(spark, len(tally.offsets))
        verdicts = assets.transform(settle_transform(ctx, tasks)).persist()
        cached.append(verdicts)
        settled = verdicts.select(*_VERDICT_FIELDS).toArrow()
        overlaps = verdicts.transform(overlaps_transform(tasks)).toArrow()
        others = (
            entries.where(F.col("record").isin("error", "ignored"))
            .select(*_ENTRY_FIELDS)
            .toArrow()
        )
        report, tables = _report(
            settled, others, overlaps, ctx, targets=targets, rules=rules
        )
        _account(read.get, tally, settled, overlaps, report.summary)
        for folder, table in tables.items():
            _write_parquet(table, tmp / folder)
        text_report = render(report, fmt)
        (tmp / REPORT_FILES[fmt]).write_text(text_report, encoding="utf-8")
        _write_summary(tmp, report)
        (tmp / "_SUCCESS").write_bytes(b"")  # last: only complete output has it
        _commit(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        for frame in cached:
            frame.unpersist()
    summary = report.summary
    log.info(
        "scan_finished",
        out=str(final),
        records=summary.records,
        assets=summary.assets,
        errors=summary.errors,
        ignored=summary.ignored,
        overlaps=summary.overlaps,
        accepted=summary.accepted,
    )
    return ScanResult(report=report, text=text_report, out=str(final))


def _tasks(spark: SparkSession, splits: int) -> int:
    """Python tasks per grouped stage: one per file split, at most the shuffle setting."""
    setting = spark.conf.get("spark.sql.shuffle.partitions") or "200"
    return max(1, min(splits, int(setting)))


class _Tally(msgspec.Struct, frozen=True, kw_only=True):
    """Spark's counts of the judged entries, and the line offset of each file split."""

    rows: int  # rows the judge function saw (blank lines included)
    lines: int  # lines that produced entries
    kinds: dict[str, int]  # entries per record kind (asset, error, ignored)
    offsets: list[tuple[str, int, int]]  # (file, split start, rows in earlier splits)


def _tally(judged: DataFrame) -> _Tally:
    """One aggregation over the judged entries: counts, and rows per file split."""
    from pyspark.sql import functions as F  # noqa: N812

    grouped = judged.groupBy("record", "_file_path", "_block_start").agg(
        F.count(F.lit(1)).alias("entries"),
        F.count_if(F.col("_entry") == 0).alias("lines"),
        F.max("_row").alias("rows"),
    )
    kinds: dict[str, int] = {}
    lines = 0
    blocks: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for row in grouped.collect():
        if row["record"] == BLOCK:
            blocks[row["_file_path"]].append((row["_block_start"], row["rows"]))
        else:
            kinds[row["record"]] = kinds.get(row["record"], 0) + row["entries"]
            lines += row["lines"]
    offsets: list[tuple[str, int, int]] = []
    for path, splits in blocks.items():
        earlier = 0
        for start, rows in sorted(splits):
            offsets.append((path, start, earlier))
            earlier += rows
    return _Tally(
        rows=sum(rows for splits in blocks.values() for _, rows in splits),
        lines=lines,
        kinds=kinds,
        offsets=offsets,
    )


def _with_lines(
    spark: SparkSession, judged: DataFrame, offsets: list[tuple[str, int, int]]
) -> DataFrame:
    """The entries with ``line`` (1-based, in its file) and ``source`` (``file:line[#n]``).

    Rows of one split are contiguous and ordered, so a row's line is the number of
    rows in the earlier splits of its file (``offsets``, from the judge function's
    per-split counts) plus its position in its split, plus one.
    """
    from pyspark.sql import functions as F  # noqa: N812

    table = spark.createDataFrame(
        offsets, "_file_path string, _block_start long, _offset long"
    )
    line = F.col("_offset") + F.col("_row") + 1
    return (
        judged.where(F.col("record") != BLOCK)
        .join(F.broadcast(table), ["_file_path", "_block_start"])
        .withColumn("line", line)
        .withColumn(
            "source",
            F.concat(
                F.col("source_file"), F.lit(":"), line.cast("string"), F.col("_suffix")
            ),
        )
    )


_ENTRY_ORDER: Final = ("_rank", "source_file", "line", "_entry")
_SETTLED_ORDER: Final = ("cluster", "account", "stream", "_position")
_VERDICT_FIELDS: Final = (
    *ASSET_COLUMNS,
    *(
        c
        for c in ("_duplicate", "_position", "_rank", "_entry")
        if c not in ASSET_COLUMNS
    ),
    "_hash",
    "_verdict",
)
_ENTRY_FIELDS: Final = (
    "record",
    *_ENTRY_ORDER,
    "source",
    "message",
    "retriable",
    "reason",
)


def _sorted(table: pa.Table, keys: Sequence[str]) -> pa.Table:
    """Rows in ``keys`` order (Arrow compares strings by UTF-8 bytes: code points, as Python)."""
    return table.sort_by([(key, "ascending") for key in keys])


def _report(
    settled: pa.Table,
    others: pa.Table,
    overlaps: pa.Table,
    ctx: ScanContext,
    *,
    targets: Mapping[str, str],
    rules: list[tuple[str, str]],
) -> tuple[Report, dict[str, pa.Table]]:
    """``check``'s report from the collected rows, and the Parquet tables in its order.

    Assets come in ``check``'s order (settled streams by key, each stream before its
    consumers in name order, then duplicates in input order); the report is put
    together by ``check``'s own :func:`~assetgate.check.assemble` (cluster outcomes,
    acceptances, counts), and the columns it may change are rewritten from it.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    duplicate = settled.column("_duplicate").fill_null(fill_value=False)
    ordered = pa.concat_tables(
        [
            _sorted(settled.filter(pc.invert(duplicate)), _SETTLED_ORDER),
            _sorted(settled.filter(duplicate), _ENTRY_ORDER),
        ]
    )
    decoder = msgspec.msgpack.Decoder(Verdict)
    assets = [decoder.decode(item) for item in ordered.column("_verdict").to_pylist()]
    hashes: list[bytes] = ordered.column("_hash").to_pylist()
    others = _sorted(others, _ENTRY_ORDER)
    kinds = others.column("record").to_pylist()
    errors = [
        ErrorEntry(source=s, message=m, retriable=r)
        for kind, s, m, r in zip(
            kinds,
            others.column("source").to_pylist(),
            others.column("message").to_pylist(),
            others.column("retriable").to_pylist(),
            strict=True,
        )
        if kind == "error"
    ]
    ignored = [
        Ignored(source=s, reason=r)
        for kind, s, r in zip(
            kinds,
            others.column("source").to_pylist(),
            others.column("reason").to_pylist(),
            strict=True,
        )
        if kind == "ignored"
    ]
    hubs = _sorted(overlaps, ("cluster", "account", "stream", "subject"))
    pairs = sorted(_pairs(hubs), key=lambda o: (o.cluster, o.account, o.streams))
    # check's own assembly: whole-cluster outcomes, acceptances, counts, target info
    report = assemble(
        Parts(
            records=len(assets) + len(errors) + len(ignored),
            verdicts=assets,
            overlaps=pairs,
            errors=errors,
            ignored=ignored,
            hashes=hashes,
        ),
        dict(ctx.profiles),
        ctx.mode,
        ctx.catalogue,
        targets=dict(targets),
        rules=rules,
    )
    assets = report.assets
    table = ordered.select(list(ASSET_COLUMNS))
    # columns check's functions may have changed after settling (same values as the
    # report's verdicts, so the Parquet output and the report agree)
    changed = ["accepted"] if rules else []
    if any(outcome.outcome != "ok" for outcome in report.clusters):
        changed += ["state", "reason", "dropped_fields", "own_state", "own_reason"]
    for name in changed:
        index = table.schema.get_field_index(name)
        values = [getattr(v, name) for v in assets]
        column = pa.array(
            [list(x) for x in values] if name == "dropped_fields" else values,
            table.schema.field(index).type,
        )
        table = table.set_column(index, name, column)
    kind = others.column("record")
    tables = {
        "assets": table,
        "errors": others.filter(pc.equal(kind, "error")).select(list(ERROR_COLUMNS)),
        "ignored": others.filter(pc.equal(kind, "ignored")).select(
            list(IGNORED_COLUMNS)
        ),
        "overlaps": hubs.select(list(OVERLAP_COLUMNS)),
    }
    return report, tables


def _write_parquet(table: pa.Table, folder: Path) -> None:
    """One Parquet file, rows in the table's order (Spark reads it like its own)."""
    import pyarrow.parquet as pq

    folder.mkdir()
    pq.write_table(table, folder / "part-00000.parquet")


def _pairs(hubs: pa.Table) -> list[Overlap]:
    """``check``'s one-row-per-pair overlaps, from the grouped output rows."""
    out: list[Overlap] = []
    for row in hubs.to_pylist():
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
    read: Mapping[str, Any],
    tally: _Tally,
    settled: pa.Table,
    overlaps: pa.Table,
    summary: Summary,
) -> None:
    """Check, with Spark's own counts, that every line and record is accounted for.

    ``read`` is Spark's count of the lines it read (observed in the judging pass);
    the judge function must have seen each of them, every non-blank one must have
    produced entries, and the report must hold every entry.
    """
    import pyarrow.compute as pc

    pairs = pc.sum(overlaps.column("pairs")).as_py() if overlaps.num_rows else 0
    counted = {
        "lines read": tally.rows,
        "non-blank lines": tally.lines,
        "records": sum(tally.kinds.values()),
        "assets": settled.num_rows,
        "errors": tally.kinds.get("error", 0),
        "ignored": tally.kinds.get("ignored", 0),
        "overlaps": int(pairs or 0),
    }
    expected = {
        "lines read": int(read.get("lines") or 0),
        "non-blank lines": int(read.get("nonblank") or 0),
        "records": summary.records,
        "assets": tally.kinds.get("asset", 0),
        "errors": summary.errors,
        "ignored": summary.ignored,
        "overlaps": summary.overlaps,
    }
    if counted != expected or summary.assets != counted["assets"]:
        msg = f"lines or records not accounted for: counted {counted}, expected {expected}"
        raise ScanError(msg)


def _write_summary(tmp: Path, report: Report) -> None:
    """``summary.json`` (check's summary, plus counts per cluster/account/state) and ``.md``."""
    cells: defaultdict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(STATES, 0)
    )
    for verdict in report.assets:
        cells[(verdict.cluster, verdict.account)][verdict.state] += 1
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
