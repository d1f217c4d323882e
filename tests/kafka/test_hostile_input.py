"""Hostile request bodies on the KAFKA listener: every served API at every served version, with
values drawn from its own schema (nulls where the schema forbids them too, names up to and past
Kafka's 2-byte string length, extreme integers), against a running quorum.

Every request is answered (its correlation id, a body the client's codec reads) or the
connection is closed as Kafka closes it for a request it cannot parse, with the refusal logged
as such; no handler raises (no traceback is logged), and the controllers keep serving. Then the
findings one by one: a null name where the schema forbids it, Metadata v12 by topic id, a name
near 32 KiB, and UpdateFeatures' validate-only refusing what the real update refuses."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import socket
import struct
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.admin import (
    CreateTopicsRequest,
    CreateTopicsResponse,
    DescribeTopicPartitionsRequest,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from raftmeta.errors import ErrorCode
from raftmeta.kafka_protocol import codec
from raftmeta.server.kafka.listener import SERVED
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.kafka.test_security import secured
from tests.kafka.test_wire import connect, read_response, request
from tests.support.waiting import wait_until

EXAMPLES_PER_API = 40
"""Hypothesis examples per API: enough to mix nulls, long names and extreme numbers across
versions, few enough that the whole fuzz runs in well under a minute."""
LONG_NAME_CHARS = (249, 32_760, 32_767, 40_000)
"""Kafka's longest topic name, names at and near the 2-byte string limit, and one past it
(which only a flexible version's compact string can carry)."""
TIMEOUT_S = 15.0
SANE_MESSAGE_CHARS = 1024
"""The longest error message an answer may carry, whatever name it quotes."""
INTEGER_EDGES = {
    "int8": (-(2**7), -1, 0, 1, 2**7 - 1),
    "int16": (-(2**15), -1, 0, 1, 3, 2**15 - 1),
    "int32": (-(2**31), -1, 0, 1, 3, 2**31 - 1),
    "int64": (-(2**63), -1, 0, 1, 2**63 - 1),
    "uint16": (0, 1, 2**16 - 1),
}


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    root: Path = tmp_path_factory.mktemp("kafka-hostile")
    with kafka_quorum(root, brokers=1) as running:
        yield running


def strings() -> st.SearchStrategy[str | None]:
    return st.one_of(
        st.none(),
        st.text(max_size=12),
        st.sampled_from(LONG_NAME_CHARS).map(lambda size: "t" * size),
    )


def primitive(type_name: str) -> st.SearchStrategy[Any]:
    if type_name in INTEGER_EDGES:
        return st.sampled_from(INTEGER_EDGES[type_name])
    if type_name == "bool":
        return st.booleans()
    if type_name == "string":
        return strings()
    if type_name in ("bytes", "records"):
        return st.one_of(st.none(), st.binary(max_size=16))
    if type_name == "uuid":
        return st.one_of(st.just(uuid.UUID(int=0)), st.uuids())
    if type_name == "float64":
        return st.floats(allow_nan=False)
    raise AssertionError(f"no strategy for {type_name}")


def values_of(cls: type[Any], version: int) -> st.SearchStrategy[dict[str, Any]]:
    """Every field ``cls`` carries at ``version``, nullable or not, with hostile values."""
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for name, field in cls.fields.items():
        if not field.for_version_q(version):
            continue
        if field.is_struct_array():
            items = st.lists(values_of(field.data_class, version), max_size=3)
            fields[name] = st.one_of(st.none(), items)
        elif field.is_struct():
            fields[name] = st.one_of(st.none(), values_of(field.data_class, version))
        elif field.is_array():
            inner = primitive(field.type_str.removeprefix("[]"))
            fields[name] = st.one_of(st.none(), st.lists(inner, max_size=3))
        else:
            fields[name] = primitive(field.type_str)
    return st.fixed_dictionaries(fields)


def framed(api_key: int, version: int, correlation_id: int, values: dict[str, Any]) -> bytes:
    """The request, framed by the client library, which writes a null into any string or
    array (nullable or not); ``CodecError`` for what it cannot write (a string past 32767
    bytes before the flexible versions)."""
    return codec.encode_request(api_key, version, correlation_id, "hostile", values)


class Session:
    """One connection, reopened after the listener closes it."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.sock: socket.socket | None = None

    def exchange(self, frame: bytes) -> bytes | None:
        if self.sock is None:
            self.sock = connect(self.address)
        self.sock.sendall(frame)
        answer = read_response(self.sock)
        if answer is None:
            self.close()
        return answer

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def tracebacks(records: list[logging.LogRecord]) -> list[str]:
    return [
        record.getMessage()
        for record in records
        if record.exc_info is not None or record.levelno >= logging.ERROR
    ]


def refusals(records: list[logging.LogRecord]) -> int:
    return sum("closed the connection" in record.getMessage() for record in records)


def fuzz_one_api(
    address: str, api_key: int, correlation_id: int, caplog: pytest.LogCaptureFixture
) -> None:
    """Hypothesis-drawn bodies of ``api_key`` at every served version, sent on one connection
    to ``address``: each is answered with a decodable response or the connection is closed
    with a logged refusal, and no handler logs a traceback."""
    api = SERVED[api_key]
    cls = codec._REQUESTS[api_key]
    session = Session(address)
    caplog.set_level(logging.INFO)

    @settings(
        max_examples=EXAMPLES_PER_API,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(data=st.data())
    def one_request(data: st.DataObject) -> None:
        version = data.draw(st.integers(api.low, api.high), label="version")
        values = data.draw(values_of(cls, version), label="values")
        try:
            frame = framed(api_key, version, correlation_id, values)
        except codec.CodecError:
            return  # not writable at this version (a 40 000-char name before flexible ones)
        refused_before = refusals(caplog.records)
        answer = session.exchange(frame)
        if answer is None:
            assert refusals(caplog.records) > refused_before, "closed without a logged refusal"
        else:
            assert codec.correlation_id_of(answer) == correlation_id
            codec.decode_response(answer, api_key, version)
        assert tracebacks(caplog.records) == []

    try:
        one_request()
    finally:
        session.close()


@pytest.mark.parametrize("api_key", sorted(SERVED))
def test_every_served_api_answers_or_refuses_hostile_bodies(
    quorum: KafkaQuorum, api_key: int, caplog: pytest.LogCaptureFixture
) -> None:
    fuzz_one_api(quorum.kafka_address(quorum.active()), api_key, 4242, caplog)
    assert tracebacks(caplog.records) == []
    # An UnregisterBroker body may have named the live broker, which then registers again:
    # the tests after this one need it unfenced.
    wait_until(
        lambda: len(quorum.unfenced()) == quorum.broker_count, "the broker unfenced", TIMEOUT_S
    )
    # The listener still serves.
    with connect(quorum.kafka_address(quorum.active())) as sock:
        sock.sendall(request(MetadataRequest[1](topics=[]), 9))
        assert read_response(sock) is not None


def test_a_null_where_the_schema_forbids_it_closes_the_connection_without_a_traceback(
    quorum: KafkaQuorum, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    frames = [
        request(
            DescribeTopicPartitionsRequest[0](
                topics=[DescribeTopicPartitionsRequest.TopicRequest(name=None)],
                response_partition_limit=10,
                cursor=None,
            ),
            1,
        ),
        request(
            DescribeTopicPartitionsRequest[0](
                topics=[DescribeTopicPartitionsRequest.TopicRequest(name="a")],
                response_partition_limit=10,
                cursor=DescribeTopicPartitionsRequest.Cursor(topic_name=None, partition_index=0),
            ),
            2,
        ),
        request(
            CreateTopicsRequest[5](
                topics=[
                    CreateTopicsRequest.CreatableTopic(
                        name="null-config",
                        num_partitions=1,
                        replication_factor=1,
                        assignments=[],
                        configs=[
                            CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(
                                name=None, value="1"
                            )
                        ],
                    )
                ],
                timeout_ms=5000,
                validate_only=True,
            ),
            3,
        ),
    ]
    for frame in frames:
        with connect(quorum.kafka_address(quorum.active())) as sock:
            sock.sendall(frame)
            assert read_response(sock) is None
    assert tracebacks(caplog.records) == []
    assert sum("serialized as null" in r.getMessage() for r in caplog.records) == len(frames)


def metadata_v12(address: str, topic_ids: list[uuid.UUID]) -> Any:
    topics = [MetadataRequest.MetadataRequestTopic(name=None, topic_id=i) for i in topic_ids]
    with connect(address) as sock:
        sock.sendall(
            request(
                MetadataRequest[12](
                    topics=topics,
                    allow_auto_topic_creation=False,
                    include_topic_authorized_operations=False,
                ),
                5,
            )
        )
        payload = read_response(sock)
    assert payload is not None
    return MetadataResponse.decode(payload, version=12, header=True)


def test_metadata_v12_looks_topics_up_by_id(
    quorum: KafkaQuorum, caplog: pytest.LogCaptureFixture
) -> None:
    quorum.call(quorum.quorum.create_topic("by-id", 2, 1))
    quorum.wait_for_topic_everywhere("by-id")
    controller = quorum.active().maybe_controller
    assert controller is not None
    (topic_id,) = [
        key for key, topic in controller.committed_image.topics.items() if topic.name == "by-id"
    ]
    unknown = uuid.uuid4()
    answer = metadata_v12(
        quorum.kafka_address(quorum.active()),
        [uuid.UUID(bytes=bytes(topic_id)), unknown, uuid.UUID(int=0)],
    )
    found = {(t.name, t.topic_id, t.error_code, len(t.partitions)) for t in answer.topics}
    assert found == {
        ("by-id", uuid.UUID(bytes=bytes(topic_id)), 0, 2),
        (None, unknown, int(ErrorCode.UNKNOWN_TOPIC_ID), 0),
        (None, None, int(ErrorCode.INVALID_REQUEST), 0),  # the zero id reads back as None
    }
    assert tracebacks(caplog.records) == []


@pytest.mark.parametrize("version", [2, 4, 5, 7])
def test_a_name_near_32_kib_is_answered_with_a_message_that_fits(
    quorum: KafkaQuorum, version: int, caplog: pytest.LogCaptureFixture
) -> None:
    name = "n" * 32_760
    with connect(quorum.kafka_address(quorum.active())) as sock:
        sock.sendall(
            request(
                CreateTopicsRequest[version](
                    topics=[
                        CreateTopicsRequest.CreatableTopic(
                            name=name,
                            num_partitions=1,
                            replication_factor=1,
                            assignments=[],
                            configs=[],
                        )
                    ],
                    timeout_ms=5000,
                    validate_only=True,
                ),
                6,
            )
        )
        payload = read_response(sock)
    assert payload is not None, "the request was dropped"
    answer = CreateTopicsResponse.decode(payload, version=version, header=True)
    (topic,) = answer.topics
    assert topic.name == name
    assert topic.error_code == int(ErrorCode.INVALID_TOPIC_EXCEPTION)
    assert len(topic.error_message) <= SANE_MESSAGE_CHARS
    assert tracebacks(caplog.records) == []


def update_features(address: str, name: str, level: int, validate_only: bool) -> Any:
    with connect(address) as sock:
        sock.sendall(
            request(
                UpdateFeaturesRequest[1](
                    timeout_ms=5000,
                    feature_updates=[
                        UpdateFeaturesRequest.FeatureUpdateKey(
                            feature=name, max_version_level=level, upgrade_type=1
                        )
                    ],
                    validate_only=validate_only,
                ),
                7,
            )
        )
        payload = read_response(sock)
    assert payload is not None
    return UpdateFeaturesResponse.decode(payload, version=1, header=True)


@pytest.mark.parametrize(
    ("name", "code"),
    [("", ErrorCode.INVALID_REQUEST), ("no.such.feature", ErrorCode.INVALID_UPDATE_VERSION)],
)
def test_update_features_validate_only_refuses_what_the_update_refuses(
    quorum: KafkaQuorum, name: str, code: ErrorCode
) -> None:
    address = quorum.kafka_address(quorum.active())
    checked = update_features(address, name, 0, validate_only=True)
    applied = update_features(address, name, 0, validate_only=False)
    assert checked.error_code == applied.error_code == int(code)
    assert checked.error_message == applied.error_message


def test_a_sasl_listener_reads_no_large_frame_before_the_login(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    for running in secured(tmp_path, "SASL_PLAINTEXT"):
        with connect(running.address) as sock:
            sock.sendall(struct.pack(">i", 2**20))  # a 1 MiB frame's size, and no body
            sock.settimeout(TIMEOUT_S)
            with contextlib.suppress(ConnectionResetError):
                assert sock.recv(1) == b"", "closed without waiting for the body"
    assert any("524288" in record.getMessage() for record in caplog.records)
    assert tracebacks(caplog.records) == []


@pytest.mark.parametrize("version", [2, 5])
def test_a_failing_handler_is_answered_with_kafkas_error_response(
    quorum: KafkaQuorum, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CreateTopics has no top-level error code: the failure lands on every topic asked."""

    async def failing(context: Any, request: Any, version: int) -> Any:
        raise RuntimeError("a handler that fails")

    served = SERVED[19]
    monkeypatch.setitem(SERVED, 19, dataclasses.replace(served, handler=failing))
    topics = [
        CreateTopicsRequest.CreatableTopic(
            name=name, num_partitions=1, replication_factor=1, assignments=[], configs=[]
        )
        for name in ("failing-a", "failing-b")
    ]
    with connect(quorum.kafka_address(quorum.active())) as sock:
        sock.sendall(
            request(
                CreateTopicsRequest[version](topics=topics, timeout_ms=5000, validate_only=True),
                8,
            )
        )
        payload = read_response(sock)
    assert payload is not None, "the request was dropped"
    answer = CreateTopicsResponse.decode(payload, version=version, header=True)
    assert [(t.name, t.error_code) for t in answer.topics] == [
        ("failing-a", int(ErrorCode.UNKNOWN_SERVER_ERROR)),
        ("failing-b", int(ErrorCode.UNKNOWN_SERVER_ERROR)),
    ]
