"""Where a scan writes: a local folder committed by rename, or any Hadoop filesystem URI.

Both give the job the same four calls: :meth:`table` (where a Spark writer writes a
Parquet table), :meth:`write_text` (the summaries and the report, written by the
driver), :meth:`commit` (``_SUCCESS`` last) and :meth:`abort`.

- :class:`LocalOutput` (a path): everything is written to ``.OUT.tmp-<owner>`` next to
  ``OUT`` and renamed into place, so ``OUT`` is always a whole run's output; a failed
  run leaves the previous output as it was.
- :class:`HadoopOutput` (a URI: ``file://``, ``hdfs://``, ``s3a://``...): object stores
  have no atomic rename, so the run writes in place. It first removes ``_SUCCESS``,
  marks the folder as a scan's (``_assetgate``), removes the previous run's files,
  writes, and writes ``_SUCCESS`` last: a killed or failed run leaves a folder without
  ``_SUCCESS``, never one that looks complete. It needs a classic Spark session (the
  driver's JVM does the filesystem calls), not Spark Connect.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import socket
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import structlog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "MARKER",
    "HadoopOutput",
    "LocalOutput",
    "Output",
    "OutputError",
    "open_output",
]

log = structlog.get_logger(__name__)

SUCCESS: Final = "_SUCCESS"
MARKER: Final = "_assetgate"
"""The file that says a URI output folder is a scan's (kept; ``_SUCCESS`` says complete)."""


class OutputError(Exception):
    """The output cannot be written (not a scan's folder, no filesystem for it)."""


class Output(Protocol):
    """Where one run writes (see the module)."""

    final: str

    def table(self, name: str) -> str:
        """Where a Spark writer writes the table ``name``."""
        ...

    def write_text(self, name: str, text: str) -> None:
        """Write a small file (a summary, the report) from the driver."""
        ...

    def commit(self) -> None:
        """Write ``_SUCCESS`` last and put the output in place."""
        ...

    def abort(self) -> None:
        """Leave nothing that looks complete (the run failed)."""
        ...


def open_output(spark: SparkSession, out: str | os.PathLike[str]) -> Output:
    """The output of a run: :class:`HadoopOutput` for a URI, else :class:`LocalOutput`."""
    text = os.fspath(out)
    if "://" in text:
        return HadoopOutput(spark, text)
    return LocalOutput(Path(text))


class LocalOutput:
    """A local (or shared) folder, written next to its place and renamed into it."""

    def __init__(self, final: Path) -> None:
        """Refuse a folder that is not a scan's; make the work folder beside it."""
        final = final.absolute()
        if final.exists() and not final.is_dir():
            msg = f"output is a file, not a directory: {str(final)!r}"
            raise OutputError(msg)
        if final.exists() and any(final.iterdir()) and not (final / SUCCESS).exists():
            msg = (
                f"output directory is not empty and not a scan's output: {str(final)!r}"
            )
            raise OutputError(msg)
        _remove_stale(final, time.time())
        self.final = str(final)
        self._final = final
        self._tmp = final.with_name(f".{final.name}.tmp-{_owned()}")
        self._tmp.mkdir(parents=True)

    def table(self, name: str) -> str:
        """The table's folder in the work folder."""
        return str(self._tmp / name)

    def write_text(self, name: str, text: str) -> None:
        """Write a file of the work folder."""
        (self._tmp / name).write_text(text, encoding="utf-8")

    def commit(self) -> None:
        """``_SUCCESS``, then the work folder renamed into place (the old one removed)."""
        (self._tmp / SUCCESS).write_bytes(b"")  # last: only complete output has it
        if not self._final.exists():
            self._tmp.rename(self._final)
            return
        old = self._final.with_name(f".{self._final.name}.old-{_owned()}")
        self._final.rename(old)
        self._tmp.rename(self._final)
        shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        """Remove the work folder; the previous output stays as it was."""
        shutil.rmtree(self._tmp, ignore_errors=True)


class HadoopOutput:
    """A folder on any filesystem the Spark driver's Hadoop configuration reaches."""

    def __init__(self, spark: SparkSession, final: str) -> None:
        """Open the folder through the driver's JVM and clear the previous run's files."""
        jvm: Any = getattr(spark, "_jvm", None)
        context: Any = getattr(spark, "_jsc", None) or getattr(
            getattr(spark, "sparkContext", None), "_jsc", None
        )
        if jvm is None or context is None:
            msg = (
                f"output {final!r}: a URI output needs a classic Spark session; "
                "through Spark Connect, write to a path the client and the server share"
            )
            raise OutputError(msg)
        self.final = final
        self._jvm = jvm
        self._root = jvm.org.apache.hadoop.fs.Path(final)
        self._fs = self._root.getFileSystem(context.hadoopConfiguration())
        self._start()

    def _path(self, name: str) -> Any:  # noqa: ANN401 (a py4j proxy of a Hadoop Path)
        return self._jvm.org.apache.hadoop.fs.Path(self._root, name)

    def _start(self) -> None:
        fs = self._fs
        if fs.exists(self._root):
            names = {status.getPath().getName() for status in fs.listStatus(self._root)}
            if names and not names & {SUCCESS, MARKER}:
                msg = f"output directory is not empty and not a scan's output: {self.final!r}"
                raise OutputError(msg)
            # first: nothing looks complete (Java's delete(path, recursive))
            fs.delete(self._path(SUCCESS), False)  # noqa: FBT003
            self.write_text(MARKER, "")
            for name in names - {SUCCESS, MARKER}:
                fs.delete(self._path(name), True)  # noqa: FBT003
        else:
            fs.mkdirs(self._root)
            self.write_text(MARKER, "")

    def table(self, name: str) -> str:
        """The table's folder under the output URI."""
        return str(self._path(name).toString())

    def write_text(self, name: str, text: str) -> None:
        """Write (or replace) a file under the output URI."""
        stream = self._fs.create(self._path(name), True)  # noqa: FBT003 (overwrite)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def commit(self) -> None:
        """``_SUCCESS``, last."""
        self.write_text(SUCCESS, "")

    def abort(self) -> None:
        """Nothing to undo: the folder has no ``_SUCCESS``, so it does not look complete."""


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
