"""``assetgate pull`` against real servers: a 3-node cluster and a single server."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any, Final

import pytest

from assetgate.cli.main import main
from assetgate.live.pull import Auth, PullError, pull_account, pull_monitor, pull_system
from tests.support.natscluster import NatsCluster, request_placed
from tests.support.natsserver import Client, NatsServer, system_accounts

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from assetgate.live.pull import PullResult

pytestmark = pytest.mark.realserver

RELEASE: Final = "2.15.1"
SYS_PASSWORD: Final = "s3cret-sys-pw"  # noqa: S105 - a test server's password
ACCOUNTS: Final = system_accounts(SYS_PASSWORD)
STREAMS: Final = (("R3", 3), ("R1", 1), ("R3B", 3))
CONSUMERS: Final = (("R3", "c3"), ("R1", "c1"), ("R3", "c3b"))
EXPECTED: Final = sorted(
    [("stream", s, s) for s, _ in STREAMS] + [("consumer", s, c) for s, c in CONSUMERS]
)


def _api(client: Client, subject: str, body: dict[str, Any]) -> None:
    reply = request_placed(client, subject, body)
    assert "error" not in reply, (subject, reply)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsCluster]:
    """A 2.15.1 cluster with accounts APP (JetStream) and SYS, R1 and R3 assets."""
    base = tmp_path_factory.mktemp("pull-cluster")
    with NatsCluster(RELEASE, base, extra_config=ACCOUNTS, monitor=True) as running:
        with Client(running.url, timeout=10.0) as client:
            for name, replicas in STREAMS:
                config = {
                    "name": name,
                    "subjects": [f"{name.lower()}.>"],
                    "num_replicas": replicas,
                }
                _api(client, f"$JS.API.STREAM.CREATE.{name}", config)
            for stream, durable in CONSUMERS:
                body = {
                    "stream_name": stream,
                    "config": {"durable_name": durable, "ack_policy": "explicit"},
                }
                _api(client, f"$JS.API.CONSUMER.CREATE.{stream}.{durable}", body)
        yield running


def _keys(result: PullResult) -> list[tuple[str, str, str]]:
    return sorted(
        (r["kind"], r["stream"], r["name"])
        for r in result.records
        if r["kind"] in {"stream", "consumer"}
    )


def test_account_pull_returns_every_asset_once(cluster: NatsCluster) -> None:
    """The JetStream API of the account: every asset exactly once, online, versioned."""
    result = pull_account(cluster.url)
    assert (_keys(result), result.problems) == (EXPECTED, [])
    assets = [r for r in result.records if r["kind"] != "server"]
    assert {(r["cluster"], r["account"], r["observed_state"]) for r in assets} == {
        ("C1", "APP", "online")
    }
    assert {(r["server_version"], r["api_level"]) for r in assets} == {(RELEASE, 5)}


def test_system_pull_merges_replicas(cluster: NatsCluster) -> None:
    """$SYS PING.JSZ: every asset once, with the servers hosting its replicas."""
    auth = Auth(user="sys", password=SYS_PASSWORD)
    result = pull_system(cluster.url, auth, expect_servers=3)
    assert (_keys(result), result.problems) == (EXPECTED, [])
    hosts = {
        (r["kind"], r["name"]): len(r["servers"])
        for r in result.records
        if r["kind"] != "server"
    }
    assert hosts[("stream", "R1")] == 1
    assert hosts[("consumer", "c1")] == 1
    assert hosts[("stream", "R3")] == 3
    assert hosts[("consumer", "c3")] == 3
    servers = [r for r in result.records if r["kind"] == "server"]
    assert sorted(r["name"] for r in servers) == ["C1-n1", "C1-n2", "C1-n3"]


def test_monitor_pull_matches_system_pull(cluster: NatsCluster) -> None:
    """/varz and /jsz of every node give the same assets and configs as $SYS."""
    urls = [f"http://127.0.0.1:{node.monitor_port}" for node in cluster.nodes]
    by_monitor = pull_monitor(urls)
    by_system = pull_system(
        cluster.url, Auth(user="sys", password=SYS_PASSWORD), expect_servers=3
    )
    assert _keys(by_monitor) == EXPECTED
    assert [r for r in by_monitor.records if r["kind"] != "server"] == [
        r for r in by_system.records if r["kind"] != "server"
    ]


def test_monitor_url_with_user_information_is_basic_auth(cluster: NatsCluster) -> None:
    """``http://user:pw@host`` reaches the host (basic auth), not a DNS lookup of it."""
    plain = [f"http://127.0.0.1:{node.monitor_port}" for node in cluster.nodes]
    userinfo = [url.replace("http://", "http://probe:p%40ss@") for url in plain]
    assert _keys(pull_monitor(userinfo)) == _keys(pull_monitor(plain)) == EXPECTED


