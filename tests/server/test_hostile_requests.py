"""Hostile requests to the Admin and BrokerLifecycle services of a real three-controller quorum.

Each one gets a Kafka error code with a message at once, never a gRPC error, never
UNKNOWN_SERVER_ERROR (an exception inside a handler), and the quorum keeps committing after it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import descriptor as pbd  # type: ignore[import-untyped]
from google.protobuf.message import Message  # type: ignore[import-untyped]
from google.protobuf.message_factory import GetMessageClass  # type: ignore[import-untyped]
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import broker_pb2 as bpb
from raftmeta.rpc import raft_pb2 as rpb
from tests.support.controller_quorum import CLUSTER_ID, ControllerQuorum
from tests.support.scenario import run_scenario

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def registration(broker_id: int) -> bpb.RegisterBrokerRequest:
    return bpb.RegisterBrokerRequest(
        broker_id=broker_id,
        cluster_id=CLUSTER_ID,
        incarnation_id=uuid.uuid4().bytes,
        listeners=[bpb.Listener(name="PLAINTEXT", host="127.0.0.1", port=9092)],
    )


def test_oversized_topic_requests_answer_at_once_and_the_leader_stays(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        for broker_id in (1, 2, 3):
            await cluster.register(broker_id)
        active = await cluster.wait_for_active()
        admin = await cluster.active_admin()
        quorum = rpb.DescribeQuorumRequest(cluster_id=CLUSTER_ID)
        epoch = (await admin.DescribeQuorum(quorum, timeout=10)).leader_epoch
        await cluster.create_topic("t", partitions=1, replication_factor=3)

        started = time.monotonic()
        huge = await admin.CreateTopics(
            apb.CreateTopicsRequest(
                topics=[apb.NewTopic(name="huge", num_partitions=INT32_MAX, replication_factor=1)],
                validate_only=True,
            ),
            timeout=10,
        )
        assert huge.header.error_code == ErrorCode.POLICY_VIOLATION, huge
        assert huge.header.error_message == "Excessively large number of partitions per request."
        grown = await admin.CreatePartitions(
            apb.CreatePartitionsRequest(
                topics=[apb.CreatePartitionsTopic(name="t", count=INT32_MAX)]
            ),
            timeout=10,
        )
        assert grown.header.error_code == 0
        assert [r.error_code for r in grown.results] == [ErrorCode.POLICY_VIOLATION]
        assert str(INT32_MAX - 1) in grown.results[0].error_message
        wide = await admin.CreateTopics(
            apb.CreateTopicsRequest(
                topics=[apb.NewTopic(name="wide", num_partitions=1, replication_factor=4)]
            ),
            timeout=10,
        )
        assert [t.error_code for t in wide.topics] == [ErrorCode.INVALID_REPLICATION_FACTOR]
        assert time.monotonic() - started < 5

        twice = await admin.DeleteTopics(
            apb.DeleteTopicsRequest(topic_names=["t", "t"]), timeout=10
        )
        assert [(r.error_code, r.error_message) for r in twice.results] == [
            (ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
        ] * 2
        twice_grown = await admin.CreatePartitions(
            apb.CreatePartitionsRequest(
                topics=[
                    apb.CreatePartitionsTopic(name="t", count=2),
                    apb.CreatePartitionsTopic(name="t", count=3),
                ]
            ),
            timeout=10,
        )
        assert [r.error_code for r in twice_grown.results] == [ErrorCode.INVALID_REQUEST] * 2

        # The same leader, in the same epoch, still commits.
        assert (await cluster.wait_for_active()).node_id == active.node_id
        assert (await admin.DescribeQuorum(quorum, timeout=10)).leader_epoch == epoch
        await cluster.create_topic("after", partitions=3, replication_factor=3)
        described = await admin.DescribeTopics(apb.DescribeTopicsRequest(topic_names=["t"]))
        assert len(described.topics[0].partitions) == 1

    run_scenario(scenario, ControllerQuorum(tmp_path))


def test_broker_ids_of_controllers_and_negative_ids_are_refused(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        stub = await cluster.active_lifecycle()
        for broker_id in (cluster.ids[0], cluster.ids[-1], -2, INT32_MIN):
            reply = await stub.RegisterBroker(registration(broker_id), timeout=10)
            assert reply.header.error_code == ErrorCode.INVALID_REGISTRATION, reply
            assert str(broker_id) in reply.header.error_message
            assert reply.broker_epoch == -1
        gone = await stub.UnregisterBroker(bpb.UnregisterBrokerRequest(broker_id=66), timeout=10)
        assert gone.header.error_code == ErrorCode.BROKER_ID_NOT_REGISTERED
        admin = await cluster.active_admin()
        described = await admin.DescribeCluster(apb.DescribeClusterRequest(), timeout=10)
        assert list(described.brokers) == []
        await cluster.register(1)

    run_scenario(scenario, ControllerQuorum(tmp_path))


# --- random field values --------------------------------------------------------------------

_ints32 = st.one_of(
    st.integers(-3, 6),
    st.sampled_from([INT32_MIN, INT32_MAX, INT32_MAX - 1, 10_001, 65_536, 2**15, 3000]),
    st.integers(INT32_MIN, INT32_MAX),
)
_ints64 = st.one_of(
    st.integers(-3, 100),
    st.sampled_from([INT64_MIN, INT64_MAX, INT32_MAX + 1]),
    st.integers(INT64_MIN, INT64_MAX),
)
_text = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=12),
    st.sampled_from(["t", "a", "PLAINTEXT", "", ".", "x" * 300]),
)
_names = st.one_of(st.sampled_from(["t", "a", "b", "t", "retention.ms", "cleanup.policy"]), _text)
_values = st.one_of(
    st.sampled_from(["1", "-1", str(2**63), "delete", "true", "9" * 5000, "delete," * 1000]), _text
)
_FIELD_OVERRIDES: dict[str, st.SearchStrategy[Any]] = {
    "cluster_id": st.one_of(st.just(CLUSTER_ID), _text),
    "incarnation_id": st.one_of(st.binary(min_size=16, max_size=16), st.binary(max_size=20)),
    "topic_id": st.one_of(st.binary(min_size=16, max_size=16), st.binary(max_size=20)),
    "name": _names,
    "topic": _names,
    "value": _values,
    "timeout_ms": st.one_of(st.integers(-1, 3000), _ints32),
}


_NOT_OVERRIDDEN = frozenset(
    (
        pbd.FieldDescriptor.TYPE_MESSAGE,
        pbd.FieldDescriptor.TYPE_DOUBLE,
        pbd.FieldDescriptor.TYPE_FLOAT,
    )
)
"""Field types an override by name does not apply to: a quota's ``value`` is a number (any,
NaN and the infinities included), a config's is text."""


