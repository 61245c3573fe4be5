"""What is built from the catalogue has one owner: ``assetgate.catalogue.derived``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import assetgate
import assetgate.requests.validate  # registers requests.infos when imported
from assetgate.catalogue import derived
from assetgate.run.check import check
from tests.conftest import REPO

if TYPE_CHECKING:
    from assetgate.catalogue.levels import Catalogue


def test_every_cache_is_registered_with_its_key() -> None:
    """The decoders, types, compiled rules, checks and profiles are registered caches."""
    assert set(derived.caches()) >= {
        "compile.features",
        "compile.hazards",
        "compile.levels",
        "configchecks.plans",
        "decoding.decoders",
        "decoding.fast",
        "decoding.lenient",
        "gate.plans",
        "levels.profiles",
        "levels.releases",
        "model.types",
        "requests.infos",
    }
    assert all(derived.caches().values())


def test_clear_empties_them_and_the_next_use_rebuilds_alike(
    catalogue: Catalogue,
) -> None:
    """After ``clear()`` every cache is empty, and a check rebuilds the same answers."""
    demo = REPO / "fixtures/inventories/demo.jsonl"
    before = check([demo], target="2.11.11", catalogue=catalogue)
    first = assetgate.validate(b'{"name":"S"}', kind="stream", server="2.12.8")
    assert any(derived.sizes().values())
    derived.clear()
    assert set(derived.sizes().values()) == {0}
    after = check([demo], target="2.11.11", catalogue=catalogue)
    again = assetgate.validate(b'{"name":"S"}', kind="stream", server="2.12.8")
    assert (after, again) == (before, first)
