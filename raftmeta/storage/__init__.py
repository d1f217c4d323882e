"""Durable storage: segmented log, quorum-state file, snapshots, meta.properties."""
