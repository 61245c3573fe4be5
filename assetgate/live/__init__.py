"""Running servers: ``pull`` per account and per fleet, and predictions compared with what was observed."""
