"""The KAFKA listener's framing and versions, with raw sockets: pipelined requests answered in
order, ApiVersions and unserved versions answered as Kafka does, NOT_CONTROLLER from a
follower, and bad frames (a Hypothesis fuzz) answered with an error or a closed connection
while the controller keeps serving and nothing is created."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    MetadataRequest,
    MetadataResponse,
)

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from tests.kafka.quorum import KafkaQuorum, kafka_quorum

TIMEOUT_S = 10.0


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    root: Path = tmp_path_factory.mktemp("kafka-wire")
    with kafka_quorum(root, brokers=1) as running:
        yield running


def connect(address: str) -> socket.socket:
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=TIMEOUT_S)


def read_exact(sock: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_response(sock: socket.socket) -> bytes | None:
    """One response frame's payload, or None if the listener closed the connection."""
    prefix = read_exact(sock, 4)
    if prefix is None:
        return None
    return read_exact(sock, struct.unpack(">i", prefix)[0])


def request(message: object, correlation_id: int) -> bytes:
    message.with_header(correlation_id=correlation_id, client_id="wire-test")  # type: ignore[attr-defined]
    return bytes(message.encode(header=True, framed=True))  # type: ignore[attr-defined]


def api_versions(address: str, version: int = 3) -> ApiVersionsResponse:
    with connect(address) as sock:
        sock.sendall(request(ApiVersionsRequest[version](), 1))
        payload = read_response(sock)
    assert payload is not None
    return ApiVersionsResponse.decode(payload, version=version, header=True)


def test_api_versions_and_an_unsupported_version_answered_with_v0(quorum: KafkaQuorum) -> None:
    address = quorum.kafka_address(quorum.active())
    served = api_versions(address, 3)
    assert served.error_code == 0
    ranges = {key.api_key: (key.min_version, key.max_version) for key in served.api_keys}
    assert ranges[18] == (0, 4) and ranges[43] == (0, 2) and ranges[3] == (0, 12)

    # A version newer than served (the codec writes none, so the header is built by hand).
    client_id = b"wire-test"
    header = struct.pack(">hhih", 18, 5, 1, len(client_id)) + client_id + b"\x00\x00\x00"
    with connect(address) as sock:
        sock.sendall(struct.pack(">i", len(header)) + header)
        payload = read_response(sock)
    assert payload is not None
    refused = ApiVersionsResponse.decode(payload, version=0, header=True)
    assert refused.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert {key.api_key for key in refused.api_keys} == set(ranges)


def test_pipelined_requests_are_answered_in_order(quorum: KafkaQuorum) -> None:
    address = quorum.kafka_address(quorum.active())
    frames = b"".join(
        request(MetadataRequest[12](topics=None) if n % 2 else ApiVersionsRequest[3](), n)
        for n in range(40)
    )
    # Metadata v13 is not served; its schema has a top-level error code to carry that.
    frames += request(MetadataRequest[13](topics=None), 40)
    with connect(address) as sock:
        sock.sendall(frames)
        payloads = [read_response(sock) for _ in range(41)]
    correlation_ids = [struct.unpack_from(">i", p)[0] for p in payloads if p is not None]
    assert correlation_ids == list(range(41))
    metadata = MetadataResponse.decode(payloads[1], version=12, header=True)
    assert metadata.controller_id == quorum.active().node_id
    unserved = MetadataResponse.decode(payloads[40], version=13, header=True)
    assert unserved.error_code == ErrorCode.UNSUPPORTED_VERSION


def test_a_follower_answers_create_topics_with_not_controller(quorum: KafkaQuorum) -> None:
    follower = quorum.follower()
    topic = CreateTopicsRequest.CreatableTopic(
        name="elsewhere", num_partitions=1, replication_factor=1, assignments=[], configs=[]
    )
    with connect(quorum.kafka_address(follower)) as sock:
        sock.sendall(request(CreateTopicsRequest[7](topics=[topic], timeout_ms=5000), 9))
        payload = read_response(sock)
    assert payload is not None
    (result,) = CreateTopicsResponse.decode(payload, version=7, header=True).topics
    assert result.error_code == ErrorCode.NOT_CONTROLLER
    assert str(quorum.active().node_id) in result.error_message


def test_an_oversized_frame_closes_the_connection(quorum: KafkaQuorum) -> None:
    address = quorum.kafka_address(quorum.active())
    with connect(address) as sock:
        sock.sendall(struct.pack(">i", 104_857_601) + b"\x00" * 64)
        assert read_response(sock) is None
    assert api_versions(address).error_code == 0


_HEADER = struct.Struct(">hhi")
frames = st.one_of(
    st.binary(max_size=64).map(lambda body: struct.pack(">i", len(body)) + body),
    st.binary(max_size=64),  # truncated or no frame at all
    st.tuples(
        st.sampled_from([3, 18, 19, 20, 37, 43, 60, 0, 1, 57, 999, -1]),
        st.integers(-1, 20),
        st.binary(max_size=48),
    ).map(
        lambda parts: (lambda body: struct.pack(">i", len(body)) + body)(
            _HEADER.pack(parts[0], parts[1], 77) + parts[2]
        )
    ),
    st.integers(104_857_601, 2**31 - 1).map(lambda size: struct.pack(">i", size)),
    st.integers(-(2**31), 7).map(lambda size: struct.pack(">i", size) + b"\x00" * 8),
)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(frame=frames)
def test_bad_frames_get_an_error_or_a_closed_connection(quorum: KafkaQuorum, frame: bytes) -> None:
    address = quorum.kafka_address(quorum.active())
    with connect(address) as sock:
        sock.sendall(frame)
        sock.shutdown(socket.SHUT_WR)  # a truncated frame then ends the stream
        payload = read_response(sock)
    if payload is not None:
        # A well-formed response, to the request the frame's header names.
        assert (
            len(frame) >= 12
            and struct.unpack_from(">i", payload)[0] == struct.unpack_from(">i", frame, 8)[0]
        )
    assert api_versions(address).error_code == 0  # the listener keeps serving
    described = quorum.grpc("DescribeTopics", apb.DescribeTopicsRequest(all_topics=True))
    assert [topic.name for topic in described.topics] == []  # nothing was created


def test_a_secured_kafka_listener_without_what_it_needs_is_a_configuration_error(
    tmp_path: Path,
) -> None:
    from types import SimpleNamespace
    from typing import Any, cast

    from raftmeta.auth import AccessControl
    from raftmeta.config.errors import ConfigError
    from raftmeta.config.node import parse_config
    from raftmeta.server.kafka.listener import start_kafka_listener
    from raftmeta.server.service_base import ControllerHost

    def settings(protocol: str) -> Any:
        return parse_config(
            {
                "node.id": 1,
                "controller.quorum.voters": "1@127.0.0.1:9093",
                "metadata.log.dir": str(tmp_path),
                "listeners": "CONTROLLER://127.0.0.1:9093,KAFKA://127.0.0.1:0",
                "listener.security.protocol.map": f"CONTROLLER:PLAINTEXT,KAFKA:{protocol}",
            }
        )

    owner = cast(ControllerHost, SimpleNamespace(access=AccessControl()))
    with pytest.raises(ConfigError, match=r"^Invalid configuration ssl\.keystore\.location"):
        asyncio.run(start_kafka_listener(owner, settings("SSL")))
    with pytest.raises(ConfigError, match=r"SASL_PLAINTEXT.*raftmeta\.auth\.tokens\.file"):
        asyncio.run(start_kafka_listener(owner, settings("SASL_PLAINTEXT")))
