"""What a Kafka API handler sees: the node it answers for, its Admin service and its listener."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server.admin_service import AdminService
from raftmeta.server.service_base import ControllerHost

Fields = dict[str, Any]
"""A response body as plain values, for :func:`raftmeta.kafka_protocol.codec.encode_response`."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    host: str
    port: int


@dataclass(slots=True)
class KafkaContext:
    """One node's Kafka listener, as its handlers need it.

    ``admin`` is the node's gRPC Admin service, called in-process without a gRPC context: every
    write goes through the same validation, records and error codes as a gRPC call.
    """

    owner: ControllerHost
    admin: AdminService
    endpoint: Endpoint
    """Where this listener is reached, as clients are told (Metadata, DescribeCluster)."""
    call: CallCredentials | None = None
    """Who the connection authenticated as, in the shape the Admin service reads a gRPC
    caller from (``None``: nobody, so the anonymous principal)."""
    registrations_seen: dict[int, tuple[bytes, int]] = field(default_factory=dict)
    """Each controller's registration incarnation and when (monotonic ms) this listener first
    saw it, shared by the listener's connections (see ``cluster.metadata_nodes``)."""


@dataclass(frozen=True, slots=True)
class CallCredentials:
    """A Kafka connection's authenticated caller, presented to the Admin service as a gRPC
    call's metadata, so that it names the same principal as a gRPC caller would."""

    metadata: tuple[tuple[str, str], ...]

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata


def header_error(header: apb.ResponseHeader) -> tuple[int, str | None]:
    """A gRPC response header's code and message, as Kafka fields (``None``: no message)."""
    code = int(header.error_code)
    return code, (header.error_message or ErrorCode(code).name) if code else None
