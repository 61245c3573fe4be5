"""Judging stored assets: verdicts, the server's config checks, cluster outcomes, overlaps, rules and acceptances."""
