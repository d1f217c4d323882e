"""Broker lifecycle: registration, heartbeats, the §5.4 state machine, session expiry."""

from __future__ import annotations

import pytest

from raftmeta.common.brokers import (
    BrokerHeartbeatReply,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
)
from raftmeta.common.topics import NewTopic
from raftmeta.controller import MAX_RECORDS_PER_USER_OP
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import (
    NO_LEADER,
    BrokerRegistrationChangeRecord,
    PartitionChangeRecord,
    RegisterBrokerRecord,
    UnregisterBrokerRecord,
)
from tests.controller.harness import CLUSTER_ID, Harness, run_async


def leader_of(image: MetadataImage, topic: str, partition: int) -> int:
    found = image.topic_by_name(topic)
    assert found is not None
    return found.partitions[partition].leader


def isr_of(image: MetadataImage, topic: str, partition: int) -> tuple[int, ...]:
    found = image.topic_by_name(topic)
    assert found is not None
    return found.partitions[partition].isr


@run_async
async def test_registration_epoch_is_the_record_offset_and_starts_fenced() -> None:
    h = Harness()
    await h.start()
    expected_offset = h.log.next_offset()
    task = await h.submit(
        h.controller.register_broker(
            BrokerRegistrationRequest(1, CLUSTER_ID, b"\x01" * 16, rack="a")
        )
    )
    [record] = h.log.uncommitted_records()
    assert isinstance(record, RegisterBrokerRecord)
    assert record.broker_epoch == expected_offset and record.fenced
    h.log.commit()
    assert await task == expected_offset
    registration = h.log.replay_all().broker(1)
    assert registration is not None and registration.fenced and registration.rack == "a"
    await h.stop()


@run_async
async def test_wrong_cluster_id() -> None:
    h = Harness()
    await h.start()
    with pytest.raises(KafkaError) as raised:
        await h.controller.register_broker(BrokerRegistrationRequest(1, "other", b"\x01" * 16))
    assert raised.value.code is ErrorCode.INCONSISTENT_CLUSTER_ID
    assert raised.value.message == (f"Expected cluster ID {CLUSTER_ID}, but got cluster ID other.")
    await h.stop()


@run_async
async def test_duplicate_registration_while_session_lives() -> None:
    h = Harness(broker_session_timeout_ms=9_000)
    await h.start()
    await h.add_brokers(2)
    await h.run(h.controller.create_topics([NewTopic("t", assignments={0: (1, 2)})]))
    other = BrokerRegistrationRequest(1, CLUSTER_ID, b"\x99" * 16)
    with pytest.raises(KafkaError) as raised:
        await h.run(h.controller.register_broker(other))
    assert raised.value.code is ErrorCode.DUPLICATE_BROKER_REGISTRATION
    # Once the old session has expired the new incarnation may register; the old one's
    # leaderships move first, then the new registration starts fenced at a new epoch.
    h.clock.advance(9_001)
    next_offset = h.log.next_offset()
    task = await h.submit(h.controller.register_broker(other))
    records = h.log.uncommitted_records()
    assert isinstance(records[0], PartitionChangeRecord) and records[0].leader == 2
    assert isinstance(records[-1], RegisterBrokerRecord)
    assert records[-1].broker_epoch == next_offset + len(records) - 1
    h.log.commit()
    assert await task == records[-1].broker_epoch
    image = h.log.replay_all()
    assert leader_of(image, "t", 0) == 2 and isr_of(image, "t", 0) == (2,)
    registration = image.broker(1)
    assert registration is not None and registration.fenced
    await h.stop()


@run_async
async def test_same_incarnation_reregistering_keeps_epoch_and_state() -> None:
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(1)
    again = await h.register(1)
    assert again == epochs[1]
    registration = h.log.replay_all().broker(1)
    assert registration is not None and not registration.fenced
    await h.stop()


@run_async
async def test_stale_broker_epoch() -> None:
    h = Harness()
    await h.start()
    epoch = await h.register(1)
    for broker_id, broker_epoch in ((1, epoch + 1), (5, epoch)):
        with pytest.raises(KafkaError) as raised:
            await h.heartbeat(broker_id, broker_epoch)
        assert raised.value.code is ErrorCode.STALE_BROKER_EPOCH
    await h.stop()


@run_async
async def test_unfence_only_once_caught_up() -> None:
    h = Harness()
    await h.start()
    epoch = await h.register(1)
    reply = await h.heartbeat(1, epoch, offset=epoch - 1)
    assert reply == BrokerHeartbeatReply(is_caught_up=False, is_fenced=True, should_shut_down=False)
    reply = await h.heartbeat(1, epoch, offset=epoch, want_fence=True)
    assert reply == BrokerHeartbeatReply(is_caught_up=True, is_fenced=True, should_shut_down=False)
    before = len(h.log.batches)
    task = await h.submit(
        h.controller.broker_heartbeat(BrokerHeartbeatRequest(1, epoch, epoch, False))
    )
    assert h.log.uncommitted_records() == [BrokerRegistrationChangeRecord(1, epoch, fenced=-1)]
    assert not task.done(), "the reply waits for the unfencing to commit"
    h.log.commit()
    assert await task == BrokerHeartbeatReply(True, False, False)
    assert len(h.log.batches) == before + 1
    registration = h.log.replay_all().broker(1)
    assert registration is not None and not registration.fenced
    await h.stop()


