"""Where ``assetgate pull`` connects and with what: flags, environment, natscli contexts.

Each setting comes from the first of: its command-line flag, its file flag
(``--password-file``, ``--token-file``), the environment variable natscli reads
(``NATS_URL``, ``NATS_USER``, ``NATS_PASSWORD``, ``NATS_TOKEN``, ``NATS_CREDS``,
``NATS_CERT``, ``NATS_KEY``, ``NATS_CA``), and the natscli context named by
``--context`` or ``NATS_CONTEXT`` (ADR-21: ``$XDG_CONFIG_HOME/nats/context/NAME.json``,
``~/.config`` by default). So passwords and tokens need never be on the command line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

__all__ = ["PullSettings", "SettingsError", "context_path", "resolve_settings"]

_SOURCES: Final = {
    "server": ("NATS_URL", "url"),
    "user": ("NATS_USER", "user"),
    "password": ("NATS_PASSWORD", "password"),
    "token": ("NATS_TOKEN", "token"),
    "creds": ("NATS_CREDS", "creds"),
    "tls_cert": ("NATS_CERT", "cert"),
    "tls_key": ("NATS_KEY", "key"),
    "tls_ca": ("NATS_CA", "ca"),
}
"""Each setting: the environment variable and the natscli context key it comes from."""
_UNSUPPORTED: Final = (
    "nkey",
    "nsc",
    "user_jwt",
    "jetstream_domain",
    "jetstream_api_prefix",
    "inbox_prefix",
    "tls_first",
    "windows_cert_store",
)
"""Context keys assetgate cannot honour: a context that sets one is refused."""


class SettingsError(ValueError):
    """A setting that cannot be used (a usage error)."""


@dataclass(frozen=True)
class PullSettings:
    """The connection settings of one ``pull`` (``None``: not given anywhere)."""

    server: str | None
    user: str | None
    password: str | None
    token: str | None
    creds: str | None
    tls_cert: str | None
    tls_key: str | None
    tls_ca: str | None
    sources: tuple[str, ...]
    """Where the settings came from, for the log (never the values)."""


def context_path(name: str, env: Mapping[str, str]) -> Path:
    """The file of natscli context ``name`` (ADR-21)."""
    home = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")) / ".config")
    return Path(home).expanduser() / "nats" / "context" / f"{name}.json"


def _context(name: str, env: Mapping[str, str]) -> dict[str, str]:
    if not name or "/" in name or name.startswith("."):
        msg = f"invalid context name: {name!r}"
        raise SettingsError(msg)
    path = context_path(name, env)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        msg = f"no natscli context {name!r} (looked for {path})"
        raise SettingsError(msg) from None
    except (OSError, ValueError) as exc:
        msg = f"cannot read natscli context {name!r} ({path}): {exc}"
        raise SettingsError(msg) from None
    if not isinstance(data, dict):
        msg = f"natscli context {name!r} ({path}) is not a JSON object"
        raise SettingsError(msg)
    used = [key for key in _UNSUPPORTED if data.get(key)]
    if used:
        msg = (
            f"natscli context {name!r} sets {', '.join(used)}, which assetgate pull "
            "does not support; use --server with --creds, --user or --token instead"
        )
        raise SettingsError(msg)
    return {key: str(value) for key, value in data.items() if isinstance(value, str)}


def _read_secret(path: str, flag: str) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        msg = f"{flag}: cannot read {path!r}: {exc.strerror or exc}"
        raise SettingsError(msg) from None
    secret = text.rstrip("\r\n")
    if not secret:
        msg = f"{flag}: {path!r} is empty"
        raise SettingsError(msg)
    return secret


def resolve_settings(args: argparse.Namespace, env: Mapping[str, str]) -> PullSettings:
    """The settings of a ``pull``, from flags, files, the environment and a context.

    Raises:
        SettingsError: an unreadable secret file or context, a context setting that
            cannot be honoured, or a secret given twice on the command line.
    """
    given: dict[str, str | None] = {key: getattr(args, key, None) for key in _SOURCES}
    for key, flag in (("password", "--password-file"), ("token", "--token-file")):
        path = getattr(args, f"{key}_file", None)
        if path is None:
            continue
        if given[key] is not None:
            msg = f"--{key} and {flag} both given"
            raise SettingsError(msg)
        given[key] = _read_secret(path, flag)
    name = getattr(args, "context", None) or env.get("NATS_CONTEXT")
    context = _context(name, env) if name else {}
    values: dict[str, str | None] = {}
    sources: list[str] = []
    for key, (variable, context_key) in _SOURCES.items():
        if given[key] is not None:
            values[key] = given[key]
            continue
        if env.get(variable):
            values[key] = env[variable]
            sources.append(variable)
            continue
        found = context.get(context_key) or None
        values[key] = found
        if found is not None:
            sources.append(f"context {name}: {context_key}")
    server = values["server"]
    if (
        server is not None and "," in server
    ):  # natscli's comma-separated list: the first
        server = server.split(",", 1)[0].strip()
    return PullSettings(
        server=server,
        user=values["user"],
        password=values["password"],
        token=values["token"],
        creds=values["creds"],
        tls_cert=values["tls_cert"],
        tls_key=values["tls_key"],
        tls_ca=values["tls_ca"],
        sources=tuple(sources),
    )
