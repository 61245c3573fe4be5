"""Inventories: records, input files and their formats, and the limits of reading them."""
