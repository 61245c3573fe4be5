"""JSON Schemas of assetgate's JSON outputs, generated from the types that write them.

``assetgate schema NAME`` prints one: ``report`` (``check --format json``), ``matrix``
(``check --target all --format json``), ``rolling`` (``check --rolling ... --format
json``) and ``plan`` (``check --plan-out``). Each document names itself in its
``format`` key (``assetgate-report/1``...); ``docs/schema/`` holds the published copies,
kept equal to the generated ones by a test.
"""

from __future__ import annotations

from typing import Final

import msgspec

from assetgate.report.common import pretty_json
from assetgate.run.check import PLAN_FORMAT, Plan
from assetgate.run.collect import REPORT_FORMAT, Report
from assetgate.run.matrix_model import MATRIX_FORMAT, Matrix
from assetgate.run.rolling import ROLLING_FORMAT, Rolling

__all__ = ["SCHEMAS", "json_schema"]

SCHEMAS: Final[dict[str, tuple[type, str]]] = {
    "report": (Report, REPORT_FORMAT),
    "matrix": (Matrix, MATRIX_FORMAT),
    "rolling": (Rolling, ROLLING_FORMAT),
    "plan": (Plan, PLAN_FORMAT),
}
"""Each output: the type that writes it and the ``format`` value it carries."""

_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"


def json_schema(name: str) -> str:
    """The JSON Schema (draft 2020-12) of output ``name``, as indented JSON.

    Raises:
        KeyError: ``name`` is not one of :data:`SCHEMAS`.
    """
    kind, version = SCHEMAS[name]
    generated = msgspec.json.schema(kind)
    document = {
        "$schema": _DIALECT,
        "title": f"assetgate {name} ({version})",
        **generated,
    }
    return pretty_json(document)
