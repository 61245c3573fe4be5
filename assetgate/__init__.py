"""assetgate: predict what a nats-server release does with JetStream assets.

The public API is re-exported here; nothing in this package imports Spark.
"""

from __future__ import annotations

from assetgate.admission import Admission, Conflict, admit
from assetgate.check import Report, check
from assetgate.decode import Decoded, decode
from assetgate.errors import (
    AssetgateError,
    CatalogueError,
    InvalidArgument,
    InvalidConfig,
    InvalidServerVersion,
    InvalidSubject,
    UnknownServerVersion,
)
from assetgate.gate import Verdict
from assetgate.inventory import Asset, Ignored, RecordError
from assetgate.levels import Catalogue, ServerProfile, load_catalogue
from assetgate.metadata import (
    go_atoi,
    header_accepted,
    required_level,
    supports_required_level,
)
from assetgate.stamp import stamp
from assetgate.subjects import SubjectIndex, find_overlaps, subjects_collide
from assetgate.validate import ApiError, ServerInfo, Validation, validate
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
    "RecordError",
    "Report",
    "ServerInfo",
    "ServerProfile",
    "ServerVersion",
    "SubjectIndex",
    "UnknownServerVersion",
    "Validation",
    "Verdict",
    "__version__",
    "admit",
    "check",
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
