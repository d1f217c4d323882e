"""Kafka protocol error codes, shared by the consensus core, the controller and the clients.

The numeric values are Kafka's, so that scripts and clients written against Kafka read the same
codes from raftmeta.
"""

from __future__ import annotations

import enum


class ErrorCode(enum.IntEnum):
    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
    CLUSTER_AUTHORIZATION_FAILED = 31
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    INVALID_CONFIG = 40
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    POLICY_VIOLATION = 44
    TOPIC_ALREADY_EXISTS = 36
    UNSUPPORTED_VERSION = 35
    INVALID_TOPIC_EXCEPTION = 17
    UNSUPPORTED_SASL_MECHANISM = 33
    ILLEGAL_SASL_STATE = 34
    TOPIC_AUTHORIZATION_FAILED = 29
    SASL_AUTHENTICATION_FAILED = 58
    INCONSISTENT_VOTER_SET = 68
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    STALE_BROKER_EPOCH = 77
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    NO_REASSIGNMENT_IN_PROGRESS = 85
    INVALID_UPDATE_VERSION = 95
    UNKNOWN_TOPIC_ID = 100
    SECURITY_DISABLED = 54
    OPERATION_NOT_ATTEMPTED = 55
    SNAPSHOT_NOT_FOUND = 98
    POSITION_OUT_OF_RANGE = 99
    DUPLICATE_BROKER_REGISTRATION = 101
    BROKER_ID_NOT_REGISTERED = 102
    INCONSISTENT_CLUSTER_ID = 104
    INELIGIBLE_REPLICA = 107
    NEW_LEADER_ELECTED = 108
    """AlterPartition: the change was written, and it elected another leader (a reassignment
    completed that removed the sender)."""
    INVALID_REGISTRATION = 119
    INVALID_VOTER_KEY = 125
    """KIP-853: the (node id, directory id) named is not the voter, or not this replica."""
    DUPLICATE_VOTER = 126
    VOTER_NOT_FOUND = 127
    REPLICA_PLACEMENT_FAILED = 1000
    """Not a Kafka code: KIP-660 never shipped. Chosen outside Kafka's range so it cannot clash."""


class KafkaError(Exception):
    """An error that reaches a user as a Kafka error code with a message."""

    def __init__(self, code: ErrorCode, message: str = "") -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message or code.name

    def __repr__(self) -> str:
        return f"KafkaError({self.code.name}, {self.message!r})"
