"""A three-controller quorum with brokers and a KAFKA listener on every controller, run in its
own thread's event loop, so that blocking Kafka clients (and Hypothesis) can drive it from the
test's thread as real clients would."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server.controller_node import ControllerNode
from tests.support.broker_quorum import BrokerQuorum
from tests.support.waiting import wait_until

_T = TypeVar("_T")
DEADLINE_S = 20.0


class KafkaQuorum:
    def __init__(
        self, root: Path, brokers: int, extra_config: Mapping[str, str] | None = None
    ) -> None:
        self.quorum = BrokerQuorum(
            root, controller_config={"listeners": "KAFKA://127.0.0.1:0", **(extra_config or {})}
        )
        self.broker_count = brokers
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def call(self, coroutine: Coroutine[Any, Any, _T], timeout_s: float = DEADLINE_S) -> _T:
        future: Future[_T] = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return future.result(timeout_s)

    def start(self) -> None:
        self._thread.start()
        self.call(self.quorum.start())
        for broker_id in range(1, self.broker_count + 1):
            self.call(self.quorum.start_broker(broker_id))
        wait_until(
            lambda: len(self.unfenced()) == self.broker_count,
            "every broker to be registered and unfenced",
            DEADLINE_S,
        )
        wait_until(
            lambda: self.registered() == self.kafka_addresses(),
            "every controller's KAFKA listener to be registered on every controller",
            DEADLINE_S,
        )

    def close(self) -> None:
        try:
            self.call(self.quorum.close())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(DEADLINE_S)
            self.loop.close()

    def unfenced(self) -> list[int]:
        try:
            described = self.call(self.quorum.describe_cluster())
        except AssertionError:
            return []  # no active controller yet
        return [broker.broker_id for broker in described.brokers if not broker.fenced]

    def active(self) -> ControllerNode:
        def found() -> ControllerNode | None:
            for node in self.quorum.controllers.values():
                controller = node.maybe_controller
                if controller is not None and controller.is_active:
                    return node
            return None

        node = wait_until(found, "an active controller", DEADLINE_S)
        assert isinstance(node, ControllerNode)
        return node

    def follower(self) -> ControllerNode:
        active = self.active()
        return next(node for node in self.quorum.controllers.values() if node is not active)

    def kafka_address(self, node: ControllerNode) -> str:
        assert node.kafka is not None, "the controller serves a KAFKA listener"
        return node.kafka.address

    def kafka_addresses(self) -> dict[int, str]:
        """Every running controller's KAFKA listener, by controller id."""
        return {
            node_id: self.kafka_address(node)
            for node_id, node in self.quorum.controllers.items()
            if node.maybe_controller is not None
        }

    def registered(self) -> dict[int, str]:
        """The KAFKA endpoints every running controller's committed image holds, when they
        all hold the same ones (else empty)."""
        seen = []
        for node in self.quorum.controllers.values():
            controller = node.maybe_controller
            if controller is None:
                continue
            registrations = controller.committed_image.controllers
            seen.append(
                {
                    controller_id: f"{endpoint.host}:{endpoint.port}"
                    for controller_id, registration in registrations.items()
                    for endpoint in registration.endpoints
                    if endpoint.name == "KAFKA"
                }
            )
        return seen[0] if seen and all(found == seen[0] for found in seen) else {}

    def wait_for_topic_everywhere(self, name: str) -> None:
        """Until every running controller's committed image holds topic ``name``: a standby
        answers Metadata from its own image, which may trail the active controller's."""

        def everywhere() -> bool:
            return all(
                node.maybe_controller is not None
                and node.maybe_controller.committed_image.topic_by_name(name) is not None
                for node in self.quorum.controllers.values()
            )

        wait_until(everywhere, f"topic {name} committed on every controller", DEADLINE_S)

    def grpc(self, method: str, request: Any) -> Any:
        return self.call(self.quorum.channel.call(f"Admin/{method}", request))

    def grpc_elect(
        self, election_type: int, partitions: list[tuple[str, int]]
    ) -> dict[tuple[str, int], int]:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in partitions:
            by_topic.setdefault(topic, []).append(partition)
        request = apb.ElectLeadersRequest(election_type=election_type)
        request.topic_partitions.CopyFrom(
            apb.TopicPartitionsList(
                topics=[apb.TopicPartitions(topic=t, partitions=p) for t, p in by_topic.items()]
            )
        )
        response = self.grpc("ElectLeaders", request)
        return {
            (result.topic, partition.partition_id): partition.error_code
            for result in response.replica_election_results
            for partition in result.partition_result
        }


@contextmanager
def kafka_quorum(
    root: Path, brokers: int = 3, extra_config: Mapping[str, str] | None = None
) -> Iterator[KafkaQuorum]:
    """A started quorum; ``extra_config`` adds to every controller's settings (security,
    say)."""
    quorum = KafkaQuorum(root, brokers, extra_config)
    try:
        quorum.start()
        yield quorum
    finally:
        quorum.close()
