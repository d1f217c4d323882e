"""Real, unmodified Kafka admin clients from the package index (kafka-python's
``KafkaAdminClient`` and confluent-kafka's ``AdminClient``) against the KAFKA listener of a
real three-controller quorum with six brokers (embedded, beside the controllers), each answer
compared with the gRPC Admin service's, or ``raftmeta leader-election``'s, for the same state."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import ElectionType, KafkaException, TopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    NewPartitions,
    NewTopic,
)
from kafka.admin import KafkaAdminClient
from kafka.admin import NewTopic as KpNewTopic
from kafka.errors import InvalidPartitionsError, PolicyViolationError, TopicAlreadyExistsError

from raftmeta.broker import BrokerState
from raftmeta.cli.main import main
from raftmeta.controller.result import MAX_RECORDS_PER_USER_OP
from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import broker_pb2 as bpb
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.support.waiting import wait_until

TIMEOUT_S = 15.0
BROKERS = 6
TOO_MANY_PARTITIONS = MAX_RECORDS_PER_USER_OP + 1
"""More partitions than one request may create: POLICY_VIOLATION, as Kafka's controller
refuses them (``validateTotalNumberOfPartitions``), before any is placed."""


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    root: Path = tmp_path_factory.mktemp("kafka-clients")
    with kafka_quorum(root, brokers=BROKERS) as running:
        yield running


def confluent(quorum: KafkaQuorum) -> AdminClient:
    return AdminClient({"bootstrap.servers": quorum.kafka_address(quorum.active())})


def kafka_python(quorum: KafkaQuorum) -> KafkaAdminClient:
    return KafkaAdminClient(
        bootstrap_servers=quorum.kafka_address(quorum.active()), request_timeout_ms=10_000
    )


def confluent_errors(futures: Mapping[str, Future[Any]]) -> dict[str, int]:
    codes = {}
    for name, future in futures.items():
        try:
            future.result(TIMEOUT_S)
            codes[name] = 0
        except KafkaException as error:
            codes[name] = error.args[0].code()
    return codes


def grpc_topic(quorum: KafkaQuorum, name: str) -> apb.TopicDescription:
    described = quorum.grpc("DescribeTopics", apb.DescribeTopicsRequest(topic_names=[name]))
    (topic,) = described.topics
    assert isinstance(topic, apb.TopicDescription)
    return topic


def test_confluent_create_topics_and_its_errors(quorum: KafkaQuorum) -> None:
    admin = confluent(quorum)
    codes = confluent_errors(
        admin.create_topics(
            [
                NewTopic("orders", num_partitions=3, replication_factor=2),
                NewTopic("too-wide", num_partitions=1, replication_factor=BROKERS + 1),
                NewTopic("no-partitions", num_partitions=0, replication_factor=1),
            ],
            operation_timeout=10,
        )
    )
    assert codes == {
        "orders": 0,
        "too-wide": int(ErrorCode.INVALID_REPLICATION_FACTOR),
        "no-partitions": int(ErrorCode.INVALID_PARTITIONS),
    }
    # The partition cap is on the request as a whole: every topic in it is refused.
    capped = confluent_errors(
        admin.create_topics(
            [NewTopic("too-many", TOO_MANY_PARTITIONS, 1), NewTopic("small", 1, 1)],
            operation_timeout=10,
        )
    )
    assert capped == {
        "too-many": int(ErrorCode.POLICY_VIOLATION),
        "small": int(ErrorCode.POLICY_VIOLATION),
    }
    assert len(grpc_topic(quorum, "orders").partitions) == 3
    for refused in ("too-wide", "no-partitions", "too-many", "small"):
        assert grpc_topic(quorum, refused).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    again = confluent_errors(admin.create_topics([NewTopic("orders", 1, 1)]))
    assert again == {"orders": int(ErrorCode.TOPIC_ALREADY_EXISTS)}

    checked = confluent_errors(admin.create_topics([NewTopic("dry-run", 2, 1)], validate_only=True))
    assert checked == {"dry-run": 0}
    assert grpc_topic(quorum, "dry-run").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_kafka_python_create_topics_and_its_errors(quorum: KafkaQuorum) -> None:
    admin = kafka_python(quorum)
    try:
        created = admin.create_topics([KpNewTopic("payments", 2, 2)])
        (result,) = created["topics"]
        assert result["error_code"] == 0
        topic = grpc_topic(quorum, "payments")
        assert result["topic_id"].replace("-", "") == topic.topic_id.hex()
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([KpNewTopic("payments", 2, 2)])

        refused = admin.create_topics(
            {
                "kp-too-wide": {"num_partitions": 1, "replication_factor": BROKERS + 1},
                "kp-no-partitions": {"num_partitions": 0, "replication_factor": 1},
            },
            raise_errors=False,
        )
        assert {t["name"]: t["error_code"] for t in refused["topics"]} == {
            "kp-too-wide": ErrorCode.INVALID_REPLICATION_FACTOR,
            "kp-no-partitions": ErrorCode.INVALID_PARTITIONS,
        }
        assert all(t["error_message"] for t in refused["topics"])
        with pytest.raises(InvalidPartitionsError):
            admin.create_topics(
                {"kp-no-partitions": {"num_partitions": 0, "replication_factor": 1}}
            )
        with pytest.raises(PolicyViolationError):
            admin.create_topics(
                {"kp-too-many": {"num_partitions": TOO_MANY_PARTITIONS, "replication_factor": 1}}
            )
    finally:
        admin.close()
    for name in ("kp-too-wide", "kp-no-partitions", "kp-too-many"):
        assert grpc_topic(quorum, name).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_create_partitions_and_delete_topics_with_both_clients(quorum: KafkaQuorum) -> None:
    quorum.grpc(
        "CreateTopics",
        apb.CreateTopicsRequest(
            topics=[
                apb.NewTopic(name=name, num_partitions=2, replication_factor=2)
                for name in ("grown-c", "grown-kp")
            ]
        ),
    )
    client = confluent(quorum)
    checked = confluent_errors(
        client.create_partitions([NewPartitions("grown-c", 5)], validate_only=True)
    )
    assert checked == {"grown-c": 0}
    assert len(grpc_topic(quorum, "grown-c").partitions) == 2
    grown = confluent_errors(
        client.create_partitions(
            [NewPartitions("grown-c", 4), NewPartitions("grown-kp", 1), NewPartitions("nope", 3)]
        )
    )
    assert grown == {
        "grown-c": 0,
        "grown-kp": int(ErrorCode.INVALID_PARTITIONS),
        "nope": int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    }
    assert len(grpc_topic(quorum, "grown-c").partitions) == 4

    admin = kafka_python(quorum)
    try:
        response = admin.create_partitions({"grown-kp": 3, "grown-c": 2}, raise_errors=False)
        assert {r.name: r.error_code for r in response.results} == {
            "grown-kp": 0,
            "grown-c": ErrorCode.INVALID_PARTITIONS,
        }
        assert len(grpc_topic(quorum, "grown-kp").partitions) == 3
        deleted = admin.delete_topics(["grown-kp", "nope"], raise_errors=False)
        assert {t["name"]: t["error_code"] for t in deleted["topics"]} == {
            "grown-kp": 0,
            "nope": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        }
    finally:
        admin.close()
    assert confluent_errors(client.delete_topics(["grown-c"], operation_timeout=10)) == {
        "grown-c": 0
    }
    for name in ("grown-c", "grown-kp"):
        assert grpc_topic(quorum, name).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_describe_cluster_and_topics_match_the_grpc_answers(quorum: KafkaQuorum) -> None:
    quorum.grpc(
        "CreateTopics",
        apb.CreateTopicsRequest(
            topics=[apb.NewTopic(name="described", num_partitions=3, replication_factor=3)]
        ),
    )
    quorum.wait_for_topic_everywhere("described")  # kafka-python may ask any controller
    expected = quorum.grpc("DescribeCluster", apb.DescribeClusterRequest())
    # KIP-919: to a client bootstrapped to the controllers, the controllers are the nodes.
    controllers = quorum.kafka_addresses()

    admin = kafka_python(quorum)
    try:
        cluster = admin.describe_cluster()
        assert cluster["cluster_id"] == expected.cluster_id
        assert cluster["controller_id"] == quorum.active().node_id
        assert {
            b["broker_id"]: f"{b['host']}:{b['port']}" for b in cluster["brokers"]
        } == controllers
        (topic,) = admin.describe_topics(["described"])
    finally:
        admin.close()
    grpc = grpc_topic(quorum, "described")
    assert topic["topic_id"].replace("-", "") == grpc.topic_id.hex()
    assert [
        (p["partition_index"], p["leader_id"], p["replica_nodes"], p["isr_nodes"])
        for p in sorted(topic["partitions"], key=lambda p: p["partition_index"])
    ] == [(p.partition_index, p.leader_id, list(p.replicas), list(p.isr)) for p in grpc.partitions]

    client = confluent(quorum)  # kept alive until its future is done
    described = client.describe_cluster().result(TIMEOUT_S)
    assert described.cluster_id == expected.cluster_id
    # librdkafka describes the cluster from Metadata, whose nodes are the Kafka-speaking ones:
    # the controllers on their KAFKA listeners, the active one named as the controller.
    assert described.controller.id == quorum.active().node_id
    assert {node.id: f"{node.host}:{node.port}" for node in described.nodes} == controllers


Codes = dict[int, int]
"""An election's error code per partition of one topic."""


