"""``assetgate validate``: its flags; would a release accept this create or update?"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, get_args

import msgspec

from assetgate.cli.common import (
    MODES,
    TEXT_OR_JSON,
    ExitCode,
    HelpFormatter,
    Subparsers,
    UsageError,
    catalogue,
    write_output,
)
from assetgate.decoding.goscan import scan
from assetgate.report.common import escape_terminal, pretty_json
from assetgate.requests.admission import Admission, admit
from assetgate.requests.validate import Validation, validate
from assetgate.wire import DEFAULT_ACCOUNT, AssetKind

if TYPE_CHECKING:
    import argparse

__all__ = ["MAX_INPUT_BYTES", "add_parser", "render_validation", "run"]

MAX_INPUT_BYTES: Final = 64 * 1024 * 1024


def add_parser(sub: Subparsers) -> None:
    """Register ``validate`` and its flags."""
    val = sub.add_parser(
        "validate",
        help="would server X accept this create/update request, and what would it store?",
        description=(
            "Decode a stream or consumer config exactly as the given nats-server version decodes "
            "an API request and predict its reply: accepted or the error it sends, the metadata it "
            "stores, unknown and silently dropped fields, and the earliest release that can honour "
            "the config. Exit 0: accepted with nothing dropped; 1: rejected or fields dropped; "
            "2: usage error or unreadable input."
        ),
        epilog=(
            "examples:\n"
            "  assetgate validate stream.json --kind stream --server 2.11.11\n"
            "  assetgate validate consumer.json --kind consumer --server 2.12.8 --format json\n"
            "  assetgate validate new.json --kind stream --server 2.12.8 --op update --existing old.json\n"
        ),
        formatter_class=HelpFormatter,
    )
    val.add_argument(
        "files",
        metavar="FILE",
        nargs="+",
        help="config files as JSON (several: one report each); - reads standard input",
    )
    val.add_argument("--kind", required=True, choices=get_args(AssetKind))
    val.add_argument(
        "--server",
        required=True,
        metavar="VERSION",
        help="nats-server version, e.g. 2.12.8",
    )
    val.add_argument("--op", choices=["create", "update"], default="create")
    val.add_argument(
        "--existing",
        metavar="FILE",
        help="the stored config of an asset with that name",
    )
    strictness = val.add_mutually_exclusive_group()
    strictness.add_argument(
        "--strict",
        dest="strict",
        action="store_true",
        default=None,
        help="the server runs with jetstream { strict: true }",
    )
    strictness.add_argument(
        "--no-strict",
        dest="strict",
        action="store_false",
        help="the server runs with jetstream { strict: false }",
    )
    val.add_argument(
        "--api-level-header",
        metavar="VALUE",
        help="simulate a Nats-Required-Api-Level request header",
    )
    val.add_argument(
        "--inventory",
        action="append",
        metavar="FILE",
        help="the assets the server already holds: also predict refusals for subject "
        "overlaps (400/10065) and offline streams or consumers (500/10194, 10195)",
    )
    val.add_argument(
        "--account",
        default=DEFAULT_ACCOUNT,
        help="the account of the request (with --inventory)",
    )
    val.add_argument(
        "--cluster",
        help="the cluster of the request (with --inventory; default: its only cluster)",
    )
    val.add_argument(
        "--stream", help="the stream of a consumer request (with --inventory)"
    )
    val.add_argument(
        "--mode",
        choices=MODES,
        default="cluster",
        help="single server or clustered: some config checks differ",
    )
    val.add_argument(
        "--stream-config",
        metavar="FILE",
        help="the stored config of a consumer's stream, for the consumer checks that "
        "need it (without it they are skipped and listed as assumed)",
    )
    val.add_argument(
        "--no-created-version",
        action="store_true",
        help="leave out the created-version metadata",
    )
    val.add_argument(
        "--format",
        choices=TEXT_OR_JSON,
        default="text",
    )
    val.add_argument(
        "--output", "-o", metavar="FILE", help="write the report here instead of stdout"
    )
    val.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``assetgate validate``; return the exit code (0 clean, 1 findings, 2 usage)."""
    cat = catalogue(args)
    cat.server(args.server)  # an unknown version is a usage error before reading
    existing = _read(args.existing) if args.existing else None
    stream_config = _read(args.stream_config) if args.stream_config else None
    inputs = [
        (path, _read(path)) for path in args.files
    ]  # unreadable input: exit 2, nothing written
    results: list[tuple[str, Validation]] = []
    admissions: dict[str, Admission] = {}
    for path, config in inputs:
        result = validate(
            config,
            kind=args.kind,
            server=args.server,
            op=args.op,
            existing=existing,
            strict=args.strict,
            api_level_header=args.api_level_header,
            created_version=not args.no_created_version,
            catalogue=cat,
            mode=args.mode,
            stream=stream_config,
        )
        results.append((path, result))
        if args.inventory:
            admissions[path] = _admit_or_usage(
                args.inventory,
                config,
                kind=args.kind,
                target=args.server,
                op=args.op,
                account=args.account,
                cluster=args.cluster,
                stream=args.stream,
                mode=args.mode,
                catalogue=cat,
            )
    if args.format == "json":
        items = [
            {
                "source": path,
                **msgspec.to_builtins(result),
                **(
                    {"admission": _admission_json(admissions[path])}
                    if path in admissions
                    else {}
                ),
            }
            for path, result in results
        ]
        if len(items) == 1:
            del items[0]["source"]
        payload: object = items[0] if len(items) == 1 else items
        write_output(args, pretty_json(payload))
    else:
        write_output(
            args,
            "".join(
                render_validation(result, source=path)
                + _render_admission(admissions.get(path))
                for path, result in results
            ),
        )
    unreadable = [path for path, config in inputs if not _is_json(config)]
    if (
        unreadable
    ):  # the server's reply is printed above; the input is the user's mistake
        names = ", ".join(map(repr, unreadable))
        print(f"assetgate: error: not a JSON document: {names}", file=sys.stderr)
        return ExitCode.USAGE
    clean = all(result.clean for _, result in results) and all(
        a.allowed for a in admissions.values()
    )
    return ExitCode.OK if clean else ExitCode.FINDINGS


