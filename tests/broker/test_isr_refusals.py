"""A partition leader whose metadata lags does not resend an ISR expansion the controller
refused as stale: it waits until its image holds newer epochs for the partition, or no longer
holds the partition, as Kafka's partition leaders wait for new metadata."""

from __future__ import annotations

import functools
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from raftmeta.broker import Broker, BrokerState
from raftmeta.broker.isr import RefusedAsStale
from raftmeta.channel import ControllerChannel
from raftmeta.common.brokers import IsrMember, PartitionIsrChange
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.raft.batch import Batch
from raftmeta.records import PartitionChangeRecord, PartitionRecord, RemoveTopicRecord, TopicRecord
from raftmeta.rpc import admin_pb2
from tests.support.broker_quorum import DEADLINE_S, BrokerQuorum
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async

TOPIC = uuid.UUID(int=9).bytes


class WatchedChannel:
    """A broker's controller channel that counts the AlterPartition entries it carries, per
    (topic id, partition), with the codes they were answered with; and whose heartbeats the
    test can cut off, as a network would."""

    def __init__(self, inner: ControllerChannel) -> None:
        self.inner = inner
        self.heartbeats_blocked = False
        self.sent: Counter[tuple[bytes, int]] = Counter()
        self.answers: list[tuple[bytes, int, ErrorCode]] = []
        self.in_flight = 0

    async def call(self, method: str, request: Any, *, timeout_ms: int | None = None) -> Any:
        if self.heartbeats_blocked and method == "BrokerLifecycle/BrokerHeartbeat":
            raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, "heartbeats cut off by the test")
        if method != "BrokerLifecycle/AlterPartition":
            return await self.inner.call(method, request, timeout_ms=timeout_ms)
        for change in request.partitions:
            self.sent[(request.topic_id, change.partition_index)] += 1
        self.in_flight += 1
        try:
            response = await self.inner.call(method, request, timeout_ms=timeout_ms)
        finally:
            self.in_flight -= 1
        for result in response.partitions:
            self.answers.append(
                (request.topic_id, result.partition_index, ErrorCode(result.error_code))
            )
        return response

    async def close(self) -> None:
        await self.inner.close()


class HeldCommits:
    """Holds the committed batches a broker's metadata replica is handed, and hands them on
    one at a time when the test says: its image lags the controller's exactly as far as the
    test wants, with the log's real content."""

    def __init__(self, broker: Broker) -> None:
        replica = broker._replica
        self._deliver = replica.handle_commit
        self.held: list[Batch] = []
        replica.handle_commit = self._hold  # type: ignore[method-assign]

    def _hold(self, batches: Sequence[Batch]) -> None:
        self.held.extend(batches)

    def release_one(self) -> Batch:
        batch = self.held.pop(0)
        self._deliver([batch])
        return batch


def running(broker: Broker) -> bool:
    return broker.state is BrokerState.RUNNING


def unfenced(quorum: BrokerQuorum, broker_id: int) -> bool:
    registration = quorum.controllers_image().broker(broker_id)
    return registration is not None and not registration.fenced


