"""The embedded API from several threads: cold first use and warm equivalence.

msgspec's first use of nested Struct types is not safe from several threads at once:
before the build lock, eight threads' first ``assetgate.validate`` crashed the
interpreter with a segmentation fault in 7 of 8 fresh runs on this machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Final

import pytest

import assetgate

_VERSIONS: Final = (
    "2.10.26",
    "2.11.11",
    "2.12.8",
    "2.15.1",
    "2.11.6",
    "2.14.0",
    "2.12.0",
    "2.14.6",
)
_STREAM: Final = b'{"name":"S","subjects":["a"],"allow_msg_ttl":true}'
_CONSUMER: Final = {
    "durable_name": "C",
    "ack_policy": "explicit",
    "priority_groups": ["g"],
}

_COLD: Final = """
import json, sys, threading
sys.setswitchinterval(1e-5)
import assetgate
versions = json.loads(sys.argv[1])
stream, consumer = sys.argv[2].encode(), json.loads(sys.argv[3])
barrier = threading.Barrier(len(versions))
out = [None] * len(versions)
def work(i):
    barrier.wait()
    v = versions[i]
    a = assetgate.validate(stream, kind="stream", server=v)
    b = assetgate.validate(consumer, kind="consumer", server=v)
    out[i] = [a.accepted, b.accepted, b.error and b.error.err_code]
threads = [threading.Thread(target=work, args=(i,)) for i in range(len(versions))]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(out))
"""


def _single() -> list[list[object]]:
    out: list[list[object]] = []
    for version in _VERSIONS:
        a = assetgate.validate(_STREAM, kind="stream", server=version)
        b = assetgate.validate(_CONSUMER, kind="consumer", server=version)
        out.append([a.accepted, b.accepted, b.error and b.error.err_code])
    return out


@pytest.mark.parametrize("run", range(5))
def test_cold_first_use_from_eight_threads(run: int) -> None:
    """Eight threads' first validate in a fresh interpreter exit cleanly, answering alike."""
    del run
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _COLD,
            json.dumps(_VERSIONS),
            _STREAM.decode(),
            json.dumps(_CONSUMER),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert (done.returncode, json.loads(done.stdout or "null")) == (0, _single())


def test_warm_calls_from_threads_match_one_thread() -> None:
    """Many threaded calls after warm-up give the single-threaded answers."""
    expected = _single()
    results: list[list[list[object]]] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(25):
            answer = _single()
            with lock:
                results.append(answer)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (len(results), all(r == expected for r in results)) == (200, True)
