"""The public API: every name resolves, lazily, and no module is shadowed by a function."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

import assetgate


def test_every_public_name_resolves_to_its_module() -> None:
    """Each name of ``__all__`` is served from the module the export table names."""
    exports = assetgate._EXPORTS
    assert set(assetgate.__all__) - {"__version__"} == set(exports)
    wrong = [
        name
        for name, module in exports.items()
        if getattr(assetgate, name)
        is not getattr(importlib.import_module(module), name)
    ]
    assert wrong == []


def test_an_unknown_name_is_an_attribute_error() -> None:
    """A name that is not public raises AttributeError, as for any module."""
    with pytest.raises(AttributeError, match="no attribute 'chek'"):
        _ = assetgate.chek


def test_import_assetgate_loads_no_submodule() -> None:
    """``import assetgate`` alone imports none of its submodules (names load on use)."""
    code = (
        "import sys, assetgate; "
        "print(sorted(m for m in sys.modules if m.startswith('assetgate.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("check", "assetgate.run.check"),
        ("validate", "assetgate.requests.validate"),
        ("decode", "assetgate.decoding.decode"),
        ("stamp", "assetgate.requests.stamp"),
        ("check_matrix", "assetgate.run.matrix"),
    ],
)
def test_a_function_does_not_shadow_its_module(name: str, module: str) -> None:
    """After the function is used, ``import <its module> as m`` gives the module."""
    getattr(assetgate, name)
    namespace: dict[str, object] = {}
    exec(f"import {module} as m", namespace)  # noqa: S102 - the statement under test
    assert isinstance(namespace["m"], types.ModuleType)