def create_placed(quorum: KafkaQuorum, name: str, assignment: list[list[int]]) -> None:
    """A topic with replicas placed by hand, each partition led by its first replica."""
    created = quorum.grpc(
        "CreateTopics",
        apb.CreateTopicsRequest(
            topics=[
                apb.NewTopic(
                    name=name,
                    num_partitions=-1,
                    replication_factor=-1,
                    assignments={
                        index: apb.BrokerIds(broker_ids=replicas)
                        for index, replicas in enumerate(assignment)
                    },
                )
            ]
        ),
    )
    assert [t.error_code for t in created.topics] == [0], created
    wait_until(
        functools.partial(leaders_are, quorum, name, [replicas[0] for replicas in assignment]),
        f"topic {name} led by its preferred replicas",
        TIMEOUT_S,
    )


def leaders_are(quorum: KafkaQuorum, topic: str, leaders: list[int]) -> bool:
    return [p.leader_id for p in grpc_topic(quorum, topic).partitions] == leaders


def kill_broker(quorum: KafkaQuorum, broker_id: int) -> None:
    """Stops an embedded broker without a controlled shutdown: it stops heartbeating, and
    the controller fences it when its session expires, as after a kill -9."""
    quorum.call(quorum.quorum.brokers[broker_id].stop())
    wait_until(lambda: broker_id not in quorum.unfenced(), f"broker {broker_id} fenced", TIMEOUT_S)


