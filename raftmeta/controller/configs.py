"""Which topic and broker configs the controller accepts, and how values are checked.

A value the controller writes is replayed by every node forever, so it is checked here, at the
edge, with INVALID_CONFIG and a message naming the key. Unknown names are refused too: a typo
such as ``min.insync.replica`` would otherwise be stored and silently do nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from raftmeta.errors import ErrorCode, KafkaError

MIN_INSYNC_REPLICAS = "min.insync.replicas"
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"

Validator = Callable[[str], str | None]
"""Returns a reason the value is bad, or ``None``."""


def _int_at_least(minimum: int) -> Validator:
    def check(value: str) -> str | None:
        try:
            number = int(value.strip())
        except ValueError:
            return "must be an integer"
        return None if number >= minimum else f"must be at least {minimum}"

    return check


def _boolean(value: str) -> str | None:
    return None if value.strip().lower() in ("true", "false") else "must be true or false"


def _one_of(*choices: str) -> Validator:
    def check(value: str) -> str | None:
        return None if value.strip() in choices else f"must be one of {', '.join(choices)}"

    return check


def _cleanup_policy(value: str) -> str | None:
    parts = [part.strip() for part in value.split(",")]
    if parts and all(part in ("delete", "compact") for part in parts):
        return None
    return "must be a list of delete and compact"


TOPIC_CONFIGS: Mapping[str, Validator] = {
    MIN_INSYNC_REPLICAS: _int_at_least(1),
    UNCLEAN_LEADER_ELECTION_ENABLE: _boolean,
    "cleanup.policy": _cleanup_policy,
    "retention.ms": _int_at_least(-1),
    "retention.bytes": _int_at_least(-1),
    "segment.bytes": _int_at_least(14),
    "segment.ms": _int_at_least(1),
    "max.message.bytes": _int_at_least(0),
    "compression.type": _one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    "min.compaction.lag.ms": _int_at_least(0),
    "delete.retention.ms": _int_at_least(0),
}

BROKER_CONFIGS: Mapping[str, Validator] = {
    MIN_INSYNC_REPLICAS: _int_at_least(1),
    UNCLEAN_LEADER_ELECTION_ENABLE: _boolean,
    "log.retention.ms": _int_at_least(-1),
    "log.retention.bytes": _int_at_least(-1),
    "log.cleanup.policy": _cleanup_policy,
    "compression.type": _one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    "message.max.bytes": _int_at_least(0),
}


def check_config(known: Mapping[str, Validator], kind: str, name: str, value: str | None) -> None:
    """Raises INVALID_CONFIG for an unknown name or a bad value; ``None`` (delete) is fine."""
    validator = known.get(name)
    if validator is None:
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown {kind} config name: {name}")
    if value is None:
        return
    reason = validator(value)
    if reason is not None:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {name}: {reason}"
        )