@run_async
async def test_want_fence_moves_leadership_then_fences() -> None:
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(2)
    await h.run(h.controller.create_topics([NewTopic("t", assignments={0: (1, 2), 1: (2, 1)})]))
    task = await h.submit(
        h.controller.broker_heartbeat(
            BrokerHeartbeatRequest(1, epochs[1], h.log.next_offset(), want_fence=True)
        )
    )
    records = h.log.uncommitted_records()
    assert isinstance(records[-1], BrokerRegistrationChangeRecord) and records[-1].fenced == 1
    assert all(isinstance(record, PartitionChangeRecord) for record in records[:-1])
    h.log.commit()
    assert (await task).is_fenced
    image = h.log.replay_all()
    assert leader_of(image, "t", 0) == 2 and isr_of(image, "t", 0) == (2,)
    assert leader_of(image, "t", 1) == 2 and isr_of(image, "t", 1) == (2,)
    await h.stop()


@run_async
async def test_unfencing_brings_back_a_partition_whose_last_isr_member_it_was() -> None:
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(2)
    await h.run(h.controller.create_topics([NewTopic("solo", assignments={0: (1,)})]))
    await h.heartbeat(1, epochs[1], want_fence=True)
    image = h.log.replay_all()
    assert leader_of(image, "solo", 0) == NO_LEADER
    assert isr_of(image, "solo", 0) == (1,), "the ISR never becomes empty"
    await h.heartbeat(1, epochs[1])
    image = h.log.replay_all()
    assert leader_of(image, "solo", 0) == 1
    await h.stop()


@run_async
async def test_session_expiry_fences_oldest_first_and_moves_leaders() -> None:
    h = Harness(broker_session_timeout_ms=9_000)
    await h.start()
    epochs = await h.add_brokers(3)
    await h.run(
        h.controller.create_topics([NewTopic("t", assignments={0: (1, 3), 1: (2, 3), 2: (3, 1)})])
    )
    h.clock.advance(1_000)
    await h.heartbeat(2, epochs[2])
    await h.heartbeat(3, epochs[3])
    h.clock.advance(9_000)
    await h.heartbeat(3, epochs[3])
    h.clock.advance(500)  # broker 1: 10.5 s silent; broker 2: 9.5 s; broker 3: 0.5 s
    before = len(h.log.batches)
    await h.controller.tick()
    fenced_in_order = []
    for batch in h.log.uncommitted:
        *changes, fence = h.log.records(batch)
        assert isinstance(fence, BrokerRegistrationChangeRecord) and fence.fenced == 1
        assert all(isinstance(change, PartitionChangeRecord) for change in changes)
        fenced_in_order.append(fence.broker_id)
    assert fenced_in_order == [1, 2], "one broker per append, oldest contact first"
    assert len(h.log.batches) == before + 2
    h.log.commit()
    image = h.log.replay_all()
    assert [leader_of(image, "t", p) for p in range(3)] == [3, 3, 3]
    assert [isr_of(image, "t", p) for p in range(3)] == [(3,), (3,), (3,)]
    fenced = [b for b in (1, 2, 3) if (r := image.broker(b)) is not None and r.fenced]
    assert fenced == [1, 2]
    # Nothing stale remains: the next check writes nothing but, once idle, a NoOp.
    await h.controller.tick()
    assert h.log.uncommitted == []
    await h.stop()


@run_async
async def test_controlled_shutdown() -> None:
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(3)
    await h.run(h.controller.create_topics([NewTopic("t", assignments={0: (1, 2)})]))
    stale_offset = h.log.next_offset() - 1
    # Brokers 2 and 3 report an offset from before the shutdown begins.
    await h.heartbeat(2, epochs[2], offset=stale_offset)
    await h.heartbeat(3, epochs[3], offset=stale_offset)

    task = await h.submit(
        h.controller.broker_heartbeat(
            BrokerHeartbeatRequest(1, epochs[1], stale_offset, False, want_shut_down=True)
        )
    )
    records = h.log.uncommitted_records()
    assert records[0] == BrokerRegistrationChangeRecord(1, epochs[1], in_controlled_shutdown=1)
    topic = h.controller.committed_image.topic_by_name("t")
    assert topic is not None
    assert records[1] == PartitionChangeRecord(0, topic.topic_id, isr=(2,), leader=2)
    h.log.commit()
    assert await task == BrokerHeartbeatReply(True, False, False)
    image = h.log.replay_all()
    registration = image.broker(1)
    assert registration is not None and registration.in_controlled_shutdown
    assert not registration.fenced and leader_of(image, "t", 0) == 2

    # It leads nothing now, but brokers 2 and 3 have not seen the moves yet.
    reply = await h.heartbeat(1, epochs[1], want_shut_down=True)
    assert reply == BrokerHeartbeatReply(True, False, False)
    await h.heartbeat(2, epochs[2])
    await h.heartbeat(3, epochs[3])
    reply = await h.heartbeat(1, epochs[1], want_shut_down=True)
    assert reply == BrokerHeartbeatReply(True, True, True)
    registration = h.log.replay_all().broker(1)
    assert registration is not None and registration.fenced
    await h.stop()