def test_a_refused_expansion_is_not_resent_while_the_leaders_metadata_catches_up(
    tmp_path: Path,
) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        channels = {
            i: WatchedChannel(ControllerChannel(quorum.bootstrap_servers)) for i in (1, 2, 3)
        }
        brokers = {
            i: await quorum.start_broker(i, rack=f"r{i}", channel=channels[i], expand_isr=True)
            for i in (1, 2, 3)
        }
        for broker in brokers.values():
            await broker.wait_for(functools.partial(running, broker), DEADLINE_S)
        topic_id = await quorum.create_topic("doomed", partitions=1, replication_factor=3)

        def controller_partition() -> Any:
            return quorum.controllers_image().partition(topic_id, 0)

        await wait_until_async(
            lambda: (p := controller_partition()) is not None and len(p.isr) == 3,
            "a full ISR",
            DEADLINE_S,
        )
        leader_id = controller_partition().leader
        leader = brokers[leader_id]
        first, second = sorted(i for i in brokers if i != leader_id)

        # Both followers fenced: the leader's image shows an ISR of the leader alone.
        channels[first].heartbeats_blocked = channels[second].heartbeats_blocked = True
        await leader.wait_for(
            lambda: (
                (p := leader.image.partition(topic_id, 0)) is not None and p.isr == (leader_id,)
            ),
            DEADLINE_S,
        )
        # From here the leader's image stops; the controller moves on: both followers come
        # back (one at a time) and the topic is deleted.
        held = HeldCommits(leader)
        for follower in (first, second):
            channels[follower].heartbeats_blocked = False
            await wait_until_async(
                functools.partial(unfenced, quorum, follower),
                f"broker {follower} unfenced",
                DEADLINE_S,
            )
        response = await quorum.channel.call(
            "Admin/DeleteTopics", admin_pb2.DeleteTopicsRequest(topic_names=["doomed"])
        )
        assert response.header.error_code == 0 and response.results[0].error_code == 0
        await wait_until_async(
            lambda: controller_partition() is None, "the topic deleted", DEADLINE_S
        )
        await wait_until_async(
            lambda: any(_removes(batch, topic_id) for batch in held.held),
            "the deletion reaching the leader's held commits",
            DEADLINE_S,
        )

        # The leader catches up one batch at a time; after each, its ISR loop has its turn.
        sent = channels[leader_id].sent
        while held.held:
            batch = held.release_one()
            await wait_until_async(
                lambda: not leader._isr_wake.is_set() and channels[leader_id].in_flight == 0,
                "the leader's ISR loop to settle",
                DEADLINE_S,
            )
            if _removes(batch, topic_id):
                break
        assert leader.image.topic(topic_id) is None
        # Its first expansion (the first follower back) was refused: the topic was gone.
        # The second follower's return changed the proposal but not the partition's epochs,
        # so it was not sent again.
        assert sent[(topic_id, 0)] == 1, sent
        answers = [code for topic, _, code in channels[leader_id].answers if topic == topic_id]
        assert answers == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION], answers

    run_scenario(scenario, BrokerQuorum(tmp_path))


def _removes(batch: Batch, topic_id: bytes) -> bool:
    from raftmeta.records import decode_record

    if batch.is_control:
        return False
    return any(
        isinstance(record, RemoveTopicRecord) and record.topic_id == topic_id
        for record in (decode_record(data) for data in batch.records())
    )


def image_with(*records: Any) -> MetadataImage:
    image = MetadataImage()
    for offset, record in enumerate(records):
        image.apply(record, offset)
    return image


def change_at(leader_epoch: int, partition_epoch: int, *members: int) -> PartitionIsrChange:
    return PartitionIsrChange(
        partition_id=0,
        leader_epoch=leader_epoch,
        new_isr=tuple(IsrMember(m, m) for m in members),
        partition_epoch=partition_epoch,
        leader_recovery_state=0,
    )


def test_a_stale_refusal_holds_until_the_partitions_epochs_move_or_it_is_gone() -> None:
    image = image_with(
        TopicRecord("t", TOPIC),
        PartitionRecord(0, TOPIC, (1, 2, 3), (1,), leader=1, leader_epoch=2, partition_epoch=5),
    )
    stale = RefusedAsStale()
    stale.note(TOPIC, change_at(2, 5, 1, 2))
    assert stale.holds(TOPIC, change_at(2, 5, 1, 2, 3)), "another proposal at the same epochs"
    stale.forget_moved(image)
    assert stale.holds(TOPIC, change_at(2, 5, 1, 2))
    image.apply(PartitionChangeRecord(0, TOPIC, isr=(1, 2)), 2)
    stale.forget_moved(image)
    assert not stale.holds(TOPIC, change_at(2, 6, 1, 2, 3)) and len(stale) == 0
    stale.note(TOPIC, change_at(2, 6, 1, 2, 3))
    image.apply(RemoveTopicRecord(TOPIC), 3)
    stale.forget_moved(image)
    assert len(stale) == 0, "a deleted topic's refusals are forgotten"
