"""The scan job: read inventories with Spark, judge them with the core, commit a directory.

:func:`scan` runs on a session it is given (tests, notebooks); :func:`build_session`
builds the quiet session ``assetgate scan`` uses; :func:`main` is the thin entry point
for ``spark-submit`` (``python -m assetgate.batch.job ...``, same flags as
``assetgate scan``). The output directory is written next to its final place and
renamed into it once complete: ``_SUCCESS`` is written last, so a killed run never
looks complete, and a rerun replaces the previous output.

Every line is read on its own with :func:`assetgate.inventory.read.read_records` (JSON Lines
of any format ``check`` reads, one record or list page per line); a pretty-printed
document spread over many lines is not reassembled (use ``check`` for those). The
report (the requested format, as ``check`` prints it) is rendered on the driver, so it
brings every verdict there (as Arrow tables, one collect each); the driver then writes
the Parquet outputs from the same rows, in ``check``'s order. The judged entries and
the settled verdicts are cached once, so each input line is read and judged once.

Size: over the ~400-line guide because the Spark session, the job's stages, its output
commit and its failure handling are one job; the per-batch functions are in
:mod:`assetgate.batch.transform`.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import logging
import operator
import os
import re
import shutil
import socket
import sys
import threading
import time
import uuid
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec
import structlog

from assetgate.batch.schema import (
    ASSET,
    ERROR_COLUMNS,
    IGNORED_COLUMNS,
    OVERLAP_COLUMNS,
    arrow_schema,
)
from assetgate.batch.transform import (
    BLOCK,
    ScanContext,
    SplitCount,
    decode_column,
    file_key,
    judge_transform,
    settle_transform,
)
from assetgate.inventory.read import Ignored
from assetgate.judge.gate import STATES, Mode, Verdict
from assetgate.report.common import account_counts, fit_markdown, verdict_line
from assetgate.report.formats import FORMATS, render
from assetgate.run.check import (
    DEFAULT_FAIL_ON,
    ErrorEntry,
    Overlap,
    Parts,
    Report,
    Summary,
    assemble,
    count_findings,
    first_failing,
    parse_accept,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from assetgate.catalogue.levels import Catalogue

__all__ = [
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
        fail_on: what else fails the run (``check``'s ``--fail-on``, with its
            default): the summary counts the findings that fail it and names the first.

    Raises:
        ScanError: no input, an output directory that is not a scan's, or lines not
            accounted for.
        ValueError: a malformed acceptance (before Spark runs anything).
    """
    rules = [parse_accept(item) for item in accept]
    final = Path(out).absolute()
    if final.exists() and any(final.iterdir()) and not (final / "_SUCCESS").exists():
        msg = f"output directory is not empty and not a scan's output: {str(final)!r}"
        raise ScanError(msg)
    paths, names = resolve_inputs(inputs)
    profiles = {c: catalogue.server(v) for c, v in targets.items()}
    _remove_stale(final, time.time())
    tmp = final.with_name(f".{final.name}.tmp-{_owned()}")
    tmp.mkdir(parents=True)
    try:
        counts = _count_lines(spark, paths)
        ctx = ScanContext(
            profiles=profiles,
            mode=mode,
            catalogue=catalogue,
            files=names,
            offsets=_offsets(counts),
        )
        table = (
            _lines(spark, paths)
            .transform(judge_transform(ctx))
            .transform(settle_transform(ctx, _tasks(spark, len(counts))))
            .toArrow()
        )
        report, tables, blocks = _report(table, ctx, targets=targets, rules=rules)
        del table
        _account(counts, blocks, tables, report.summary)
        for folder, part in tables.items():
            _write_parquet(part, tmp / folder)
        text_report = render(report, fmt)
        (tmp / FORMATS[fmt].report_file).write_text(text_report, encoding="utf-8")
        _write_summary(tmp, report, fail_on)
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
        accepted=summary.accepted,
    )
    return ScanResult(report=report, text=text_report, out=str(final))


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


