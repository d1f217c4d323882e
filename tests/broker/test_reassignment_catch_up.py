"""Brokers in a partition move: an adding replica joins the ISR only once it has caught up (an
explicit mark, or the stand-in's delay), and the leader's expansion completes the move."""

from __future__ import annotations

import dataclasses
import functools
import uuid
from pathlib import Path

from raftmeta.admin import AsyncAdminClient, PartitionReassignment, TopicPartition
from raftmeta.broker import Broker, BrokerState
from raftmeta.broker.catch_up import CatchUp
from raftmeta.broker.isr import isr_expansions
from raftmeta.image import MetadataImage
from raftmeta.records import (
    BrokerRegistrationChangeRecord,
    FencingChange,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicRecord,
)
from raftmeta.storage import MetadataDir
from tests.support.broker_quorum import CLUSTER_ID, DEADLINE_S, BrokerQuorum
from tests.support.scenario import run_scenario

TOPIC = uuid.UUID(int=9).bytes
MOVING = (TOPIC, 0)


def image_of(*records: Record) -> MetadataImage:
    image = MetadataImage()
    for offset, record in enumerate(records):
        image.apply(record, offset)
    return image


def moving_image(*extra: Record) -> MetadataImage:
    """Partition 0 led by 1, moving from (1, 2) to (1, 3): 3 is being added."""
    return image_of(
        *[RegisterBrokerRecord(b, uuid.uuid4().bytes, b, fenced=False) for b in (1, 2, 3)],
        TopicRecord("t", TOPIC),
        PartitionRecord(
            0, TOPIC, (1, 3, 2), (1, 2), removing_replicas=(2,), adding_replicas=(3,), leader=1
        ),
        *extra,
    )


def test_an_adding_replica_is_proposed_only_once_caught_up() -> None:
    image = moving_image()
    assert isr_expansions(image, 1) == {}
    (changes,) = isr_expansions(
        image, 1, lambda key, replica: (key, replica) == (MOVING, 3)
    ).values()
    assert [m.broker_id for m in changes[0].new_isr] == [1, 2, 3]


def test_the_delay_marks_a_live_adding_replica_and_a_fenced_one_is_forgotten() -> None:
    image = moving_image()
    catch_up = CatchUp(delay_ms=500)
    assert catch_up.observe(image, 1, now_ms=1_000) == 500
    assert not catch_up.is_caught_up(MOVING, 3)
    assert catch_up.observe(image, 1, now_ms=1_400) == 100
    assert catch_up.observe(image, 1, now_ms=1_500) is None
    assert catch_up.is_caught_up(MOVING, 3)
    fenced = moving_image(BrokerRegistrationChangeRecord(3, 3, fenced=FencingChange.FENCE))
    catch_up.observe(fenced, 1, now_ms=1_600)
    assert not catch_up.is_caught_up(MOVING, 3), "a fenced replica must catch up again"


def test_without_a_delay_only_a_mark_counts() -> None:
    catch_up = CatchUp()
    image = moving_image()
    assert catch_up.observe(image, 1, now_ms=10**9) is None
    assert not catch_up.is_caught_up(MOVING, 3)
    catch_up.mark(MOVING, 3)
    catch_up.observe(image, 1, now_ms=10**9)
    assert catch_up.is_caught_up(MOVING, 3)


async def start(quorum: BrokerQuorum, broker_id: int, delay_ms: int | None) -> Broker:
    settings = dataclasses.replace(
        quorum.broker_settings(broker_id),
        expand_isr=True,
        replica_catch_up_delay_ms=delay_ms,
    )
    MetadataDir.format(settings.data_dir, broker_id, CLUSTER_ID, ignore_formatted=True)
    broker = Broker(settings)
    await broker.start()
    quorum.brokers[broker_id] = broker
    await broker.wait_for(lambda: broker.state is BrokerState.RUNNING, DEADLINE_S)
    return broker


def replicas_of(broker: Broker, topic: str) -> tuple[int, ...] | None:
    found = broker.image.topic_by_name(topic)
    partition = None if found is None else found.partitions.get(0)
    done = partition is not None and not partition.adding_replicas
    return partition.replicas if partition is not None and done else None


def test_a_marked_replica_joins_and_the_move_completes(tmp_path: Path) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        brokers = [await start(quorum, i, delay_ms=None) for i in (1, 2, 3)]
        client = AsyncAdminClient({"bootstrap.servers": quorum.bootstrap_servers})
        async with client:
            await quorum.create_topic("moving", partitions=1, replication_factor=2)
            leader_broker = brokers[0]
            await leader_broker.wait_for(
                lambda: replicas_of(leader_broker, "moving") is not None, DEADLINE_S
            )
            replicas = replicas_of(leader_broker, "moving")
            assert replicas is not None
            newcomer = next(b for b in (1, 2, 3) if b not in replicas)
            target = (replicas[0], newcomer)
            moved = TopicPartition("moving", 0)
            await client.alter_partition_reassignments({moved: list(target)})[moved]
            joining = quorum.brokers[newcomer]
            await joining.wait_for(
                lambda: joining.adding_partitions() == [("moving", 0)], DEADLINE_S
            )
            listed = await client.list_partition_reassignments()
            assert listed == {
                moved: PartitionReassignment((*target, replicas[1]), (newcomer,), (replicas[1],))
            }
            leader = quorum.brokers[replicas[0]]
            # The leader's broker marks the newcomer once its own image shows the move (it may
            # lag the newcomer's by a fetch); until then the mark is refused and nothing is kept.
            await leader.wait_for(
                lambda: leader.mark_replica_caught_up("moving", 0, newcomer), DEADLINE_S
            )
            assert not leader.mark_replica_caught_up("moving", 0, replicas[0])
            await leader.wait_for(
                functools.partial(lambda: replicas_of(leader, "moving") == target), DEADLINE_S
            )
            assert await client.list_partition_reassignments() == {}
            assert joining.adding_partitions() == []

    run_scenario(scenario, BrokerQuorum(tmp_path))


def test_a_stand_in_broker_completes_moves_after_its_delay(tmp_path: Path) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        for i in (1, 2, 3):
            await start(quorum, i, delay_ms=0)
        client = AsyncAdminClient({"bootstrap.servers": quorum.bootstrap_servers})
        async with client:
            await quorum.create_topic("drained", partitions=4, replication_factor=2)
            first = quorum.brokers[1]
            await first.wait_for(lambda: replicas_of(first, "drained") is not None, DEADLINE_S)
            targets = {TopicPartition("drained", p): [2, 3] for p in range(4)}
            futures = client.alter_partition_reassignments(targets)
            for future in futures.values():
                await future  # raises the partition's error, if any

            def all_moved() -> bool:
                found = first.image.topic_by_name("drained")
                return found is not None and all(
                    p.replicas == (2, 3) and not p.adding_replicas and 1 not in p.isr
                    for p in found.partitions.values()
                )

            await first.wait_for(all_moved, DEADLINE_S)

    run_scenario(scenario, BrokerQuorum(tmp_path))
