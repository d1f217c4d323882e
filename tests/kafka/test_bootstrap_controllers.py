"""KIP-919 through real clients: kafka-python's ``KafkaAdminClient`` and confluent-kafka's
``AdminClient`` bootstrapped to a *standby* controller's KAFKA listener learn every
controller from its answers (the registrations in the log), send their admin calls to the
active controller, and follow leadership when the active controller stops."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from kafka.admin import KafkaAdminClient
from kafka.admin import NewTopic as KpNewTopic
from kafka.errors import KafkaConnectionError, TopicAlreadyExistsError, UnknownBrokerIdError
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest, MetadataResponse

from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server.controller_node import ControllerNode
from tests.kafka.quorum import DEADLINE_S, KafkaQuorum, kafka_quorum
from tests.kafka.test_wire import connect, read_response, request
from tests.support.waiting import wait_until

TIMEOUT_S = 15.0


def topic_names(quorum: KafkaQuorum) -> set[str]:
    described = quorum.grpc("DescribeTopics", apb.DescribeTopicsRequest(all_topics=True))
    return {topic.name for topic in described.topics}


def confluent_create(client: AdminClient, name: str) -> None:
    futures = client.create_topics([NewTopic(name, 2, 3)], operation_timeout=10)
    futures[name].result(TIMEOUT_S)


def fresh_client_creates(bootstrap: str, name: str, controller_id: int) -> bool:
    """One attempt; short, so that a busy machine still leaves room for several picks (each
    client picks the node it asks for Metadata at random, the stopped one included)."""
    try:
        client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=3_000)
    except KafkaConnectionError:
        return False
    try:
        with contextlib.suppress(TopicAlreadyExistsError):  # made by an earlier attempt
            client.create_topics([KpNewTopic(name, 1, 3)])
        return bool(client.describe_cluster()["controller_id"] == controller_id)
    except KafkaConnectionError:
        return False
    finally:
        client.close()


def stop_active(quorum: KafkaQuorum) -> ControllerNode:
    """Stops the active controller gracefully and waits for another to take over."""
    old = quorum.active()
    quorum.call(old.stop())
    del quorum.quorum.controllers[old.node_id]  # stopped: not stopped again at close
    new = quorum.active()
    assert new is not old
    return old


def test_admin_clients_bootstrapped_to_a_standby_reach_the_active_controller_and_follow_it(
    tmp_path: Path,
) -> None:
    with kafka_quorum(tmp_path, brokers=3) as quorum:
        active = quorum.active()
        standby = quorum.follower()
        controllers = quorum.kafka_addresses()
        bootstrap = quorum.kafka_address(standby)
        python_admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
        confluent = AdminClient({"bootstrap.servers": bootstrap})
        try:
            python_admin.create_topics([KpNewTopic("from-python", 2, 3)])
            confluent_create(confluent, "from-confluent")
            assert {"from-python", "from-confluent"} <= topic_names(quorum)

            cluster = python_admin.describe_cluster()
            assert cluster["controller_id"] == active.node_id
            assert {
                b["broker_id"]: f"{b['host']}:{b['port']}" for b in cluster["brokers"]
            } == controllers
            described = confluent.describe_cluster().result(TIMEOUT_S)
            assert described.controller.id == active.node_id
            assert {n.id: f"{n.host}:{n.port}" for n in described.nodes} == controllers

            old = stop_active(quorum)
            new = quorum.active()
            # librdkafka refreshes Metadata when its controller goes away: its next call
            # reaches the new active controller, named by any controller still running.
            confluent_create(confluent, "after-failover-confluent")
            # kafka-python caches the controller id and refreshes it only on NOT_CONTROLLER, so
            # its next call to the stopped controller fails to connect (as it would against a
            # Kafka cluster), or, once its Metadata no longer names that controller, fails to
            # find it. A client bootstrapped again to the same standby reaches the new active
            # controller once it sends its Metadata to a live node: the stopped controller's
            # registration stays in the log (as in Kafka), Metadata names it until a Raft call
            # to it is refused, and kafka-python does not try another node when its pick
            # refuses the connection.
            with pytest.raises((KafkaConnectionError, UnknownBrokerIdError)):
                python_admin.create_topics([KpNewTopic("after-failover-python", 1, 3)])
            wait_until(
                lambda: fresh_client_creates(bootstrap, "after-failover-python", new.node_id),
                "a kafka-python client bootstrapped to the standby to create a topic",
                DEADLINE_S,
            )
            assert {"after-failover-python", "after-failover-confluent"} <= topic_names(quorum)
            assert new.node_id != old.node_id
        finally:
            python_admin.close()


def test_a_standby_closes_a_connection_told_of_a_controller_that_moved(tmp_path: Path) -> None:
    """librdkafka keeps sending admin calls to the controller it was told of and does not ask
    again until its periodic refresh; a standby that told a connection of a controller it no
    longer names closes that connection, so the client reconnects and asks again. A connection
    never told of a controller stays open."""
    with kafka_quorum(tmp_path, brokers=1) as quorum:
        active = quorum.active()
        standby = quorum.follower()
        address = quorum.kafka_address(standby)
        with connect(address) as told, connect(address) as untold:
            told.sendall(request(MetadataRequest[12](topics=None), 1))
            payload = read_response(told)
            assert payload is not None
            answer = MetadataResponse.decode(payload, version=12, header=True)
            assert answer.controller_id == active.node_id

            old = stop_active(quorum)
            assert read_response(told) is None, "closed by the standby"
            untold.sendall(request(ApiVersionsRequest[3](), 2))
            assert read_response(untold) is not None, "still served"

        new = quorum.active()
        assert new.node_id != old.node_id
        with connect(quorum.kafka_address(standby)) as again:
            again.sendall(request(MetadataRequest[12](topics=None), 3))
            payload = read_response(again)
            assert payload is not None
            answer = MetadataResponse.decode(payload, version=12, header=True)
            assert answer.controller_id == new.node_id