@run_async
async def test_unfenced_broker_leading_nothing_shuts_down_at_once() -> None:
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(1)
    reply = await h.heartbeat(1, epochs[1], want_shut_down=True)
    assert reply == BrokerHeartbeatReply(True, True, True)
    fenced_reply = await h.heartbeat(1, epochs[1], want_shut_down=True)
    assert fenced_reply.should_shut_down
    await h.stop()


@run_async
async def test_unregister_moves_leaders_then_removes() -> None:
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(2)
    await h.run(h.controller.create_topics([NewTopic("t", assignments={0: (1, 2)})]))
    task = await h.submit(h.controller.unregister_broker(1))
    records = h.log.uncommitted_records()
    assert records[-1] == UnregisterBrokerRecord(1, epochs[1])
    assert isinstance(records[0], PartitionChangeRecord)
    h.log.commit()
    await task
    image = h.log.replay_all()
    assert image.broker(1) is None and leader_of(image, "t", 0) == 2
    with pytest.raises(KafkaError) as raised:
        await h.controller.unregister_broker(1)
    assert raised.value.code is ErrorCode.BROKER_ID_NOT_REGISTERED
    await h.stop()


@run_async
async def test_sessions_are_rebuilt_after_failover() -> None:
    h = Harness(broker_session_timeout_ms=9_000)
    await h.start()
    await h.add_brokers(1)
    h.log.lose_leadership(7)
    h.clock.advance(20_000)
    h.log.become_leader()
    session = h.controller.broker_session(1)
    assert session is not None and session.last_contact_ms == h.clock.now_ms
    await h.controller.tick()
    registration = h.controller.latest_image.broker(1)
    assert registration is not None and not registration.fenced
    await h.stop()


@run_async
async def test_heartbeat_expired_in_queue_still_counts_as_contact() -> None:
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(1)
    h.clock.advance(5_000)
    with pytest.raises(KafkaError) as raised:
        await h.controller.broker_heartbeat(
            BrokerHeartbeatRequest(1, epochs[1], h.log.next_offset(), False), timeout_ms=0
        )
    assert raised.value.code is ErrorCode.REQUEST_TIMED_OUT
    session = h.controller.broker_session(1)
    assert session is not None and session.last_contact_ms == h.clock.now_ms
    await h.stop()


@run_async
async def test_a_fenced_broker_holds_no_session_so_its_successor_registers_at_once() -> None:
    h = Harness(broker_session_timeout_ms=9_000)
    await h.start()
    epochs = await h.add_brokers(2)
    # Broker 1 asks to be fenced (as a broker that stopped would), then a new incarnation of
    # it registers well inside the old session timeout.
    await h.heartbeat(1, epochs[1], want_fence=True)
    fenced = h.log.replay_all().broker(1)
    assert fenced is not None and fenced.fenced
    h.clock.advance(100)
    new_epoch = await h.run(
        h.controller.register_broker(BrokerRegistrationRequest(1, CLUSTER_ID, b"\x99" * 16))
    )
    registration = h.log.replay_all().broker(1)
    assert registration is not None and registration.broker_epoch == new_epoch
    assert registration.incarnation_id == b"\x99" * 16
    await h.stop()


@run_async
async def test_a_broker_leading_more_partitions_than_one_user_operation_may_write_is_fenced() -> (
    None
):
    """Fencing, unfencing and registering are the controller's own work, one record per
    partition the broker touches: the cap on what one user operation may write
    (MAX_RECORDS_PER_USER_OP) must not apply, or a broker leading more partitions than that
    could never be fenced, unfenced or registered again (seen in a fault campaign: brokers
    stayed fenced and every CreateTopics failed)."""
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(2)
    per_topic = MAX_RECORDS_PER_USER_OP // 2 + 1
    for name in ("a", "b"):
        assignments = {partition: (1, 2) for partition in range(per_topic)}
        await h.run(h.controller.create_topics([NewTopic(name, assignments=assignments)]))
    reply = await h.run(
        h.controller.broker_heartbeat(
            BrokerHeartbeatRequest(1, epochs[1], h.log.next_offset(), want_fence=True)
        )
    )
    assert reply.is_fenced
    image = h.log.replay_all()
    assert leader_of(image, "a", 0) == 2 and leader_of(image, "b", per_topic - 1) == 2
    await h.stop()
