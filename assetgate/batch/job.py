"""The scan job: read inventories with Spark, judge them with the core, commit a directory.

:func:`scan` runs on a session it is given (tests, notebooks); :func:`build_session`
builds the quiet session ``assetgate scan`` uses; the thin entry point for
``spark-submit`` is ``python -m assetgate.batch.job ...`` (same flags as
``assetgate scan``). The output is committed by :mod:`assetgate.batch.output`:
``_SUCCESS`` is written last, so a killed run never looks complete, and a rerun
replaces the previous output.

Every line is read on its own with :func:`assetgate.inventory.read.read_records` (JSON Lines
of any format ``check`` reads, one record or list page per line); a pretty-printed
document spread over many lines is not reassembled (use ``check`` for those). The
executors judge, settle, tally and write the Parquet tables; the driver holds only
aggregates (split counts, the verdicts that take a cluster down, the merged tally),
plus ``check``'s whole report when the inventory is small enough (``--report``).
The settled rows are kept on disk once, so each input line is read and judged once.

Size: over the ~400-line guide because the Spark session, the job's passes, its
accounting and its failure handling are one job; the per-batch functions are in
:mod:`assetgate.batch.transform` and :mod:`assetgate.batch.finish`.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import logging
import os
import sys
import threading
import time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

import msgspec
import structlog

from assetgate.batch.finish import (
    PLACE,
    Finish,
    asset_batches,
    asset_order,
    digest_batches,
    overlap_order,
    overlap_pairs,
    record_entry,
    record_order,
    tally_batches,
)
from assetgate.batch.output import Output, OutputError, open_output
from assetgate.batch.schema import (
    ASSET,
    DIGEST,
    ERROR_COLUMNS,
    IGNORED_COLUMNS,
    OVERLAP_COLUMNS,
    TALLY,
)
from assetgate.batch.transform import (
    BLOCK,
    TALLY_ROW,
    ScanContext,
    SplitCount,
    decode_column,
    file_key,
    judge_transform,
    settle_transform,
)
from assetgate.inventory.read import Ignored
from assetgate.judge.accept import apply_acceptances
from assetgate.judge.gate import Mode, Verdict
from assetgate.judge.outcomes import judge_clusters
from assetgate.report.formats import FORMATS, render
from assetgate.report.scan import (
    FULL_REPORT_LINES,
    REPORTS,
    SUMMARY_FORMATS,
    summary_json,
    summary_markdown,
)
from assetgate.run.aggregate import (
    Partial,
    RunSummary,
    Tally,
    causes_of,
    summarize,
    summary_of_report,
)
from assetgate.run.check import (
    DEFAULT_FAIL_ON,
    CatalogueInfo,
    ErrorEntry,
    InventoryInfo,
    Parts,
    Report,
    Summary,
    assemble,
    inventory_digest,
    parse_accept,
)
from assetgate.run.collect import target_info, target_profile

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from assetgate.catalogue.levels import Catalogue

__all__ = [
    "FULL_REPORT_LINES",
    "REPORTS",
    "ScanError",
    "ScanResult",
    "build_session",
    "scan",
    "spark_failure",
]

log = structlog.get_logger(__name__)

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
    # splits small enough that the last wave of judging tasks keeps every core busy
    "spark.sql.files.maxPartitionBytes": "32m",
}
# what a Spark Connect client may set: session settings, not the server's static ones
REMOTE: Final = {"spark.sql.execution.arrow.maxRecordsPerBatch": "10000"}
_GLOB: Final = frozenset("*?[")


class ScanError(Exception):
    """The scan cannot run or did not account for every line (nothing is committed)."""


class ScanResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a committed scan produced.

    Attributes:
        summary: the run in aggregates (``summary.json``), whatever its size.
        report: ``check``'s whole report (``--report full``, or ``auto`` on a small
            inventory); ``None`` when the driver kept only the summary.
        text: the report as printed (``report.SUFFIX``).
        out: where the output was committed.
    """

    summary: RunSummary
    report: Report | None
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
        # a JVM out of memory exits, which ends the scan with an error, rather than
        # living on with dead threads (a scan then hung for ever)
        "spark.driver.extraJavaOptions": (
            f"-Dlog4j.configurationFile=file:{log4j} -XX:+ExitOnOutOfMemoryError"
        ),
        "spark.executor.extraJavaOptions": "-XX:+ExitOnOutOfMemoryError",
        **(conf or {}),
    }
    builder = SparkSession.builder.appName("assetgate-scan")
    if master is not None:
        builder = builder.master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    with _banners_filtered():  # the JVM starts here, with our stderr as its own
        session: SparkSession = builder.getOrCreate()
    # py4j logs a traceback on the root logger when the JVM goes away mid-call; the
    # scan says so itself, in one line (spark_failure)
    logging.getLogger().addFilter(_not_py4j)
    return session


