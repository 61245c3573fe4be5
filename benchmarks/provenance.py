"""What a benchmark measured: the assetgate sources and commit, shared by the scripts."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import assetgate

__all__ = ["source_state"]


def source_state() -> str:
    """Which assetgate was measured: a digest of its sources and the git commit."""
    package = Path(assetgate.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):  # every subpackage's modules too
        name = path.relative_to(package).as_posix()
        digest.update(name.encode() + b"\0" + path.read_bytes())
    git = shutil.which("git")
    commit = "?"
    if git is not None:
        out = subprocess.run(
            [git, "-C", str(package), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        )
        commit = out.stdout.strip() or "?"
    return f"assetgate sources sha256:{digest.hexdigest()[:12]} (git {commit})"
