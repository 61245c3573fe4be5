"""``python -m assetgate``: the command line."""

from __future__ import annotations

from assetgate.cli.main import main

raise SystemExit(main())