def test_cli_pull_keeps_credentials_out(
    cluster: NatsCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pull --system`` writes the inventory; the password appears nowhere."""
    out = tmp_path / "fleet.jsonl"
    url = cluster.url.replace("nats://", f"nats://sys:{SYS_PASSWORD}@")
    code = main(
        ["pull", "--server", url, "--system", "--expect-servers", "3", "-o", str(out)]
    )
    captured = capsys.readouterr()
    text = out.read_text(encoding="utf-8")
    assert code == 0, captured.err
    assert len([line for line in text.splitlines() if '"kind":"stream"' in line]) == 3
    assert SYS_PASSWORD not in text + captured.out + captured.err


def test_cli_pull_wrong_password_is_a_clear_error(
    cluster: NatsCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refused login exits 2 with 'authorization failed' and no password shown."""
    code = main(
        ["pull", "--server", cluster.url, "--user", "sys", "--password", "wrong-pw-x"]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "authorization failed at nats://127.0.0.1:" in err
    assert "wrong-pw-x" not in err


def test_compare_observed_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Check --compare-observed: 0 when the prediction matches the pull, 1 when not."""
    with NatsServer("2.12.8", tmp_path / "store") as server:
        with Client(server.url) as client:
            config = {"name": "CNT", "subjects": ["cnt.>"], "allow_msg_counter": True}
            _api(client, "$JS.API.STREAM.CREATE.CNT", config)
        pulled = tmp_path / "pulled.jsonl"
        assert main(["pull", "--server", server.url, "-o", str(pulled)]) == 0
    args = ["check", str(pulled), "--mode", "single", "--compare-observed"]
    assert main([*args, "--target", "2.12.8"]) == 0
    assert "1 of 1 observed assets agree (100.0%)" in capsys.readouterr().out
    # 2.11.11 would keep the counter stream offline: not what 2.12.8 was seen doing
    assert main([*args, str(pulled), "--target", "2.11.11"]) == 1
    out = capsys.readouterr().out
    assert "predicted offline: unsupported - config error" in out
    assert "observed  online" in out


def test_check_of_a_standalone_pull_takes_single_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --mode: a pull from one standalone server is judged as a single server."""
    with NatsServer("2.15.1", tmp_path / "store") as server:
        with Client(server.url) as client:
            _api(
                client, "$JS.API.STREAM.CREATE.FC", {"name": "FC", "subjects": ["fc.>"]}
            )
            config = {
                "durable_name": "FCC",
                "ack_policy": "flow_control",
                "deliver_subject": "fcc.deliver",
            }
            body = {"stream_name": "FC", "config": config}
            _api(client, "$JS.API.CONSUMER.CREATE.FC.FCC", body)
        pulled = tmp_path / "pulled.jsonl"
        assert main(["pull", "--server", server.url, "-o", str(pulled)]) == 0
    capsys.readouterr()
    assert main(["check", str(pulled), "--target", "2.12.8"]) == 1
    captured = capsys.readouterr()
    assert "single mode" in captured.out
    assert "cluster down" not in captured.out  # was "(unnamed cluster) crash ..."
    assert "judging in mode single" in captured.err


def test_pulled_fleet_agrees_with_itself_at_its_observed_versions(
    cluster: NatsCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check --target observed --compare-observed`` on a $SYS pull: all agree, exit 0."""
    out = tmp_path / "fleet.jsonl"
    args = ["pull", "--server", cluster.url, "--system", "--expect-servers", "3"]
    auth = ["--user", "sys", "--password", SYS_PASSWORD]
    assert main([*args, *auth, "-o", str(out)]) == 0
    code = main(["check", str(out), "--target", "observed", "--compare-observed"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert f"{len(EXPECTED)} of {len(EXPECTED)} observed assets agree" in printed


TOKEN: Final = "tok-3f9a-secret"  # noqa: S105 - a test server's token
WRONG_TOKEN: Final = "wrong-token-x"  # noqa: S105 - a token the server refuses


def test_pull_over_tls_with_a_token(tmp_path: Path) -> None:
    """TLS (server cert from a test CA) and token auth; a wrong token is refused."""
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    ca_file, cert_file = tmp_path / "ca.pem", tmp_path / "server.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    cert.private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    config = (
        f"tls {{ cert_file: {json.dumps(str(cert_file))}, "
        f"key_file: {json.dumps(str(cert_file))} }}\n"
        f'authorization {{ token: "{TOKEN}" }}'
    )
    with NatsServer("2.12.8", tmp_path / "store", extra_config=config) as server:
        auth = Auth(token=TOKEN, tls_ca=str(ca_file))
        result = pull_account(server.url, auth)
        assert (result.problems, result.assets) == ([], 0)
        assert result.records[0]["kind"] == "server"
        with pytest.raises(PullError, match="authorization failed") as info:
            pull_account(server.url, Auth(token=WRONG_TOKEN, tls_ca=str(ca_file)))
        assert WRONG_TOKEN not in str(info.value)
        with pytest.raises(PullError, match="cannot connect"):  # no CA: untrusted cert
            pull_account(server.url, Auth(token=TOKEN))


class _RecordingProxy:
    """A loopback TCP proxy in front of a real server that keeps what clients sent."""

    def __init__(self, port: int) -> None:
        import socket
        import threading

        self.sent = bytearray()
        self._upstream = port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(10.0)
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        import socket
        import threading

        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(
                ("127.0.0.1", self._upstream), timeout=10.0
            )
            threading.Thread(
                target=self._pipe, args=(client, server, True), daemon=True
            ).start()
            threading.Thread(
                target=self._pipe, args=(server, client, False), daemon=True
            ).start()

    def _pipe(self, source: Any, target: Any, record: bool) -> None:
        try:
            while data := source.recv(65536):
                if record:
                    self.sent += data
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                with contextlib.suppress(OSError):
                    sock.close()

    def close(self) -> None:
        self._listener.close()


PASSWORD: Final = "pw-7c1e-secret"  # noqa: S105 - a test server's password


@pytest.mark.parametrize("ask", ["tls-url", "tls-ca"])
def test_pull_refuses_cleartext_when_tls_was_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ask: str
) -> None:
    """A tls:// URL or --tls-ca against a server without TLS: exit 2, no CONNECT sent."""
    import trustme

    ca_file = tmp_path / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(ca_file))
    config = f'authorization {{ user: "app", password: "{PASSWORD}" }}'
    with NatsServer("2.12.8", tmp_path / "store", extra_config=config) as server:
        proxy = _RecordingProxy(server.port)
        try:
            scheme = "tls" if ask == "tls-url" else "nats"
            args = ["pull", "--server", f"{scheme}://127.0.0.1:{proxy.port}"]
            args += ["--user", "app", "--password", PASSWORD]
            if ask == "tls-ca":
                args += ["--tls-ca", str(ca_file)]
            code = main([*args, "-o", str(tmp_path / "out.jsonl")])
        finally:
            proxy.close()
    err = capsys.readouterr().err
    assert (code, "does not require TLS: refusing to connect" in err) == (2, True)
    assert (b"CONNECT" in proxy.sent, PASSWORD.encode() in proxy.sent) == (False, False)


def test_pull_from_a_natscli_context_with_the_password_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--context gives url and user, NATS_PASSWORD the password: nothing secret in argv."""
    config = f'authorization {{ user: "app", password: "{PASSWORD}" }}'
    with NatsServer("2.12.8", tmp_path / "store", extra_config=config) as server:
        with Client(f"nats://app:{PASSWORD}@127.0.0.1:{server.port}") as client:
            _api(client, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
        context = tmp_path / "config" / "nats" / "context" / "local.json"
        context.parent.mkdir(parents=True)
        context.write_text(
            json.dumps({"description": "test", "url": server.url, "user": "app"}),
            encoding="utf-8",
        )
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
        monkeypatch.delenv("NATS_URL", raising=False)
        monkeypatch.setenv("NATS_PASSWORD", PASSWORD)
        out = tmp_path / "pulled.jsonl"
        assert main(["pull", "--context", "local", "-o", str(out)]) == 0
        monkeypatch.delenv("NATS_PASSWORD")
        monkeypatch.setenv("NATS_URL", server.url)
        assert main(["pull", "--user", "app", "-o", str(out)]) == 2
    kinds = [json.loads(line)["kind"] for line in out.read_text().splitlines()]
    assert kinds == ["server", "stream"]
    err = capsys.readouterr().err
    assert "authorization failed" in err
    assert PASSWORD not in err
