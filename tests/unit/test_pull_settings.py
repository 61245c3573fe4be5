"""Tests for where ``pull`` takes its connection settings: flags, files, env, contexts."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

import pytest

from assetgate.cli.main import main
from assetgate.live.settings import SettingsError, context_path, resolve_settings

if TYPE_CHECKING:
    from pathlib import Path


def _args(**given: str | None) -> argparse.Namespace:
    keys = (
        "server",
        "user",
        "password",
        "token",
        "creds",
        "tls_cert",
        "tls_key",
        "tls_ca",
    )
    values = dict.fromkeys(keys)
    values.update(context=None, password_file=None, token_file=None)
    values.update(given)
    return argparse.Namespace(**values)


def _context(home: Path, name: str, **data: object) -> None:
    path = context_path(name, {"XDG_CONFIG_HOME": str(home)})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"description": "test", **data}), encoding="utf-8")


def test_flags_then_files_then_environment_then_context(tmp_path: Path) -> None:
    """Each setting comes from the first place that has it; the url list gives its first."""
    _context(
        tmp_path,
        "prod",
        url="nats://a:4222,nats://b:4222",
        user="ctx-user",
        password="ctx-pw",  # noqa: S106 - a test value
        ca="/ctx/ca.pem",
        nkey="",
    )
    secret = tmp_path / "pw.txt"
    secret.write_text("file-pw\n", encoding="utf-8")
    env = {
        "XDG_CONFIG_HOME": str(tmp_path),
        "NATS_USER": "env-user",
        "NATS_CONTEXT": "prod",
    }
    settings = resolve_settings(_args(password_file=str(secret)), env)
    assert (settings.server, settings.user, settings.password, settings.tls_ca) == (
        "nats://a:4222",
        "env-user",
        "file-pw",
        "/ctx/ca.pem",
    )
    assert settings.sources == ("context prod: url", "NATS_USER", "context prod: ca")
    flagged = resolve_settings(_args(server="nats://flag:1", user="flag-user"), env)
    assert (flagged.server, flagged.user, flagged.password) == (
        "nats://flag:1",
        "flag-user",
        "ctx-pw",
    )


@pytest.mark.parametrize(
    ("given", "env", "words"),
    [
        ({"context": "missing"}, {}, "no natscli context 'missing'"),
        ({"context": "../etc"}, {}, "invalid context name"),
        (
            {"context": "jwt"},
            {},
            "sets user_jwt, which assetgate pull does not support",
        ),
        (
            {"password": "x", "password_file": "pw"},
            {},
            "--password and --password-file",
        ),
        ({"token_file": "empty"}, {}, "--token-file: 'empty' is empty"),
        ({"token_file": "absent"}, {}, "--token-file: cannot read 'absent'"),
    ],
)
def test_settings_that_cannot_be_used(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    given: dict[str, str],
    env: dict[str, str],
    words: str,
) -> None:
    """A missing or unsupported context and unreadable secrets are refused, by name."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").write_text("\n", encoding="utf-8")
    _context(tmp_path, "jwt", url="nats://x:4222", user_jwt="eyJ...")
    with pytest.raises(
        SettingsError, match=words.replace("(", r"\(").replace("*", r"\*")
    ):
        resolve_settings(_args(**given), {"XDG_CONFIG_HOME": str(tmp_path), **env})


def test_cli_without_a_server_anywhere_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --server, NATS_URL or context: exit 2 naming where a server can come from."""
    monkeypatch.delenv("NATS_URL", raising=False)
    monkeypatch.delenv("NATS_CONTEXT", raising=False)
    assert main(["pull"]) == 2
    assert (
        "give --server URL (or NATS_URL, or --context NAME)" in capsys.readouterr().err
    )
