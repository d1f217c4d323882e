"""kill -9 of the active controller in the middle of real Kafka client sessions, with real
``raftmeta serve`` and ``raftmeta broker`` processes: the clients' next calls, on the same
client objects, succeed against the new active controller."""

from __future__ import annotations

import functools
from pathlib import Path

from confluent_kafka import ElectionType, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from kafka.admin import KafkaAdminClient
from kafka.admin import NewTopic as KpNewTopic

from raftmeta.cli.devcluster import DevCluster
from raftmeta.cli.quorum_describe import DescribeError, QuorumInfo, describe_quorum
from raftmeta.errors import ErrorCode
from tests.process.helpers import DEADLINE_S, free_base_port
from tests.support.waiting import wait_until

TIMEOUT_S = 30.0


def leader(cluster: DevCluster, newer_than: int = -1) -> QuorumInfo:
    def found() -> QuorumInfo | None:
        try:
            info = describe_quorum(cluster.bootstrap_servers, cluster.cluster_id, timeout_s=1.0)
        except DescribeError:
            return None
        return info if info.leader_epoch > newer_than else None

    return wait_until(found, f"a leader in an epoch above {newer_than}", DEADLINE_S)


def controller_named(cluster: DevCluster, node_id: int | None = None) -> int:
    """The active controller a fresh client is told of, by any controller or by ``node_id``."""
    bootstrap = (
        cluster.kafka_bootstrap if node_id is None else f"127.0.0.1:{cluster.kafka_ports[node_id]}"
    )
    probe = AdminClient({"bootstrap.servers": bootstrap})
    try:
        return int(probe.list_topics(timeout=2).controller_id)
    except KafkaException:
        return -1


def names(cluster: DevCluster, node_id: int, controller_id: int) -> bool:
    return controller_named(cluster, node_id) == controller_id


def create(admin: AdminClient, name: str) -> int:
    (future,) = admin.create_topics([NewTopic(name, 2, 2)], operation_timeout=10).values()
    try:
        future.result(TIMEOUT_S)
    except KafkaException as error:
        return int(error.args[0].code())
    except TimeoutError:  # the client's answer did not come in time: its own timeout code
        return int(KafkaError._TIMED_OUT)
    return 0


def test_clients_carry_on_against_the_new_controller_after_kill_9(tmp_path: Path) -> None:
    cluster = DevCluster(tmp_path / "cluster", free_base_port(), brokers=2, kafka=True)
    cluster.prepare()
    try:
        cluster.start()
        cluster.start_brokers()
        first = leader(cluster)
        # kafka-python's describe_cluster asks any controller, and a controller names the
        # active one once its image holds that one's KAFKA listener registration.
        for node_id in cluster.nodes:
            wait_until(
                functools.partial(names, cluster, node_id, first.leader_id),
                f"controller {node_id} to name controller {first.leader_id}",
                DEADLINE_S,
            )
        confluent = AdminClient({"bootstrap.servers": cluster.kafka_bootstrap})
        # The brokers register and unfence on their own time: until then there is nowhere
        # to place two replicas.
        wait_until(
            lambda: create(confluent, "before") in (0, ErrorCode.TOPIC_ALREADY_EXISTS),
            "a first topic once both brokers are up",
            DEADLINE_S,
        )
        kafka_python = KafkaAdminClient(
            bootstrap_servers=cluster.kafka_bootstrap, request_timeout_ms=10_000
        )
        try:
            assert kafka_python.describe_cluster()["controller_id"] == first.leader_id

            cluster.nodes[first.leader_id].kill()
            # confluent-kafka, the same client object, at once: librdkafka keeps sending to the
            # controller it was told of, and a standby asked in the first moments after the
            # kill still names the dead one; the standby closes that client's connection when
            # it learns of the new controller, and the client asks again on reconnecting. One
            # try within the client's own timeout.
            assert create(confluent, "after") == 0
            second = leader(cluster, newer_than=first.leader_epoch)
            assert second.leader_id != first.leader_id
            elected = confluent.elect_leaders(ElectionType.PREFERRED, None).result(TIMEOUT_S)
            assert all(error is None for error in elected.values()), elected
            described = confluent.describe_cluster().result(TIMEOUT_S)
            assert described.controller.id == second.leader_id

            # kafka-python: its client asks Metadata again after the controller's connection
            # drops, and sends the next controller request to the new one.
            assert kafka_python.describe_cluster()["controller_id"] == second.leader_id
            created = kafka_python.create_topics([KpNewTopic("after-kp", 1, 2)])
            assert [t["error_code"] for t in created["topics"]] == [0]
        finally:
            kafka_python.close()
    finally:
        cluster.stop()
