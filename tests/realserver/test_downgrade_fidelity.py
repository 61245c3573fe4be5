"""The gate's single-server verdicts against what real older nats-servers do.

A store with one asset per feature (``tests/support/scenarios.py``) is written once by
nats-server 2.15.1, its inventory captured, and two assets get ``_nats.req.level: "6"``
forged on disk. Each older release then opens its own copy of that store as a single
server, and for every asset the prediction must match the observation:

* predicted ``online`` -> observed online;
* predicted ``offline`` -> observed offline with the same reason, byte for byte;
* predicted ``unloadable`` or ``detached`` -> observed missing;
* predicted ``degraded`` -> observed loaded with exactly the predicted fields dropped.

The newest release is checked too, as a control (only the forged assets are offline).
A disagreement is never loosened here: it is listed in ``KNOWN_DISAGREEMENTS`` and
marked ``xfail(strict=True)``.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any, Final

import pytest

from assetgate.live.observed import Observations, compare_observed
from assetgate.live.pull import PullResult, pull_account
from assetgate.run.check import check
from tests.support import fidelity
from tests.support.natsserver import NatsServer
from tests.support.scenarios import (
    FORGED,
    FORGED_LEVEL,
    NEWEST,
    AssetKey,
    Observation,
    build_feature_store,
    build_plain_store,
    build_template_store,
    feature_asset_keys,
    observe,
    record_asset,
    record_key,
)

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue
    from assetgate.inventory.read import Asset
    from assetgate.judge.gate import Verdict

pytestmark = pytest.mark.realserver

OLDER: Final = ("2.10.26", "2.11.8", "2.11.10", "2.11.11", "2.12.0", "2.12.8", "2.14.6")
VERSIONS: Final = (*OLDER, NEWEST)

KNOWN_DISAGREEMENTS: Final[dict[tuple[str, str], str]] = {}
"""(release, asset name) -> "<release> <asset>: predicted ... observed ..."."""


class FeatureStore:
    """The feature store written once by the newest release, observed per release."""

    def __init__(self, base: Path, catalogue: Catalogue) -> None:
        """Build the store under ``base`` and capture its inventory."""
        self.base = base
        self.catalogue = catalogue
        self.inventory = build_feature_store(base / "store")
        self._observed: dict[str, dict[AssetKey, Observation]] = {}
        self._predicted: dict[str, dict[AssetKey, Verdict]] = {}
        self.pulled: dict[str, PullResult] = {}

    def observed(self, version: str) -> dict[AssetKey, Observation]:
        """Open a copy of the store with ``version`` (single server) and observe it."""
        if version not in self._observed:
            store = self.base / version / "store"
            shutil.copytree(self.base / "store", store)
            with NatsServer(version, store) as server:
                self._observed[version] = observe(server, self.inventory)
                self.pulled[version] = pull_account(server.url, timeout=3.0)
        return self._observed[version]

    def predicted(self, version: str) -> dict[AssetKey, Verdict]:
        """Classify every inventoried asset for ``version`` in single-server mode."""
        if version not in self._predicted:
            self._predicted[version] = self._classify(version)
        return self._predicted[version]

    def _classify(self, version: str) -> dict[AssetKey, Verdict]:
        """Run `assetgate.check` in single-server mode over the captured inventory."""
        report = check(
            self.assets(), target=version, mode="single", catalogue=self.catalogue
        )
        assert (report.summary.errors, report.summary.ignored) == (0, 0)
        return {(v.kind, v.stream, v.name): v for v in report.assets}

    def assets(self) -> list[Asset]:
        """The captured inventory as the gate's assets."""
        return [
            record_asset(record, f"feature-store:{index}")
            for index, record in enumerate(self.inventory, start=1)
        ]


def _cases() -> list[Any]:
    """Return one pytest param per (release, asset), xfail-marked if known to differ."""
    cases: list[Any] = []
    for version in VERSIONS:
        for key in feature_asset_keys():
            why = KNOWN_DISAGREEMENTS.get((version, key[2]))
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            cases.append(
                pytest.param(version, key, marks=marks, id=f"{version}-{key[2]}")
            )
    return cases


@pytest.fixture(scope="module")
def store(
    tmp_path_factory: pytest.TempPathFactory, catalogue: Catalogue
) -> FeatureStore:
    """The feature store, written once by the newest release for the module."""
    return FeatureStore(tmp_path_factory.mktemp("downgrade"), catalogue)


def test_inventory_holds_every_feature_asset(store: FeatureStore) -> None:
    """The captured inventory has exactly the scenario's streams and consumers."""
    assert sorted(record_key(r) for r in store.inventory) == list(feature_asset_keys())


def test_forged_assets_carry_level_6_in_the_inventory(store: FeatureStore) -> None:
    """The forged stream and consumer are inventoried with _nats.req.level "6"."""
    forged = {
        record["name"]: record["config"]["metadata"]["_nats.req.level"]
        for record in store.inventory
        if (record["stream"], None if record["kind"] == "stream" else record["name"])
        in FORGED
    }
    assert forged == {"S_FORGED": FORGED_LEVEL, "C_FORGED": FORGED_LEVEL}


