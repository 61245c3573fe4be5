"""``assetgate pull``: collect the live inventory of running servers (nats-py, HTTP)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from assetgate.cli.common import HelpFormatter, Subparsers, UsageError
from assetgate.live.pull import (
    Auth,
    PullError,
    PullResult,
    pull_account,
    pull_monitor,
    pull_system,
    write_records,
)
from assetgate.live.settings import SettingsError, resolve_settings

if TYPE_CHECKING:
    import argparse

__all__ = ["add_parser", "run"]

log = structlog.get_logger("assetgate.pull")


def add_parser(sub: Subparsers) -> None:
    """Register ``pull`` and its flags."""
    pull = sub.add_parser(
        "pull",
        help="collect every stream and consumer config of running servers as an inventory",
        description=(
            "Write the canonical JSON Lines inventory of live servers, with each server's "
            "version and API level and what it reports as offline (with its reason) or "
            "missing. Sources: the JetStream API of the credentials' account (--server), "
            "every server of every cluster through $SYS.REQ.SERVER.PING.JSZ "
            "(--server with --system and system-account credentials), or monitoring "
            "endpoints (--monitor, repeatable; no credentials). "
            "Exit 0: complete; 1: written, with problems (stderr); 2: nothing pulled."
        ),
        epilog=(
            "examples:\n"
            "  assetgate pull --server nats://127.0.0.1:4222 -o inventory.jsonl\n"
            "  assetgate pull --server nats://n1:4222 --creds sys.creds --system -o fleet.jsonl\n"
            "  assetgate pull --monitor http://n1:8222 --monitor http://n2:8222 -o fleet.jsonl\n"
            "  NATS_PASSWORD=... assetgate pull --context prod --user sys --system -o f.jsonl\n"
            "  assetgate check before.jsonl --target 2.12.8 --compare-observed after.jsonl\n"
        ),
        formatter_class=HelpFormatter,
    )
    where = pull.add_mutually_exclusive_group()
    where.add_argument(
        "--server",
        metavar="URL",
        help="a server: nats://HOST:PORT (default: NATS_URL, else the context's url)",
    )
    where.add_argument(
        "--monitor",
        action="append",
        metavar="URL",
        help="a monitoring endpoint http://HOST:8222 (repeat for every server)",
    )
    pull.add_argument(
        "--system",
        action="store_true",
        help="ask every server through $SYS.REQ.SERVER.PING.JSZ (system account)",
    )
    pull.add_argument(
        "--context",
        metavar="NAME",
        help="a natscli context (default: NATS_CONTEXT): its url, user, password, token, "
        "creds, cert, key and ca, read from $XDG_CONFIG_HOME/nats/context/NAME.json; "
        "flags and NATS_* variables override it",
    )
    pull.add_argument(
        "--creds", metavar="FILE", help="a .creds file (JWT and seed; or NATS_CREDS)"
    )
    pull.add_argument("--user", metavar="USER", help="or NATS_USER")
    pull.add_argument(
        "--password",
        metavar="PASSWORD",
        help="or NATS_PASSWORD, or --password-file (kept off the command line)",
    )
    pull.add_argument("--password-file", metavar="FILE", help="read the password here")
    pull.add_argument("--token", metavar="TOKEN", help="or NATS_TOKEN, or --token-file")
    pull.add_argument("--token-file", metavar="FILE", help="read the token here")
    pull.add_argument("--tls-ca", metavar="FILE", help="or NATS_CA")
    pull.add_argument("--tls-cert", metavar="FILE", help="or NATS_CERT")
    pull.add_argument("--tls-key", metavar="FILE", help="or NATS_KEY")
    pull.add_argument(
        "--account", metavar="ACC", help="the account name recorded (default: asked)"
    )
    pull.add_argument(
        "--timeout", type=float, default=5.0, help="seconds per request (default 5)"
    )
    pull.add_argument(
        "--wait",
        type=float,
        default=3.0,
        help="--system: seconds to collect server replies (default 3)",
    )
    pull.add_argument(
        "--expect-servers",
        type=int,
        metavar="N",
        help="--system: stop waiting once N servers answered; report fewer",
    )
    pull.add_argument("--output", "-o", metavar="FILE", help="write here, not stdout")
    pull.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``assetgate pull``; return the exit code."""
    try:
        settings = resolve_settings(args, os.environ)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    if not args.monitor:
        if settings.server is None:
            msg = "give --server URL (or NATS_URL, or --context NAME), or --monitor URL"
            raise UsageError(msg)
        args.server = settings.server
    if settings.password and not settings.user:
        msg = "--password needs --user"
        raise UsageError(msg)
    if args.system and not args.server:
        msg = "--system needs --server"
        raise UsageError(msg)
    if settings.sources:
        log.info("pull_settings", sources=list(settings.sources))
    auth = Auth(
        creds=settings.creds,
        user=settings.user,
        password=settings.password,
        token=settings.token,
        tls_ca=settings.tls_ca,
        tls_cert=settings.tls_cert,
        tls_key=settings.tls_key,
    )
    try:
        result = _pull(args, auth)
    except PullError as exc:
        print(f"assetgate: error: {exc}", file=sys.stderr)
        return 2
    text = write_records(result.records, Path(args.output) if args.output else None)
    if not args.output:
        sys.stdout.write(text)
    for problem in result.problems:
        print(f"assetgate: pull: {problem}", file=sys.stderr)
    log.info(
        "pull_finished",
        servers=len(result.servers),
        assets=result.assets,
        problems=len(result.problems),
    )
    return 1 if result.problems else 0


def _pull(args: argparse.Namespace, auth: Auth) -> PullResult:
    if args.monitor:
        return pull_monitor(args.monitor, auth, timeout=args.timeout)
    if args.system:
        return pull_system(
            args.server,
            auth,
            timeout=args.timeout,
            wait=args.wait,
            expect_servers=args.expect_servers,
        )
    return pull_account(args.server, auth, account=args.account, timeout=args.timeout)