def _field_values(field: pbd.FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    kind = field.type
    if field.name in _FIELD_OVERRIDES and kind not in _NOT_OVERRIDDEN:
        return _FIELD_OVERRIDES[field.name]
    if kind in (pbd.FieldDescriptor.TYPE_DOUBLE, pbd.FieldDescriptor.TYPE_FLOAT):
        return st.floats(width=32 if kind == pbd.FieldDescriptor.TYPE_FLOAT else 64)
    if kind in (pbd.FieldDescriptor.TYPE_INT32, pbd.FieldDescriptor.TYPE_SINT32):
        return _ints32
    if kind in (pbd.FieldDescriptor.TYPE_INT64, pbd.FieldDescriptor.TYPE_SINT64):
        return _ints64
    if kind == pbd.FieldDescriptor.TYPE_UINT32:
        return st.integers(0, 2**32 - 1)
    if kind == pbd.FieldDescriptor.TYPE_UINT64:
        return st.integers(0, 2**64 - 1)
    if kind == pbd.FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind == pbd.FieldDescriptor.TYPE_STRING:
        return _text
    if kind == pbd.FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=20)
    if kind == pbd.FieldDescriptor.TYPE_ENUM:
        return st.sampled_from([value.number for value in field.enum_type.values])
    if kind == pbd.FieldDescriptor.TYPE_MESSAGE:
        return messages(field.message_type, depth + 1)
    raise AssertionError(f"no strategy for field {field.full_name}")


def messages(descriptor: pbd.Descriptor, depth: int = 0) -> st.SearchStrategy[Message]:
    """Messages of ``descriptor`` with arbitrary values in arbitrary fields."""
    message_class: Any = GetMessageClass(descriptor)
    if depth > 3:
        return st.just(message_class())
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for field in descriptor.fields:
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            key = _field_values(field.message_type.fields_by_name["key"], depth)
            value = _field_values(field.message_type.fields_by_name["value"], depth)
            parts[field.name] = st.dictionaries(key, value, max_size=3)
        elif field.is_repeated:
            parts[field.name] = st.lists(_field_values(field, depth), max_size=3)
        else:
            parts[field.name] = _field_values(field, depth)

    @st.composite
    def build(draw: st.DrawFn) -> Message:
        message = message_class()
        for name, strategy in parts.items():
            if not draw(st.booleans()):
                continue  # unset: the field's default
            value = draw(strategy)
            field = descriptor.fields_by_name[name]
            if isinstance(value, dict):
                target = getattr(message, name)
                for key, item in value.items():
                    if isinstance(item, Message):
                        target[key].CopyFrom(item)
                    else:
                        target[key] = item
            elif isinstance(value, list):
                target = getattr(message, name)
                for item in value:
                    if isinstance(item, Message):
                        target.add().CopyFrom(item)
                    else:
                        target.append(item)
            elif field.type == pbd.FieldDescriptor.TYPE_MESSAGE:
                getattr(message, name).CopyFrom(value)
            else:
                setattr(message, name, value)
        return message

    return build()