def restart_broker(quorum: KafkaQuorum, broker_id: int) -> None:
    quorum.call(quorum.quorum.start_broker(broker_id))
    wait_until(lambda: broker_id in quorum.unfenced(), f"broker {broker_id} back", TIMEOUT_S)


def cli_elect(
    quorum: KafkaQuorum,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    election_type: str,
    topic: str,
    partitions: list[int],
) -> Codes:
    """``raftmeta leader-election`` over gRPC, its output read back into codes: the partitions
    of its "Successfully completed" line get NONE, of its "Valid replica already elected" line
    ELECTION_NOT_NEEDED, and each error line the code its name spells."""
    plan = tmp_path / f"{election_type}-{topic}.json"
    plan.write_text(
        json.dumps({"partitions": [{"topic": topic, "partition": p} for p in partitions]})
    )
    main(
        [
            "leader-election",
            "--bootstrap-server",
            quorum.quorum.bootstrap_servers,
            "--election-type",
            election_type,
            "--path-to-json-file",
            str(plan),
        ]
    )
    codes: Codes = {}
    for line in capsys.readouterr().out.splitlines():
        if line.startswith(("Successfully completed", "Valid replica already elected")):
            code = 0 if line.startswith("Successfully") else int(ErrorCode.ELECTION_NOT_NEEDED)
            for named in line.split(" for partitions ", 1)[1].split(", "):
                codes[int(named.rpartition("-")[2])] = code
        else:
            named, name, _ = line.split(" for partition: ", 1)[1].split(": ", 2)
            codes[int(named.rpartition("-")[2])] = int(ErrorCode[name])
    return codes


def confluent_elect(
    quorum: KafkaQuorum, election_type: ElectionType, topic: str, partitions: list[int]
) -> Codes:
    client = confluent(quorum)  # kept alive until its future is done
    asked = [TopicPartition(topic, p) for p in partitions]
    result = client.elect_leaders(election_type, asked).result(TIMEOUT_S)
    assert {tp.topic for tp in result} == {topic}
    return {tp.partition: 0 if error is None else error.code() for tp, error in result.items()}


def kafka_python_elect(
    quorum: KafkaQuorum, election_type: int, topic: str, partitions: list[int]
) -> Codes:
    admin = kafka_python(quorum)
    try:
        response = admin.elect_leaders(election_type, {topic: partitions}, raise_errors=False)
    finally:
        admin.close()
    assert {result.topic for result in response.replica_election_results} == {topic}
    return {
        partition.partition_id: partition.error_code
        for result in response.replica_election_results
        for partition in result.partition_result
    }


