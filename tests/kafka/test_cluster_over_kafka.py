"""UnregisterBroker, AddRaftVoter and RemoveRaftVoter on the KAFKA listener.

A dead broker is unregistered as an operator does it (Kafka's ``Admin.unregisterBroker``):
afterwards no controller's committed image and no live broker's image holds it. The voter
changes answer Kafka's codes through the same checks as the Raft service's gRPC methods
(INCONSISTENT_CLUSTER_ID, INVALID_REQUEST, and the node's own refusal of a voter change on a
static quorum)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from raftmeta.cli.main import main
from raftmeta.errors import ErrorCode
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.kafka.test_acls import raw_plain
from tests.support.broker_quorum import CLUSTER_ID, CONTROLLER_IDS
from tests.support.waiting import wait_until

DEADLINE_S = 20.0


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    root: Path = tmp_path_factory.mktemp("kafka-cluster")
    with kafka_quorum(root, brokers=3) as running:
        yield running


def unregister(quorum: KafkaQuorum, broker_id: int) -> Any:
    return raw_plain(quorum.kafka_address(quorum.active()), 64, 0, {"broker_id": broker_id})


STOPPED: set[int] = set()
"""The brokers this module's tests have stopped (whose images no longer follow the log)."""


def stop_broker(quorum: KafkaQuorum, broker_id: int) -> None:
    quorum.call(quorum.quorum.brokers[broker_id].stop())
    STOPPED.add(broker_id)


def holders(quorum: KafkaQuorum, broker_id: int) -> list[str]:
    """Which images (every controller's, every running broker's) still hold broker
    ``broker_id``'s registration."""
    found = [
        f"controller {node_id}"
        for node_id, node in quorum.quorum.controllers.items()
        if node.maybe_controller is not None
        and broker_id in node.maybe_controller.committed_image.brokers
    ]
    found += [
        f"broker {other_id}"
        for other_id, broker in quorum.quorum.brokers.items()
        if other_id not in STOPPED and broker_id in broker.image.brokers
    ]
    return found


def test_a_dead_broker_is_unregistered_and_leaves_every_image(quorum: KafkaQuorum) -> None:
    stop_broker(quorum, 2)
    answer = unregister(quorum, 2)
    assert (answer.error_code, answer.error_message) == (0, None)
    wait_until(lambda: holders(quorum, 2) == [], "no image to hold broker 2", DEADLINE_S)
    again = unregister(quorum, 2)
    assert again.error_code == ErrorCode.BROKER_ID_NOT_REGISTERED
    assert again.error_message == "Broker ID 2 is not currently registered"


def test_raftmeta_cluster_unregisters_a_dead_broker_and_names_the_cluster(
    quorum: KafkaQuorum, capsys: pytest.CaptureFixture[str]
) -> None:
    address = quorum.kafka_address(quorum.active())
    stop_broker(quorum, 3)
    assert main(["cluster", "unregister", "--bootstrap-controller", address, "--id", "3"]) == 0
    assert capsys.readouterr().out == "Broker 3 is no longer registered.\n"
    wait_until(lambda: holders(quorum, 3) == [], "no image to hold broker 3", DEADLINE_S)
    assert main(["cluster", "unregister", "--bootstrap-controller", address, "--id", "3"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "Error while unregistering the broker : Broker ID 3 is not currently registered "
        "(BROKER_ID_NOT_REGISTERED)\n"
    )
    grpc_door = ["--bootstrap-server", quorum.quorum.bootstrap_servers]
    for door in (["--bootstrap-controller", address], grpc_door):
        assert main(["cluster", "cluster-id", *door]) == 0
        assert capsys.readouterr().out == f"Cluster ID: {CLUSTER_ID}\n"


def voter_change(quorum: KafkaQuorum, api_key: int, **values: Any) -> Any:
    body: dict[str, Any] = {
        "cluster_id": CLUSTER_ID,
        "voter_id": 7,
        "voter_directory_id": uuid.uuid4(),
        **values,
    }
    if api_key == 80:
        body = {"timeout_ms": 5000, "listeners": [], **body}
    return raw_plain(quorum.kafka_address(quorum.active()), api_key, 0, body)


def test_voter_changes_answer_kafkas_codes(quorum: KafkaQuorum) -> None:
    listener = [{"name": "CONTROLLER", "host": "127.0.0.1", "port": 9}]
    foreign = voter_change(quorum, 80, cluster_id="another", listeners=listener)
    assert foreign.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    no_endpoint = voter_change(quorum, 80)
    assert no_endpoint.error_code == ErrorCode.INVALID_REQUEST
    assert no_endpoint.error_message == "a new voter must name the endpoint it serves on"
    broker_id = voter_change(quorum, 80, voter_id=1, listeners=listener)
    assert broker_id.error_code == ErrorCode.INVALID_REQUEST
    # A static quorum (controller.quorum.voters) changes no voters, as in Kafka.
    static = voter_change(quorum, 80, listeners=listener)
    assert static.error_code == ErrorCode.UNSUPPORTED_VERSION
    removed = voter_change(quorum, 81, voter_id=CONTROLLER_IDS[0], cluster_id=None)
    assert removed.error_code == ErrorCode.UNSUPPORTED_VERSION
