"""Hypothesis profiles: a few seconds in ``make test``, minutes under ``make fuzz``."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# `make test`: a quick pass over the corpus and its mutations (seconds)
settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# `make fuzz`: many more examples, fresh randomness each run
settings.register_profile(
    "fuzz",
    max_examples=int(os.environ.get("ASSETGATE_FUZZ_EXAMPLES", "20000")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