_ENTRY_ORDER: Final = ("_rank", "source_file", "line", "_entry")
_SETTLED_ORDER: Final = ("cluster", "account", "stream", "_position")
_ORDER_FIELDS: Final = (*_SETTLED_ORDER, *_ENTRY_ORDER, "_duplicate")


def _sorted(table: pa.Table, keys: Sequence[str]) -> pa.Table:
    """Rows in ``keys`` order (Arrow compares strings by UTF-8 bytes: code points, as Python)."""
    return table.sort_by([(key, "ascending") for key in keys])


def _check_order(settled: pa.Table) -> pa.Array:
    """Row indices of settled assets in ``check``'s order.

    Settled streams by key, each stream before its consumers in name order (the
    settle stage's ``_position``), then duplicate stream records in input order.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    keys = settled.select(list(_ORDER_FIELDS))
    keys = keys.append_column("_index", pa.array(range(keys.num_rows), pa.int64()))
    duplicate = keys.column("_duplicate").fill_null(fill_value=False)
    parts = [
        _sorted(keys.filter(pc.invert(duplicate)), _SETTLED_ORDER),
        _sorted(keys.filter(duplicate), _ENTRY_ORDER),
    ]
    return pa.concat_arrays(
        [chunk for part in parts for chunk in part.column("_index").chunks]
    )


def _asset_table(verdicts: Sequence[Verdict], ordered: pa.Table) -> pa.Table:
    """The ``assets/`` table: the verdicts' fields, then ``source_file`` and ``line``."""
    import pyarrow as pa

    schema = arrow_schema(ASSET)
    # one field at a time: no row tuples for the cyclic GC to track and walk
    arrays = [
        pa.array(
            map(operator.attrgetter(name), verdicts),
            schema.field(name).type,
            size=len(verdicts),
        )
        for name in Verdict.__struct_fields__
    ]
    arrays += [ordered.column("source_file"), ordered.column("line")]
    return pa.table(arrays, schema=schema)


