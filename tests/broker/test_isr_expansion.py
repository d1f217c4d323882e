"""Partition leaders put live replicas back into the ISR and finish unclean recoveries."""

from __future__ import annotations

import functools
import uuid
from pathlib import Path

from raftmeta.broker import Broker, BrokerState
from raftmeta.broker.isr import isr_expansions
from raftmeta.channel import ControllerChannel
from raftmeta.image import MetadataImage
from raftmeta.records import (
    BrokerRegistrationChangeRecord,
    FencingChange,
    LeaderRecoveryState,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicRecord,
)
from tests.broker.test_broker import HeartbeatSwitch
from tests.support.broker_quorum import DEADLINE_S, BrokerQuorum
from tests.support.scenario import run_scenario

TOPIC = uuid.UUID(int=7).bytes


def image_of(*records: Record) -> MetadataImage:
    image = MetadataImage()
    for offset, record in enumerate(records):
        image.apply(record, offset)
    return image


def in_isr_of(broker: Broker, topic_id: bytes, broker_id: int) -> set[int]:
    topic = broker.image.topic(topic_id)
    partitions = {} if topic is None else topic.partitions
    return {p for p, r in partitions.items() if broker_id in r.isr}


def is_running(broker: Broker) -> bool:
    return broker.state is BrokerState.RUNNING


def brokers(*ids: int) -> list[Record]:
    return [RegisterBrokerRecord(b, uuid.uuid4().bytes, b, fenced=False) for b in ids]


def test_a_leader_proposes_its_live_missing_replicas_with_their_epochs() -> None:
    image = image_of(
        *brokers(1, 2, 3),
        TopicRecord("t", TOPIC),
        PartitionRecord(0, TOPIC, (1, 2, 3), (2, 3), leader=2, leader_epoch=4, partition_epoch=9),
        PartitionRecord(1, TOPIC, (2, 1, 3), (2, 1, 3), leader=2),
        PartitionRecord(2, TOPIC, (3, 2, 1), (3, 2), leader=3),
    )
    (changes,) = isr_expansions(image, 2).values()
    (change,) = changes
    assert (change.partition_id, change.leader_epoch, change.partition_epoch) == (0, 4, 9)
    assert [(m.broker_id, m.broker_epoch) for m in change.new_isr] == [(2, 2), (3, 3), (1, 1)]
    assert change.leader_recovery_state == LeaderRecoveryState.RECOVERED
    # Partition 2 lacks broker 1 too, but broker 3 leads it: that is broker 3's proposal.
    assert [c.partition_id for c in isr_expansions(image, 3)[TOPIC]] == [2]


def test_fenced_replicas_stay_out_and_a_recovering_partition_is_marked_recovered() -> None:
    image = image_of(
        *brokers(1, 2, 3),
        BrokerRegistrationChangeRecord(1, 1, fenced=FencingChange.FENCE),
        TopicRecord("t", TOPIC),
        PartitionRecord(0, TOPIC, (1, 2, 3), (2, 3), leader=2),
        PartitionRecord(
            1, TOPIC, (2, 1), (2,), leader=2, leader_recovery_state=LeaderRecoveryState.RECOVERING
        ),
    )
    (changes,) = isr_expansions(image, 2).values()
    (change,) = changes
    assert change.partition_id == 1
    assert [m.broker_id for m in change.new_isr] == [2]
    assert change.leader_recovery_state == LeaderRecoveryState.RECOVERED


def test_a_broker_back_from_fencing_is_put_back_into_every_isr_by_the_leaders(
    tmp_path: Path,
) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        switch = HeartbeatSwitch(ControllerChannel(quorum.bootstrap_servers))
        started = [
            await quorum.start_broker(
                i, rack=f"r{i}", channel=switch if i == 1 else None, expand_isr=True
            )
            for i in (1, 2, 3)
        ]
        one, two, _ = started
        for broker in started:
            await broker.wait_for(functools.partial(is_running, broker), DEADLINE_S)
        topic_id = await quorum.create_topic("events", partitions=6, replication_factor=3)
        await two.wait_for(lambda: in_isr_of(two, topic_id, 1) == set(range(6)), DEADLINE_S)

        switch.blocked = True
        await two.wait_for(lambda: not in_isr_of(two, topic_id, 1), DEADLINE_S)
        switch.blocked = False
        await one.wait_for(lambda: one.state is BrokerState.RUNNING, DEADLINE_S)
        # Nobody but the partition leaders sends AlterPartition here.
        await two.wait_for(lambda: in_isr_of(two, topic_id, 1) == set(range(6)), DEADLINE_S)

    run_scenario(scenario, BrokerQuorum(tmp_path))