def _methods(module: Any, service: str) -> list[tuple[str, str, pbd.Descriptor]]:
    return [
        (service, method.name, method.input_type)
        for method in module.DESCRIPTOR.services_by_name[service].methods
    ]


CALLS = _methods(apb, "Admin") + _methods(bpb, "BrokerLifecycle")
REQUESTS = {name: messages(descriptor) for _service, name, descriptor in CALLS}


def unknown_server_errors(reply: Message) -> list[str]:
    """Every ``error_code`` in ``reply`` (nested ones too) that says a handler raised."""
    found: list[str] = []
    for field, value in reply.ListFields():
        if field.name == "error_code" and value == ErrorCode.UNKNOWN_SERVER_ERROR:
            found.append(f"{reply.DESCRIPTOR.name}.error_code")
        elif field.type == pbd.FieldDescriptor.TYPE_MESSAGE:
            if field.message_type.GetOptions().map_entry:
                items = [v for v in value.values() if isinstance(v, Message)]
            elif field.is_repeated:
                items = list(value)
            else:
                items = [value]
            for item in items:
                found.extend(unknown_server_errors(item))
    return found


def test_random_field_values_get_kafka_errors_never_unknown(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        for broker_id in (1, 2, 3):
            await cluster.register(broker_id)
        await cluster.create_topic("t", partitions=2, replication_factor=2)
        loop = asyncio.get_running_loop()
        active = await cluster.wait_for_active()
        follower = await cluster.follower()
        stubs = {
            ("Admin", True): cluster.admin(active.node_id),
            ("BrokerLifecycle", True): cluster.lifecycle(active.node_id),
            ("Admin", False): cluster.admin(follower.node_id),
            ("BrokerLifecycle", False): cluster.lifecycle(follower.node_id),
        }
        calls = 0

        def send(stub: Any, method: str, request: Message) -> Message:
            async def call() -> Message:
                reply: Message = await getattr(stub, method)(request, timeout=20)
                return reply

            try:
                return asyncio.run_coroutine_threadsafe(call(), loop).result(30)
            except grpc.aio.AioRpcError as error:
                raise AssertionError(
                    f"{method}({request}) failed with gRPC {error.code()}: {error.details()}"
                ) from None

        @settings(
            max_examples=300,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.data())
        def fuzz(data: st.DataObject) -> None:
            nonlocal calls
            service, method, _descriptor = data.draw(st.sampled_from(CALLS), label="method")
            to_active = data.draw(st.booleans(), label="active")
            request = data.draw(REQUESTS[method], label="request")
            reply = send(stubs[(service, to_active)], method, request)
            calls += 1
            assert not unknown_server_errors(reply), (method, request, reply)

        await asyncio.to_thread(fuzz)
        assert calls >= 300

        # The quorum still elects, registers and commits.
        await cluster.register(4242)
        await cluster.create_topic("after-fuzz", partitions=1, replication_factor=1)

    run_scenario(scenario, ControllerQuorum(tmp_path), 180)


def test_undecodable_bodies_are_invalid_argument_never_unknown(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        active = await cluster.wait_for_active()
        channel = cluster.channel(active.node_id)
        bodies = [b"\xff", b"\x0a\xff\xff\xff", b"\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80"]
        refused = 0
        for service, method, _descriptor in CALLS:
            package = "raftmeta.admin.v1" if service == "Admin" else "raftmeta.broker.v1"
            call = channel.unary_unary(f"/{package}.{service}/{method}")
            for body in bodies:
                try:
                    await call(body, timeout=10)
                except grpc.aio.AioRpcError as error:
                    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, (method, error)
                    assert "could not be decoded" in (error.details() or "")
                    assert "\n" not in (error.details() or "")
                    refused += 1
        assert refused == len(CALLS) * len(bodies)
        await cluster.register(1)
        await cluster.create_topic("still-commits", partitions=1, replication_factor=1)

    run_scenario(scenario, ControllerQuorum(tmp_path))