def _report(
    table: pa.Table,
    ctx: ScanContext,
    *,
    targets: Mapping[str, str],
    rules: list[tuple[str, str]],
) -> tuple[Report, dict[str, pa.Table], list[SplitCount]]:
    """``check``'s report from the collected rows, the Parquet tables in its order, splits.

    ``table`` is the settle stage's output (``SCAN``). Assets come in ``check``'s order
    (settled streams by key, each stream before its consumers in name order, then
    duplicates in input order); the report is put together by ``check``'s own
    :func:`~assetgate.run.check.assemble` (cluster outcomes, acceptances, counts), and the
    ``assets/`` table is built from its verdicts. The third item is what the judge
    function saw in each file split.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    record = table.column("record")
    # the verdicts of the asset rows in collected order (nulls elsewhere take no bytes)
    collected = decode_column(
        table.column("_verdict"), msgspec.msgpack.Decoder(list[Verdict])
    )
    settled = table.select([*_ORDER_FIELDS, "_hash"]).filter(pc.equal(record, "asset"))
    order = _check_order(settled)
    assets = [collected[i] for i in order.to_pylist()]
    del collected
    ordered = settled.select(["source_file", "line", "_hash"]).take(order)
    del settled
    hashes: list[bytes] = ordered.column("_hash").to_pylist()
    others = _sorted(
        table.filter(pc.is_in(record, pa.array(["error", "ignored"]))), _ENTRY_ORDER
    )
    kinds = others.column("record").to_pylist()
    sources = others.column("source").to_pylist()
    errors = [
        ErrorEntry(source=s, message=m, retriable=r)
        for kind, s, m, r in zip(
            kinds,
            sources,
            others.column("message").to_pylist(),
            others.column("retriable").to_pylist(),
            strict=True,
        )
        if kind == "error"
    ]
    ignored = [
        Ignored(source=s, reason=r)
        for kind, s, r in zip(
            kinds, sources, others.column("reason").to_pylist(), strict=True
        )
        if kind == "ignored"
    ]
    hubs = _sorted(
        table.filter(pc.equal(record, "overlap")).select(list(OVERLAP_COLUMNS)),
        ("cluster", "account", "stream", "subject"),
    )
    blocks = decode_column(
        table.filter(pc.equal(record, BLOCK)).column("_counts"),
        msgspec.msgpack.Decoder(list[SplitCount]),
    )
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
    # the report's own verdicts (after cluster outcomes and acceptances), so the
    # Parquet output and the report agree
    out = _asset_table(report.assets, ordered)
    kind = others.column("record")
    tables = {
        "assets": out,
        "errors": others.filter(pc.equal(kind, "error")).select(list(ERROR_COLUMNS)),
        "ignored": others.filter(pc.equal(kind, "ignored")).select(
            list(IGNORED_COLUMNS)
        ),
        "overlaps": hubs,
    }
    return report, tables, blocks


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
    counts: Mapping[tuple[str, int], int],
    blocks: Sequence[SplitCount],
    tables: Mapping[str, pa.Table],
    summary: Summary,
) -> None:
    """Check that every line and record is accounted for before anything is committed.

    ``counts`` is Spark's own count of the lines of each file split (the line numbers
    rest on it); ``blocks`` is what the judge function saw in each split. The function
    must have been handed every line Spark counted, each of them blank or giving
    entries, and the Parquet tables and the report must hold every entry it handed on.
    """
    import pyarrow.compute as pc

    hubs = tables["overlaps"]
    pairs = pc.sum(hubs.column("pairs")).as_py() if hubs.num_rows else 0
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
    written = {
        "asset": (tables["assets"].num_rows, summary.assets),
        "error": (tables["errors"].num_rows, summary.errors),
        "ignored": (tables["ignored"].num_rows, summary.ignored),
    }
    entries = {kind: sum(getattr(b, kind) for b in blocks) for kind in written}
    for kind, (rows, reported) in written.items():
        if rows != entries[kind] or reported != entries[kind]:
            problems.append(
                f"{kind} entries: judged {entries[kind]}, written {rows}, "
                f"reported {reported}"
            )
    if summary.records != sum(entries.values()):
        problems.append(
            f"records: judged {sum(entries.values())}, reported {summary.records}"
        )
    if int(pairs or 0) != summary.overlaps:
        problems.append(f"overlaps: written {pairs}, reported {summary.overlaps}")
    if problems:
        msg = "lines or records not accounted for: " + "; ".join(problems)
        raise ScanError(msg)


def _write_summary(tmp: Path, report: Report, fail_on: Sequence[str]) -> None:
    """Write ``summary.json`` and ``summary.md``.

    They hold the verdict, how many findings fail the run and the first of them, the
    cluster outcomes, check's summary and the counts per cluster, account and state.
    """
    cells = {
        key: {state: counts[state] for state in STATES}
        for key, counts in account_counts(report)
    }
    clusters: defaultdict[str, dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(STATES, 0)
    )
    for (cluster, _), counts in cells.items():
        for state, n in counts.items():
            clusters[cluster][state] += n
    body = {
        "verdict": verdict_line(report),
        "failing": count_findings(report, fail_on),
        "main_finding": _main_finding(report, fail_on),
        "outcomes": msgspec.to_builtins(report.clusters),
        "summary": msgspec.to_builtins(report.summary),
        "target": msgspec.to_builtins(report.target),
        "catalogue": msgspec.to_builtins(report.catalogue),
        "inventory": msgspec.to_builtins(report.inventory),
        "clusters": {c: clusters[c] for c in sorted(clusters)},
        "accounts": [
            {"cluster": c, "account": a, **counts} for (c, a), counts in cells.items()
        ],
    }
    (tmp / "summary.json").write_text(
        json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    (tmp / "summary.md").write_text(_summary_markdown(body), encoding="utf-8")


def _main_finding(report: Report, fail_on: Sequence[str]) -> dict[str, str] | None:
    """The first finding that fails the run, with the server's words for it.

    Cluster outcomes come first, as in :func:`~assetgate.run.check.finding_rules`;
    ``None`` when nothing fails.
    """
    first = first_failing(report, fail_on)
    return None if first is None else {"finding": first[0], "reason": first[1]}


def _summary_markdown(body: dict[str, Any]) -> str:
    from assetgate.report.common import DIGEST_PREFIX, md_row
    from assetgate.report.common import escape_markdown as md

    summary = body["summary"]
    main = body["main_finding"]
    lines = [
        f"## assetgate scan: target {md(body['target']['version'])}",
        "",
        f"Catalogue `{body['catalogue']['digest'][:DIGEST_PREFIX]}`.",
        "",
        f"**Verdict:** {md(body['verdict'])}.",
        "",
        f"**Failing findings:** {body['failing']}"
        + (
            f"; the first: {md(main['finding'])}"
            + (f" ({md(main['reason'])})" if main["reason"] else "")
            if main
            else ""
        )
        + ".",
        "",
        md_row(list(summary)),
        md_row(["---:"] * len(summary)),
        md_row([str(v) for v in summary.values()]),
        "",
        md_row(["cluster", "account", *STATES]),
        md_row(["---", "---", *(["---:"] * len(STATES))]),
    ]
    for row in body["accounts"]:
        cells = [md(row["cluster"]), md(row["account"]), *(str(row[s]) for s in STATES)]
        lines.append(md_row(cells))
    if body["outcomes"]:
        lines += [
            "",
            "| cluster | target | outcome | reason | caused by |",
            "| --- | --- | --- | --- | --- |",
        ]
        for c in body["outcomes"]:
            cells = [
                md(c["cluster"]),
                md(c["target"]),
                c["outcome"],
                md(c.get("reason") or ""),
                md(", ".join(c.get("assets") or ())),
            ]
            lines.append(md_row(cells))
    return fit_markdown("\n".join(lines) + "\n")


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


_HOST: Final = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _owned() -> str:
    """A unique suffix naming this process (host hash, pid) as the folder's owner."""
    return f"{_HOST}-{os.getpid()}-{uuid.uuid4().hex[:12]}"