def _is_json(data: bytes) -> bool:
    """Whether ``data`` is one JSON document as Go's scanner reads it (any content)."""
    return scan(data) is None


def _admit_or_usage(inventory: list[str], config: bytes, **options: Any) -> Admission:
    """:func:`admit`, with its caller mistakes (several clusters) as usage errors."""
    try:
        return admit(inventory, config, **options)
    except ValueError as exc:
        if type(exc) is not ValueError:
            raise
        raise UsageError(str(exc)) from None


def _admission_json(admission: Admission) -> dict[str, object]:
    return {
        "allowed": admission.allowed,
        "error": msgspec.to_builtins(admission.error),
        "conflicts": msgspec.to_builtins(admission.conflicts),
    }


def _render_admission(admission: Admission | None) -> str:
    if admission is None:
        return ""
    if admission.allowed:
        return "  with inventory:   allowed\n"
    error = admission.error
    head = f"{error.code}/{error.err_code} {error.description}" if error else "refused"
    lines = [f"  with inventory:   refused: {head}"]
    lines.extend(
        f"    overlaps {c.stream!r} ({c.subject} ~ {c.requested})"
        + (" [offline]" if c.offline else "")
        for c in admission.conflicts
    )
    return "\n".join(lines) + "\n"


def render_validation(result: Validation, *, source: str) -> str:
    """A terminal-readable report of one validation."""
    server = result.server
    level = "none" if server.api_level is None else str(server.api_level)
    mode = "strict" if server.strict else "lenient"
    lines = [
        f"{source}: {result.kind} {result.op} on nats-server {server.version} (API level {level}, {mode})"
    ]
    if result.accepted:
        verdict = (
            "accepted"
            if not result.dropped_fields
            else "accepted, fields silently dropped"
        )
        if result.lost_on_restart is not None:
            verdict += f", then lost at the next restart: {result.lost_on_restart}"
        lines.append(f"  verdict:          {verdict}")
    elif result.server_crash is not None:
        lines.append(f"  verdict:          the server crashes: {result.server_crash}")
    elif result.no_reply is not None:
        lines.append(f"  verdict:          no reply: {result.no_reply}")
    else:
        error = result.error
        assert error is not None  # noqa: S101 - a rejection always carries the reply
        lines.append(
            f"  verdict:          rejected: {error.code}/{error.err_code} {error.description}"
        )
        if result.check is not None:
            lines.append(f"  config check:     {result.check}")
    if result.unknown_fields:
        lines.append(f"  unknown fields:   {', '.join(result.unknown_fields)}")
    if result.dropped_fields:
        lines.append(f"  dropped fields:   {', '.join(result.dropped_fields)}")
    if result.accepted:
        lines.append(f"  required level:   {result.required_level}")
        lines.append(f"  stored metadata:  {_md(result.stamped_metadata)}")
        lines.append(f"  reply metadata:   {_md(result.response_metadata)}")
        if result.created_metadata:
            lines.append(f"  created version:  {_md(result.created_metadata)}")
    lines.extend(f"  assumed:          {text}" for text in result.assumed)
    lines.append(
        f"  min server:       {result.min_server_version or 'no known release'}"
    )
    # names come from the config: nothing in them may move the cursor or end a line
    return "\n".join(escape_terminal(line) for line in lines) + "\n"


def _md(metadata: dict[str, str] | None) -> str:
    if not metadata:
        return "(none)"
    return ", ".join(f"{key}={value!r}" for key, value in sorted(metadata.items()))


def _read(path: str) -> bytes:
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        else:
            with Path(path).open("rb") as handle:
                data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        msg = f"cannot read {path!r}: {exc.strerror or exc}"
        raise UsageError(msg) from None
    if len(data) > MAX_INPUT_BYTES:
        msg = f"{path!r} is larger than {MAX_INPUT_BYTES} bytes"
        raise UsageError(msg)
    return data
