"""AddRaftVoter (key 80, versions 0-1) and RemoveRaftVoter (key 81, version 0), over the API
layer's voter changes (the ones the Raft service's gRPC methods make).

A voter's directory id travels as a UUID on Kafka's wire and as Kafka's printed form (unpadded
URL-safe base64) in raftmeta; the zero UUID is no directory id. AddRaftVoter v1's
``AckWhenCommitted`` is read and not acted on: the answer always comes once the change has
committed, which is what a client asking not to wait is also told."""

from __future__ import annotations

import uuid
from typing import Any

from raftmeta.errors import KafkaError
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter
from raftmeta.records import uuid_to_str
from raftmeta.server.kafka.context import Fields, KafkaContext, error_fields


def _directory(value: uuid.UUID | None) -> str | None:
    if value is None or value.int == 0:
        return None
    return uuid_to_str(value.bytes)


async def add_raft_voter(context: KafkaContext, request: Any, version: int) -> Fields:
    voter = Voter(
        ReplicaKey(int(request.voter_id), _directory(request.voter_directory_id)),
        tuple(
            Endpoint(listener.name, listener.host, int(listener.port))
            for listener in request.listeners or ()
        ),
    )
    try:
        result = await context.apis.add_raft_voter(
            context.principal, request.cluster_id, voter, int(request.timeout_ms)
        )
    except KafkaError as error:
        return failed(request, version, *error_fields(error))
    return failed(request, version, int(result.error), result.message or None)


async def remove_raft_voter(context: KafkaContext, request: Any, version: int) -> Fields:
    key = ReplicaKey(int(request.voter_id), _directory(request.voter_directory_id))
    try:
        result = await context.apis.remove_raft_voter(context.principal, request.cluster_id, key)
    except KafkaError as error:
        return failed(request, version, *error_fields(error))
    return failed(request, version, int(result.error), result.message or None)


def failed(request: Any, version: int, code: int, message: str | None) -> Fields:
    """The answer of either API: a code and a message (none on success)."""
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message if code else None}