def _remove_stale(final: Path, started: float) -> None:
    """Remove the work folders of ``final`` that earlier runs left behind.

    A scan killed while it wrote (``.OUT.tmp-*``) or while it swapped outputs
    (``.OUT.old-*``) leaves its folder. One is stale when its owner ran on this host,
    is no longer alive, and the folder is older than this run; anything else (a live
    scan's, another host's on a shared filesystem, an unnamed owner's) is left alone.
    """
    pattern = re.compile(
        rf"\.{re.escape(final.name)}\.(?:tmp|old)-([0-9a-f]{{8}})-(\d+)-[0-9a-f]{{12}}"
    )
    if not final.parent.is_dir():
        return
    for entry in final.parent.iterdir():
        found = pattern.fullmatch(entry.name)
        if found is None or found.group(1) != _HOST or _alive(int(found.group(2))):
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_mtime < started:
                shutil.rmtree(entry)
                log.info("stale_output_removed", folder=str(entry))


def _alive(pid: int) -> bool:
    """Whether a process of this host has ``pid`` (one we may not signal counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _commit(tmp: Path, final: Path) -> None:
    """Move the complete output into place, replacing a previous run's."""
    if not final.exists():
        tmp.rename(final)
        return
    old = final.with_name(f".{final.name}.old-{_owned()}")
    final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)


if __name__ == "__main__":  # the spark-submit entry point: the command line's
    from assetgate.cli.scan import submit_main

    raise SystemExit(submit_main())
