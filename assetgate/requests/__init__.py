"""One request at a time: would a release accept this create or update, and what would it store."""
