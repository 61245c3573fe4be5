"""assetgate: predict what a nats-server release does with JetStream assets.

The public API is re-exported here, each name imported on first use, so that
``import assetgate`` (or one submodule) loads only what it uses; nothing here imports
Spark.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # what type checkers and documentation tools see; loaded lazily
    from assetgate.catalogue.levels import Catalogue, ServerProfile, load_catalogue
    from assetgate.decoding.decode import Decoded, decode
    from assetgate.errors import (
        AssetgateError,
        CatalogueError,
        InvalidArgument,
        InvalidConfig,
        InvalidServerVersion,
        InvalidSubject,
        UnknownServerVersion,
    )
    from assetgate.inventory.read import Asset, Ignored, RecordError
    from assetgate.judge.configchecks import ServerLimits
    from assetgate.judge.gate import Verdict
    from assetgate.judge.metadata import (
        go_atoi,
        header_accepted,
        required_level,
        supports_required_level,
    )
    from assetgate.judge.subjects import SubjectIndex, find_overlaps, subjects_collide
    from assetgate.requests.admission import Admission, Conflict, admit
    from assetgate.requests.stamp import stamp
    from assetgate.requests.validate import ApiError, ServerInfo, Validation, validate
    from assetgate.run.check import Report, check
    from assetgate.run.matrix import Matrix, check_matrix
    from assetgate.version import ServerVersion, parse_version

__version__ = "0.1.0.dev0"

__all__ = [
    "Admission",
    "ApiError",
    "Asset",
    "AssetgateError",
    "Catalogue",
    "CatalogueError",
    "Conflict",
    "Decoded",
    "Ignored",
    "InvalidArgument",
    "InvalidConfig",
    "InvalidServerVersion",
    "InvalidSubject",
    "Matrix",
    "RecordError",
    "Report",
    "ServerInfo",
    "ServerLimits",
    "ServerProfile",
    "ServerVersion",
    "SubjectIndex",
    "UnknownServerVersion",
    "Validation",
    "Verdict",
    "__version__",
    "admit",
    "check",
    "check_matrix",
    "decode",
    "find_overlaps",
    "go_atoi",
    "header_accepted",
    "load_catalogue",
    "parse_version",
    "required_level",
    "stamp",
    "subjects_collide",
    "supports_required_level",
    "validate",
]

_EXPORTS: Final = {
    "Admission": "assetgate.requests.admission",
    "admit": "assetgate.requests.admission",
    "ApiError": "assetgate.requests.validate",
    "Asset": "assetgate.inventory.read",
    "AssetgateError": "assetgate.errors",
    "Catalogue": "assetgate.catalogue.levels",
    "CatalogueError": "assetgate.errors",
    "check": "assetgate.run.check",
    "check_matrix": "assetgate.run.matrix",
    "Conflict": "assetgate.requests.admission",
    "decode": "assetgate.decoding.decode",
    "Decoded": "assetgate.decoding.decode",
    "find_overlaps": "assetgate.judge.subjects",
    "go_atoi": "assetgate.judge.metadata",
    "header_accepted": "assetgate.judge.metadata",
    "Ignored": "assetgate.inventory.read",
    "InvalidArgument": "assetgate.errors",
    "InvalidConfig": "assetgate.errors",
    "InvalidServerVersion": "assetgate.errors",
    "InvalidSubject": "assetgate.errors",
    "load_catalogue": "assetgate.catalogue.levels",
    "Matrix": "assetgate.run.matrix",
    "parse_version": "assetgate.version",
    "RecordError": "assetgate.inventory.read",
    "Report": "assetgate.run.check",
    "required_level": "assetgate.judge.metadata",
    "ServerInfo": "assetgate.requests.validate",
    "ServerLimits": "assetgate.judge.configchecks",
    "ServerProfile": "assetgate.catalogue.levels",
    "ServerVersion": "assetgate.version",
    "stamp": "assetgate.requests.stamp",
    "SubjectIndex": "assetgate.judge.subjects",
    "subjects_collide": "assetgate.judge.subjects",
    "supports_required_level": "assetgate.judge.metadata",
    "UnknownServerVersion": "assetgate.errors",
    "validate": "assetgate.requests.validate",
    "Validation": "assetgate.requests.validate",
    "Verdict": "assetgate.judge.gate",
}
"""Each public name and the module that defines it, imported on first use."""


def __getattr__(name: str) -> Any:  # noqa: ANN401 - any of the public names
    """Import a public name's module on first use (PEP 562).

    A command or a submodule then loads only what it needs.
    """
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module 'assetgate' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    """The public API and the module's own names."""
    return sorted({*globals(), *_EXPORTS})
