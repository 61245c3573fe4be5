"""assetgate: predict what a nats-server release does with JetStream assets.

The public API is re-exported here; nothing in this package imports Spark.
"""

from __future__ import annotations

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