def _not_py4j(record: logging.LogRecord) -> bool:
    """Keep every log record but py4j's own."""
    return f"{os.sep}py4j{os.sep}" not in record.pathname


BANNERS: Final = (
    "WARNING: Using incubator modules:",
    "Setting default log level to ",
    "To adjust logging level use sc.setLogLevel(",
    "Setting Spark log level to ",
)
"""How the lines start that the JVM and Spark print on every start, whatever the log
configuration says (the JVM's incubator notice, Spark's REPL log-level hint)."""


@contextlib.contextmanager
def _banners_filtered() -> Iterator[None]:
    """Give processes started inside a standard error that drops :data:`BANNERS`.

    A thread forwards every other line to the real standard error for as long as
    they write to it (the JVM keeps it for its lifetime), so errors still show.
    This process's own standard error is given back on leaving.
    """
    try:
        sys.stderr.flush()
        real = os.dup(2)
    except (OSError, ValueError):  # no file descriptor 2: nothing to filter
        yield
        return
    read, write = os.pipe()
    os.dup2(write, 2)
    os.close(write)
    forward = os.dup(real)  # the thread's own: it closes it when the writers are gone
    threading.Thread(target=_forward, args=(read, forward), daemon=True).start()
    try:
        yield
    finally:
        os.dup2(real, 2)
        os.close(real)


def _forward(read: int, real: int) -> None:
    with os.fdopen(read, "rb") as lines, os.fdopen(real, "wb", buffering=0) as out:
        for line in lines:
            if not line.decode(errors="replace").startswith(BANNERS):
                out.write(line)


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
    fail_on: Sequence[str] = DEFAULT_FAIL_ON,
    report: str = "auto",
    full_report_lines: int = FULL_REPORT_LINES,
) -> ScanResult:
    """Scan inventories and commit ``out`` (see :mod:`assetgate.batch.output`).

    Args:
        spark: the session (see :func:`build_session`).
        inputs: files, directories or globs (local), or URIs Spark reads.
        out: the output directory: a path (committed by rename) or a URI of any
            Hadoop filesystem (``file://``, ``hdfs://``, ``s3a://``; classic sessions).
        targets: cluster -> version, ``"*"`` the default (:func:`check.parse_targets`).
        catalogue: the level catalogue; pickled to the workers with the profiles.
        mode: ``single`` or ``cluster``.
        fmt: the report format (a name of :data:`~assetgate.report.formats.FORMATS`;
            a summary-only report has only text, json and markdown).
        accept: ``RULE:ASSET`` exceptions, exactly as ``check``'s ``accept``.
        fail_on: what else fails the run (``check``'s ``--fail-on``, with its
            default): the summary counts the findings that fail it and names the first.
        report: one of :data:`REPORTS`.
        full_report_lines: the line count up to which ``auto`` means ``full``.

    Raises:
        ScanError: no input, an output directory that is not a scan's, a format a
            summary cannot give, or lines not accounted for (nothing is committed).
        ValueError: a malformed acceptance or report mode (before Spark runs anything).
    """
    rules = [parse_accept(item) for item in accept]
    if report not in REPORTS:
        msg = f"report: expected one of {', '.join(REPORTS)}, got {report!r}"
        raise ValueError(msg)
    if report == "summary":
        _summary_format(fmt, None)
    paths, names = resolve_inputs(inputs)
    try:
        output = open_output(spark, out)
    except OutputError as exc:
        raise ScanError(str(exc)) from None
    try:
        result = _run(
            spark,
            paths,
            output,
            _Job(
                ctx=ScanContext(
                    profiles={c: catalogue.server(v) for c, v in targets.items()},
                    mode=mode,
                    catalogue=catalogue,
                    files=names,
                    offsets={},
                    rules=rules,
                    fail_on=tuple(fail_on),
                ),
                targets=dict(targets),
                fmt=fmt,
                report=report,
                full_report_lines=full_report_lines,
            ),
        )
        output.commit()
    except BaseException:
        output.abort()
        raise
    summary = result.summary.summary
    log.info(
        "scan_finished",
        out=output.final,
        report="full" if result.report is not None else "summary",
        records=summary.records,
        assets=summary.assets,
        errors=summary.errors,
        ignored=summary.ignored,
        overlaps=summary.overlaps,
        accepted=summary.accepted,
    )
    return result


