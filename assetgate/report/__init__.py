"""The output formats of check, matrix and rolling runs, and the JSON Schemas of the JSON ones."""