def test_elect_leaders_through_a_killed_and_restarted_broker_equals_the_cli(
    quorum: KafkaQuorum, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """PREFERRED after broker 4 is killed and restarted (its partition's preferred replica is
    back but out of the ISR); UNCLEAN after brokers 5 and 6 are killed and 5 restarted (the
    partitions they held have no leader, and 5 is alive but out of sync). An UNCLEAN election
    changes the state, so each asker (``raftmeta leader-election`` over gRPC, confluent-kafka,
    kafka-python) elects its own topic, all placed and failed alike; per partition, each
    client's code equals the command's."""
    preferred = [0, 1, 2, 7]
    create_placed(quorum, "elected", [[4, 1], [1, 4], [2, 3]])
    askers = {"cli": "u-cli", "confluent": "u-confluent", "kafka-python": "u-kp"}
    for topic in askers.values():
        create_placed(quorum, topic, [[5, 6], [6, 5], [1, 2]])
    unclean = [0, 1, 2, 9]
    not_needed, unknown = (
        int(ErrorCode.ELECTION_NOT_NEEDED),
        int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    )
    try:
        kill_broker(quorum, 4)
        restart_broker(quorum, 4)
        expected = {
            0: int(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE),
            1: not_needed,
            2: not_needed,
            7: unknown,
        }
        assert cli_elect(quorum, capsys, tmp_path, "PREFERRED", "elected", preferred) == expected
        assert confluent_elect(quorum, ElectionType.PREFERRED, "elected", preferred) == expected
        assert kafka_python_elect(quorum, 0, "elected", preferred) == expected

        kill_broker(quorum, 5)
        kill_broker(quorum, 6)
        restart_broker(quorum, 5)
        for topic in askers.values():
            wait_until(
                functools.partial(leaders_are, quorum, topic, [-1, -1, 1]),
                f"{topic}'s partitions on brokers 5 and 6 without a leader",
                TIMEOUT_S,
            )
        elected = {
            "cli": cli_elect(quorum, capsys, tmp_path, "UNCLEAN", askers["cli"], unclean),
            "confluent": confluent_elect(
                quorum, ElectionType.UNCLEAN, askers["confluent"], unclean
            ),
            "kafka-python": kafka_python_elect(quorum, 1, askers["kafka-python"], unclean),
        }
        assert elected["cli"] == {0: 0, 1: 0, 2: not_needed, 9: unknown}
        assert elected["confluent"] == elected["cli"]
        assert elected["kafka-python"] == elected["cli"]
        for topic in askers.values():
            described = grpc_topic(quorum, topic).partitions
            assert [(p.leader_id, list(p.isr)) for p in described[:2]] == [(5, [5]), (5, [5])]

        # Again, and PREFERRED, on the state the first UNCLEAN left: nothing changes now.
        again = {0: not_needed, 1: not_needed, 2: not_needed, 9: unknown}
        settled = {0: not_needed, 1: int(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE), 2: not_needed}
        assert cli_elect(quorum, capsys, tmp_path, "UNCLEAN", "u-cli", unclean) == again
        assert confluent_elect(quorum, ElectionType.UNCLEAN, "u-confluent", unclean) == again
        assert kafka_python_elect(quorum, 1, "u-kp", unclean) == again
        assert cli_elect(quorum, capsys, tmp_path, "PREFERRED", "u-cli", [0, 1, 2]) == settled
        assert confluent_elect(quorum, ElectionType.PREFERRED, "u-confluent", [0, 1, 2]) == settled
        assert kafka_python_elect(quorum, 0, "u-kp", [0, 1, 2]) == settled
    finally:
        for broker_id in (4, 5, 6):
            if quorum.quorum.brokers[broker_id].state is BrokerState.NOT_RUNNING:
                restart_broker(quorum, broker_id)


def test_a_registration_for_an_id_that_is_not_a_voter_is_refused_over_grpc(
    quorum: KafkaQuorum,
) -> None:
    request = bpb.RegisterControllerRequest(
        controller_id=7,
        cluster_id=quorum.active().node.cluster_id,
        incarnation_id=bytes(16),
        listeners=[bpb.Listener(name="KAFKA", host="6.6.6.6", port=9092)],
    )
    response = quorum.call(
        quorum.quorum.channel.call("BrokerLifecycle/RegisterController", request)
    )
    assert response.header.error_code == ErrorCode.INVALID_REGISTRATION
    assert "not a voter" in response.header.error_message
    assert "\n" not in response.header.error_message
    assert 7 not in quorum.active().controller.committed_image.controllers