class _Job(msgspec.Struct, frozen=True, kw_only=True):
    """What one run was asked for (:func:`scan`'s arguments, resolved)."""

    ctx: ScanContext  # with the acceptances and --fail-on
    targets: dict[str, str]
    fmt: str
    report: str
    full_report_lines: int


def _summary_format(fmt: str, lines: int | None) -> None:
    """Refuse a format that lists every finding when only a summary is made."""
    if fmt in SUMMARY_FORMATS:
        return
    why = (
        "--report summary"
        if lines is None
        else f"this inventory has {lines} lines, over --report auto's full-report limit"
    )
    msg = (
        f"--format {fmt} lists every finding, which needs check's whole report on the "
        f"driver ({why}); use --report full (and give the driver memory: docs/spark.md) "
        f"or --format {', '.join(SUMMARY_FORMATS)}"
    )
    raise ScanError(msg)


def _run(
    spark: SparkSession, paths: list[str], output: Output, job: _Job
) -> ScanResult:
    """The passes of one scan (see docs/spark.md, "How it works"); nothing committed."""
    from pyspark import StorageLevel

    with _timed("count_lines"):
        counts = _count_lines(spark, paths)
    total = sum(counts.values())
    full = job.report == "full" or (
        job.report == "auto" and total <= job.full_report_lines
    )
    if not full:
        _summary_format(job.fmt, total)
    ctx = msgspec.structs.replace(job.ctx, offsets=_offsets(counts))
    settled = (
        _lines(spark, paths)
        .transform(judge_transform(ctx))
        .transform(settle_transform(ctx, _tasks(spark, len(counts))))
        .persist(StorageLevel.DISK_ONLY)
    )
    try:
        with _timed("judge_and_settle"):
            head = _head(settled)
        # the causes of every cluster's outcome, kept bounded by the tallies
        causing, cause_counts = causes_of(head.tallies.values())
        clusters = sorted(c for c in head.tallies if c is not None)
        profile_of = functools.partial(target_profile, ctx.profiles)
        outcomes, down = (
            judge_clusters(causing, profile_of, names=clusters)
            if ctx.mode == "cluster"
            else ([], {})
        )
        covered = apply_acceptances([], [], ctx.rules, outcomes)
        fin = ctx.finish(down)
        matched = Tally(ctx.fail_on, len(ctx.rules))
        matched.add_matched(covered.accepted)
        whole = matched.partial()
        for cluster, part in head.tallies.items():
            if cluster is None or cluster not in down:
                whole = whole.merge(part)
        if down:
            with _timed("tally_down_clusters"):
                whole = whole.merge(_tally_down(settled, ctx, fin))
        with _timed("digest"):
            digest, hashed = _digest(settled)
        summary = summarize(
            whole,
            outcomes=covered.clusters,
            causes=cause_counts,
            acceptances=ctx.rules,
            target=target_info(ctx.profiles, job.targets, ctx.mode),
            catalogue=CatalogueInfo(digest=ctx.catalogue.digest),
            inventory=InventoryInfo(digest=digest),
        )
        with _timed("write_tables"):
            written = _write_tables(spark, settled, fin, output, whole)
        held = None
        if full:
            with _timed("full_report"):
                held = _report(
                    settled.toArrow(), ctx, targets=job.targets, rules=ctx.rules
                )
            if summary_of_report(held, ctx.fail_on) != summary:
                msg = "lines or records not accounted for: the report and the aggregates differ"
                raise ScanError(msg)
        _account(counts, head.blocks, written, summary.summary, hashed)
    finally:
        settled.unpersist()
    text = (
        render(held, job.fmt)
        if held is not None
        else SUMMARY_FORMATS[job.fmt](summary, output.final)
    )
    output.write_text(FORMATS[job.fmt].report_file, text)
    output.write_text("summary.json", summary_json(summary))
    output.write_text("summary.md", summary_markdown(summary, output.final))
    return ScanResult(summary=summary, report=held, text=text, out=output.final)


