"""The level catalogue: the ``levels/`` files, their model, and what is compiled per release line."""
