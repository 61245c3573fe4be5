"""Runs over a whole inventory: ``check``, its worker pool, the matrix of releases and rolling changes."""