@contextlib.contextmanager
def _timed(step: str) -> Iterator[None]:
    """Log how long a pass of the scan took (``scan_pass``, at debug level)."""
    start = time.perf_counter()
    yield
    log.debug("scan_pass", step=step, seconds=round(time.perf_counter() - start, 3))


class _Head(NamedTuple):
    """What the driver collects first (all of it small).

    Attributes:
        blocks: what the judge function saw in each file split.
        tallies: the settle stage's tallies merged per cluster (``None``: the
            overlaps, errors and ignored records), merged as they arrive so that the
            driver holds one per cluster, not one per partition.
    """

    blocks: list[SplitCount]
    tallies: dict[str | None, Partial]


def _head(settled: DataFrame) -> _Head:
    """Collect the split counts and the settle stage's tallies."""
    from pyspark.sql import functions as F  # noqa: N812

    table = (
        settled.filter(F.col("record").isin(BLOCK, TALLY_ROW))
        .select("record", "cluster", "_counts")
        .toArrow()
    )
    blocks: list[SplitCount] = []
    tallies: dict[str | None, Partial] = {}
    for kind, cluster, counted in zip(
        table.column("record").to_pylist(),
        table.column("cluster").to_pylist(),
        table.column("_counts").to_pylist(),
        strict=True,
    ):
        if kind == BLOCK:
            blocks.append(msgspec.msgpack.decode(counted, type=SplitCount))
            continue
        part = msgspec.msgpack.decode(counted, type=Partial)
        known = tallies.get(cluster)
        tallies[cluster] = part if known is None else known.merge(part)
    return _Head(blocks=blocks, tallies=tallies)


def _tally_down(settled: DataFrame, ctx: ScanContext, fin: Finish) -> Partial:
    """The assets of the down clusters, finished and tallied again where they lie."""
    parts = (
        _down_assets(settled, fin)
        .select("_verdict", *PLACE)
        .mapInArrow(functools.partial(tally_batches, ctx.profiles, fin), TALLY)
        .toArrow()
    )
    whole = Partial(matched=[(0, []) for _ in fin.rules])
    for part in decode_column(
        parts.column("_partial"), msgspec.msgpack.Decoder(list[Partial])
    ):
        whole = whole.merge(part)
    return whole


def _down_assets(settled: DataFrame, fin: Finish) -> DataFrame:
    """The settled asset rows of the clusters ``fin`` takes down."""
    from pyspark.sql import functions as F  # noqa: N812

    return settled.filter(
        (F.col("record") == "asset") & F.col("cluster").isin(*sorted(fin.down))
    )


def _digest(settled: DataFrame) -> tuple[str, int]:
    """The inventory digest: every asset's hash, sorted by Spark, hashed in one task."""
    from pyspark.sql import functions as F  # noqa: N812

    rows = (
        settled.filter(F.col("record") == "asset")
        .select("_hash")
        .repartition(1)
        .sortWithinPartitions("_hash")
        .mapInArrow(digest_batches, DIGEST)
        .collect()
    )
    if not rows:  # no partition at all: the digest of no hash
        return inventory_digest([]), 0
    return str(rows[0]["digest"]), int(rows[0]["hashes"])


