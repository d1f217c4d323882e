"""The domain managers alone: built without a queue, a log or an event loop, handed an image
and the time, and judged by the records and reply they return."""

from __future__ import annotations

import ast
import random
import uuid
from collections.abc import Callable
from pathlib import Path

from raftmeta.common.brokers import BrokerRegistrationRequest
from raftmeta.common.elections import ElectionType, PartitionResult, TopicPartition, TopicResults
from raftmeta.controller.brokers import BrokerSession
from raftmeta.controller.cluster import ClusterControlManager
from raftmeta.controller.replication import ReplicationControlManager, random_topic_id
from raftmeta.controller.settings import ControllerSettings
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage
from raftmeta.records import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    FencingChange,
    PartitionChangeRecord,
    Record,
    RegisterBrokerRecord,
)
from tests.elections.clusters import ACTIVE, Part, cluster, partition, topic_id

SETTINGS = ControllerSettings(
    node_id=0,
    cluster_id="cluster",
    voter_ids=frozenset({0}),
    broker_session_timeout_ms=9_000,
    leader_imbalance_per_broker_percentage=0,
    leader_imbalance_catch_up_ms=10_000,
)


def applied(image: MetadataImage, records: tuple[Record, ...]) -> MetadataImage:
    """``image`` with ``records`` replayed after it, as the queue stages them."""
    image.apply_batch(list(records), image.offset + 1)
    return image


def led_by_second_choice() -> MetadataImage:
    """Broker 1 is back and in the ISR of "orders"-0, which broker 2 still leads."""
    return cluster({1: ACTIVE, 2: ACTIVE, 3: ACTIVE}, {"orders": [Part((1, 2, 3), leader=2)]})


# --- ReplicationControlManager ------------------------------------------------------------


def test_replication_manager_writes_a_preferred_election_against_the_image() -> None:
    manager = ReplicationControlManager(SETTINGS)
    result = manager.elect_leaders(
        led_by_second_choice(), ElectionType.PREFERRED, [TopicPartition("orders", 0)]
    )
    assert result.records == (PartitionChangeRecord(0, topic_id("orders"), leader=1),)
    assert result.response == (TopicResults("orders", ((0, PartitionResult(ErrorCode.NONE)),)),)
    assert not result.atomic, "each election is a whole change to its own partition"
    assert manager.election_counts[("PREFERRED", "NONE")] == 1


def test_replication_manager_rebalance_waits_for_an_unfenced_broker_to_catch_up() -> None:
    manager = ReplicationControlManager(SETTINGS)
    image = led_by_second_choice()
    sessions = {1: BrokerSession(last_contact_ms=0, unfenced_at_ms=50_000)}

    too_soon = manager.rebalance(image, 55_000, sessions)
    assert too_soon.records == () and too_soon.response is False

    caught_up = manager.rebalance(image, 60_000, sessions)
    assert caught_up.records == (PartitionChangeRecord(0, topic_id("orders"), leader=1),)
    assert partition(applied(image, caught_up.records), "orders", 0).leader == 1


# --- ClusterControlManager ----------------------------------------------------------------


def test_cluster_manager_fences_the_broker_whose_session_expired() -> None:
    manager = ClusterControlManager(SETTINGS)
    image = cluster({1: ACTIVE, 2: ACTIVE}, {"orders": [Part((1, 2))]})
    manager.reset_sessions(image, now_ms=0)
    manager.sessions[2].last_contact_ms = 5_000

    assert manager.fence_one_stale_broker(image, now_ms=9_000).records == ()

    result = manager.fence_one_stale_broker(image, now_ms=10_000)
    assert result.response is True
    epoch = image.brokers[1].broker_epoch
    assert result.records[-1] == BrokerRegistrationChangeRecord(
        1, epoch, fenced=int(FencingChange.FENCE)
    )
    after = applied(image, result.records)
    broker = after.broker(1)
    assert broker is not None and broker.fenced
    orders = partition(after, "orders", 0)
    assert (orders.leader, orders.isr) == (2, (2,))
    # Fenced now, so no longer stale: the caller's loop ends.
    again = manager.fence_one_stale_broker(after, now_ms=10_000)
    assert again.records == () and again.response is False


def test_cluster_manager_gives_a_new_broker_the_offset_of_its_registration_as_epoch() -> None:
    manager = ClusterControlManager(SETTINGS)
    request = BrokerRegistrationRequest(
        broker_id=7,
        cluster_id="cluster",
        incarnation_id=bytes(range(16)),
        endpoints=(BrokerEndpoint("PLAINTEXT", "b7", 9092, 0),),
    )
    result = manager.register_broker(MetadataImage(), request, now_ms=1_234, next_offset=42)
    assert result.response == 42
    [record] = result.records
    assert isinstance(record, RegisterBrokerRecord)
    assert (record.broker_id, record.broker_epoch, record.fenced) == (7, 42, True)
    assert manager.sessions[7].last_contact_ms == 1_234


# --- purity -------------------------------------------------------------------------------

MANAGER_MODULES = (
    "replication",
    "cluster",
    "configs",
    "acls",
    "features",
    "topics",
    "brokers",
    "alter_partition",
    "registration",
)
"""The managers and the record builders they are made of."""


def test_managers_import_no_event_loop_and_no_clock() -> None:
    package = Path(__file__).resolve().parents[2] / "raftmeta" / "controller"
    for name in MANAGER_MODULES:
        tree = ast.parse((package / f"{name}.py").read_text())
        imported: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module is not None:
                imported.add(node.module.split(".")[0])
        assert not imported & {"asyncio", "time"}, f"{name}.py imports {imported}"


def _drawing(raw: bytes) -> Callable[[int], bytes]:
    """A source of random bytes that hands out ``raw``."""

    def draw(size: int) -> bytes:
        assert size == len(raw)
        return raw

    return draw


def test_a_new_topic_id_is_what_uuid4_makes_of_the_same_random_bytes() -> None:
    draws = random.Random(7)
    samples = [bytes(16), b"\xff" * 16]
    samples += [bytes(draws.getrandbits(8) for _ in range(16)) for _ in range(2_000)]
    for raw in samples:
        made = random_topic_id(_drawing(raw))
        assert made == uuid.UUID(bytes=raw, version=4).bytes
        assert uuid.UUID(bytes=made).version == 4
