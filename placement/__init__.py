"""Replica placement (KIP-660): pluggable placers, pure functions of the usable brokers."""