def _write_tables(
    spark: SparkSession, settled: DataFrame, fin: Finish, output: Output, whole: Partial
) -> dict[str, int]:
    """Write the Parquet tables from the executors; what was written, read back.

    ``assets`` and ``overlaps`` are partitioned by cluster. A table with no row is
    written unpartitioned, so that it still has a file with its schema.
    """
    from pyspark.sql import functions as F  # noqa: N812

    record = F.col("record")
    # the settle stage finished every asset as if its cluster were up
    assets = settled.filter(record == "asset")
    if fin.down:
        assets = assets.filter(~F.col("cluster").isin(*sorted(fin.down)))
    assets = assets.select(*ASSET.names)
    if fin.down:
        again = (
            _down_assets(settled, fin)
            .select("_verdict", "source_file", "line")
            .mapInArrow(functools.partial(asset_batches, fin), ASSET)
        )
        assets = assets.unionByName(again)
    # each table, and whether it is partitioned by cluster (not when it has no row)
    tables = {
        "assets": (assets, whole.assets > 0),
        "errors": (settled.filter(record == "error").select(*ERROR_COLUMNS), False),
        "ignored": (
            settled.filter(record == "ignored").select(*IGNORED_COLUMNS),
            False,
        ),
        "overlaps": (
            settled.filter(record == "overlap").select(*OVERLAP_COLUMNS),
            whole.overlaps > 0,
        ),
    }
    written: dict[str, int] = {}
    for name, (frame, by_cluster) in tables.items():
        start = time.perf_counter()
        writer = frame.write.mode("overwrite")
        if by_cluster:
            writer = writer.partitionBy("cluster")
        writer.parquet(output.table(name))
        back = spark.read.parquet(output.table(name))
        written[name] = back.count()
        if name == "overlaps":
            pairs = back.agg(F.sum("pairs")).collect()[0][0]
            written["pairs"] = int(pairs or 0)
        log.debug(
            "scan_table", table=name, seconds=round(time.perf_counter() - start, 3)
        )
    return written


def _tasks(spark: SparkSession, splits: int) -> int:
    """Python tasks per grouped stage: one per file split, at most the shuffle setting."""
    setting = spark.conf.get("spark.sql.shuffle.partitions") or "200"
    return max(1, min(splits, int(setting)))


def _count_lines(spark: SparkSession, paths: list[str]) -> dict[tuple[str, int], int]:
    """Spark's count of the lines of each file split, before any line is judged.

    A pass of the JVM alone (no Python). The judging pass reads the same paths with
    the same settings, so it gets the same splits; the job checks that it did.
    """
    grouped = _lines(spark, paths).groupBy("_file_path", "_block_start").count()
    return {
        (row["_file_path"], row["_block_start"]): row["count"]
        for row in grouped.collect()
    }


def _lines(spark: SparkSession, paths: list[str]) -> DataFrame:
    """The inventory lines (``value``) with their file split, split at newlines only."""
    from pyspark.sql import functions as F  # noqa: N812

    return (
        spark.read.option("lineSep", "\n")
        .text(paths)
        .select(
            "value",
            F.col("_metadata.file_path").alias("_file_path"),
            F.col("_metadata.file_block_start").alias("_block_start"),
        )
    )