@pytest.mark.parametrize(("version", "key"), _cases())
def test_prediction_matches_real_server(
    store: FeatureStore, version: str, key: AssetKey
) -> None:
    """A release opening the 2.15.1 store does to each asset what the gate predicts."""
    fidelity.assert_agrees(
        scenario="2.15.1 feature store opened by the release (INFO)",
        release=version,
        mode="single",
        key=key,
        verdict=store.predicted(version)[key],
        seen=store.observed(version).get(key, ("missing", "not observed")),
        known=KNOWN_DISAGREEMENTS.get((version, key[2])),
    )


def _pulled_observations(result: PullResult) -> Observations:
    """What ``assetgate pull`` wrote, as ``--compare-observed`` reads it."""
    return Observations.from_records(result.records)


@pytest.mark.parametrize("version", VERSIONS)
def test_pull_and_compare_observed_agree(store: FeatureStore, version: str) -> None:
    """``pull`` on the release and ``check --compare-observed`` agree on every asset."""
    store.observed(version)  # opens the store and pulls once
    result = store.pulled[version]
    assets = store.assets()
    report = check(assets, target=version, mode="single", catalogue=store.catalogue)
    comparisons = compare_observed(report, assets, _pulled_observations(result))
    fidelity.record(
        scenario="2.15.1 feature store opened by the release (pull)",
        release=version,
        mode="single",
        comparisons=comparisons,
    )
    differ = [c for c in comparisons if c.agree is not True]
    assert not differ, "\n".join(
        f"{version} {c.asset}: predicted {c.predicted_state} {c.predicted_reason!r}, "
        f"observed {c.observed_state} {c.observed_reason!r}"
        for c in differ
    )
    # every asset the server serves was pulled exactly once
    keys = [
        (r["kind"], r["stream"], r["name"])
        for r in result.records
        if r["kind"] != "server"
    ]
    assert len(keys) == len(set(keys))


NEWER: Final = ("2.11.8", "2.11.10", "2.11.11", "2.12.0", "2.12.8", "2.14.6", NEWEST)


@pytest.fixture(scope="module")
def plain_store(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[dict[str, Any]]]:
    """Streams and consumers created on 2.10.26 (the upgrade scenario), and their inventory."""
    base = tmp_path_factory.mktemp("upgrade")
    return base, build_plain_store(base / "store")


def _open_pull_compare(
    base: Path,
    inventory: list[dict[str, Any]],
    version: str,
    catalogue: Catalogue,
    scenario: str,
) -> list[str]:
    """Open a copy of ``base/store`` with ``version``, pull, compare; the disagreements."""
    store = base / version / "store"
    shutil.copytree(base / "store", store)
    with NatsServer(version, store) as server:
        result = pull_account(server.url, timeout=3.0)
    assets = [record_asset(r, f"{base.name}:{i}") for i, r in enumerate(inventory, 1)]
    report = check(assets, target=version, mode="single", catalogue=catalogue)
    comparisons = compare_observed(report, assets, _pulled_observations(result))
    fidelity.record(
        scenario=scenario, release=version, mode="single", comparisons=comparisons
    )
    assert len(comparisons) == len(inventory)
    return [
        f"{c.asset}: predicted {c.predicted_state} {c.predicted_reason!r}, "
        f"observed {c.observed_state} {c.observed_reason!r}"
        for c in comparisons
        if c.agree is not True
    ]


@pytest.mark.parametrize("version", NEWER)
def test_upgrade_from_2_10_agrees(
    plain_store: tuple[Path, list[dict[str, Any]]], version: str, catalogue: Catalogue
) -> None:
    """Assets written by 2.10.26 load on each newer release as predicted (pulled live)."""
    base, inventory = plain_store
    scenario = "2.10.26 store opened by the release, upgrade (pull)"
    assert _open_pull_compare(base, inventory, version, catalogue, scenario) == []


@pytest.fixture(scope="module")
def template_store(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[dict[str, Any]]]:
    """2.12.8: a template-owned stream and a restored stream without a stamp."""
    base = tmp_path_factory.mktemp("template")
    return base, build_template_store(base / "store")


@pytest.mark.parametrize("version", VERSIONS)
def test_template_and_restored_streams_agree(
    template_store: tuple[Path, list[dict[str, Any]]],
    version: str,
    catalogue: Catalogue,
) -> None:
    """Template-owned and unstamped streams written by 2.12.8, opened by each release."""
    base, inventory = template_store
    assert sorted(r["name"] for r in inventory) == ["S_RESTORED", "tpl_x"]
    scenario = "2.12.8 template-owned and restored unstamped streams (pull)"
    assert _open_pull_compare(base, inventory, version, catalogue, scenario) == []
