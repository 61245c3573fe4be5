"""Spark batch scan: judge inventories of any size on a Spark cluster.

The only package that imports :mod:`pyspark` (and only in its submodules, so importing
``assetgate.batch`` itself costs nothing): ``schema`` holds the column layouts,
``transform`` the Arrow-batch functions that call the core (``inventory.read_records``,
``gate.judge``/``settle``, ``subjects.find_overlaps``), and ``job`` owns the session,
the reading, the writing and the atomic commit of the output directory. It does not
implement any rule itself.
"""

from __future__ import annotations

__all__: list[str] = []