def _offsets(counts: Mapping[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    """Each split's line offset: the lines of the earlier splits of its file."""
    offsets: dict[tuple[str, int], int] = {}
    earlier: dict[str, int] = {}
    for path, start in sorted(counts):
        offsets[(path, start)] = earlier.get(path, 0)
        earlier[path] = offsets[(path, start)] + counts[(path, start)]
    return offsets


def _report(
    table: pa.Table,
    ctx: ScanContext,
    *,
    targets: Mapping[str, str],
    rules: list[tuple[str, str]],
) -> Report:
    """``check``'s report from the collected rows (``--report full``).

    ``table`` is the settle stage's output (``SCAN``). Assets come in ``check``'s order
    (settled streams by key, each stream before its consumers in name order, then
    duplicates in input order); the report is put together by ``check``'s own
    :func:`~assetgate.run.check.assemble` (cluster outcomes, acceptances, counts).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    record = table.column("record")
    # the verdicts of the asset rows in collected order (nulls elsewhere take no bytes)
    collected = decode_column(
        table.column("_verdict"), msgspec.msgpack.Decoder(list[Verdict])
    )
    settled = table.filter(pc.equal(record, "asset"))
    places = zip(*(settled.column(name).to_pylist() for name in PLACE), strict=True)
    order = [i for _, i in sorted((asset_order(p), i) for i, p in enumerate(places))]
    assets = [collected[i] for i in order]
    del collected
    hashes: list[bytes] = (
        settled.column("_hash").take(pa.array(order, pa.int64())).to_pylist()
    )
    del settled
    entries = sorted(
        table.filter(pc.is_in(record, pa.array(["error", "ignored"]))).to_pylist(),
        key=record_order,
    )
    made = [record_entry(e) for e in entries]
    errors = [e for e in made if isinstance(e, ErrorEntry)]
    ignored = [e for e in made if isinstance(e, Ignored)]
    hubs = table.filter(pc.equal(record, "overlap")).select(list(OVERLAP_COLUMNS))
    pairs = sorted(
        (pair for row in hubs.to_pylist() for pair in overlap_pairs(row)),
        key=overlap_order,
    )
    # check's own assembly: whole-cluster outcomes, acceptances, counts, target info
    return assemble(
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


def _account(
    counts: Mapping[tuple[str, int], int],
    blocks: Sequence[SplitCount],
    written: Mapping[str, int],
    summary: Summary,
    hashed: int,
) -> None:
    """Check that every line and record is accounted for before anything is committed.

    ``counts`` is Spark's own count of the lines of each file split (the line numbers
    rest on it); ``blocks`` is what the judge function saw in each split; ``written``
    the rows of each table as read back (and ``pairs``, the overlap pairs they hold);
    ``hashed`` the asset hashes in the inventory digest. The function must have been
    handed every line Spark counted, each of them blank or giving entries, and the
    tables, the summary and the digest must hold every entry it handed on.
    """
    problems = []
    seen = {(block.path, block.start): block.rows for block in blocks}
    if len(seen) != len(blocks) or seen != dict(counts):
        problems.append(
            f"lines per file split: judged {sorted(seen.items())}, "
            f"Spark counted {sorted(counts.items())}"
        )
    silent = sum(b.rows - b.blank - b.lines for b in blocks)
    if silent:
        problems.append(f"{silent} non-blank lines gave no entry")
    tables = {
        "asset": (written["assets"], summary.assets),
        "error": (written["errors"], summary.errors),
        "ignored": (written["ignored"], summary.ignored),
    }
    entries = {kind: sum(getattr(b, kind) for b in blocks) for kind in tables}
    for kind, (rows, reported) in tables.items():
        if rows != entries[kind] or reported != entries[kind]:
            problems.append(
                f"{kind} entries: judged {entries[kind]}, written {rows}, "
                f"reported {reported}"
            )
    if hashed != entries["asset"]:
        problems.append(f"asset hashes: judged {entries['asset']}, digested {hashed}")
    if summary.records != sum(entries.values()):
        problems.append(
            f"records: judged {sum(entries.values())}, reported {summary.records}"
        )
    if written["pairs"] != summary.overlaps:
        problems.append(
            f"overlaps: written {written['pairs']}, reported {summary.overlaps}"
        )
    if problems:
        msg = "lines or records not accounted for: " + "; ".join(problems)
        raise ScanError(msg)


def spark_failure(exc: BaseException) -> str | None:
    """What to tell the user when Spark failed the job or its JVM is gone, else ``None``.

    A failed job (a task that kept failing, an executor lost) raises the JVM's
    exception through py4j; a driver JVM that exits (out of memory, killed) breaks
    the py4j connection. ``scan`` ends with exit 2 and this one line for both.
    """
    from py4j.protocol import Py4JError, Py4JJavaError
    from pyspark.errors import PySparkException

    if isinstance(exc, ConnectionError) or (
        isinstance(exc, Py4JError) and not isinstance(exc, Py4JJavaError)
    ):  # not an exception the JVM threw: the connection to it broke
        return (
            "the scan's Spark JVM stopped before the job ended (out of memory or "
            "killed; docs/spark.md says how to give the driver more memory)"
        )
    if isinstance(exc, Py4JJavaError | PySparkException):
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        head = next((line for line in lines if "Exception" in line), "")
        return f"the Spark job failed: {(head or (lines or [''])[0])[:_SHOWN]}"
    return None


_SHOWN: Final = 500  # characters of the JVM's exception line shown


if __name__ == "__main__":  # the spark-submit entry point: the command line's
    from assetgate.cli.scan import submit_main

    raise SystemExit(submit_main())
