"""CreateTopics, CreatePartitions and DeleteTopics: codes, messages, records, pending state."""

from __future__ import annotations

import pytest

from placement import ClusterView, PlacementError, PlacementSpec
from raftmeta.common.topics import NewPartitions, NewTopic
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.records import (
    ConfigRecord,
    ConfigResourceType,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from tests.controller.harness import Harness, run_async


@run_async
async def test_create_topic_writes_topic_configs_partitions_in_order() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(3, racks=True)
    task = await h.submit(
        h.controller.create_topics([NewTopic("orders", 3, 2, configs={"min.insync.replicas": "2"})])
    )
    records = h.log.uncommitted_records()
    assert len(h.log.uncommitted) == 1, "one atomic batch"
    assert isinstance(records[0], TopicRecord) and records[0].name == "orders"
    assert records[1] == ConfigRecord(
        int(ConfigResourceType.TOPIC), "orders", "min.insync.replicas", "2"
    )
    partitions = records[2:]
    assert [type(r) for r in partitions] == [PartitionRecord] * 3
    for index, record in enumerate(partitions):
        assert isinstance(record, PartitionRecord)
        assert record.partition_id == index
        assert len(record.replicas) == 2 and len(set(record.replicas)) == 2
        assert record.isr == record.replicas
        assert record.leader == record.replicas[0]
    assert not task.done(), "the reply waits for the commit"
    h.log.commit()
    [result] = await task
    assert result.error.ok and result.num_partitions == 3 and result.replication_factor == 2

    image = h.log.replay_all()
    topic = image.topic_by_name("orders")
    assert topic is not None and topic.topic_id == result.topic_id
    assert len(topic.partitions) == 3
    assert image.configs(int(ConfigResourceType.TOPIC), "orders") == {"min.insync.replicas": "2"}
    assert image == h.controller.committed_image
    await h.stop()


@run_async
async def test_defaults_come_from_settings() -> None:
    h = Harness(num_partitions=4, default_replication_factor=2)
    await h.start()
    await h.add_brokers(3)
    [result] = await h.run(h.controller.create_topics([NewTopic("t")]))
    assert (result.num_partitions, result.replication_factor) == (4, 2)
    await h.stop()


@pytest.mark.parametrize(
    ("topic", "code", "message"),
    [
        (NewTopic("p0", 0, 1), ErrorCode.INVALID_PARTITIONS, "invalid non-positive value"),
        (NewTopic("p2", -2, 1), ErrorCode.INVALID_PARTITIONS, "invalid non-positive value"),
        (NewTopic("r0", 1, 0), ErrorCode.INVALID_REPLICATION_FACTOR, "larger than 0"),
        (NewTopic("r2", 1, -2), ErrorCode.INVALID_REPLICATION_FACTOR, "larger than 0"),
        (
            NewTopic("r4", 1, 4),
            ErrorCode.INVALID_REPLICATION_FACTOR,
            "Unable to replicate the partition 4 time(s): The target replication factor of 4 "
            "cannot be reached because only 3 broker(s) are registered.",
        ),
        (NewTopic("bad name", 1, 1), ErrorCode.INVALID_TOPIC_EXCEPTION, "illegal"),
        (NewTopic("é", 1, 1), ErrorCode.INVALID_TOPIC_EXCEPTION, "illegal"),
        (NewTopic("", 1, 1), ErrorCode.INVALID_TOPIC_EXCEPTION, "empty"),
        (NewTopic(".", 1, 1), ErrorCode.INVALID_TOPIC_EXCEPTION, '"." or ".."'),
        (NewTopic("..", 1, 1), ErrorCode.INVALID_TOPIC_EXCEPTION, '"." or ".."'),
        (NewTopic("x" * 250, 1, 1), ErrorCode.INVALID_TOPIC_EXCEPTION, "249"),
        (
            NewTopic("m", 2, -1, assignments={0: (1,)}),
            ErrorCode.INVALID_REQUEST,
            "manual partition assignment",
        ),
        (
            NewTopic("m", assignments={0: (1, 1)}),
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "more than once",
        ),
        (
            NewTopic("m", assignments={0: (1,), 2: (2,)}),
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "consecutive",
        ),
        (
            NewTopic("m", assignments={0: (9,)}),
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "broker 9",
        ),
        (
            NewTopic("c", 1, 1, configs={"min.insync.replicas": "zero"}),
            ErrorCode.INVALID_CONFIG,
            "min.insync.replicas",
        ),
        (
            NewTopic("c", 1, 1, configs={"no.such.config": "1"}),
            ErrorCode.INVALID_CONFIG,
            "Unknown topic config name: no.such.config",
        ),
    ],
)
def test_create_topic_errors(topic: NewTopic, code: ErrorCode, message: str) -> None:
    @run_async
    async def body() -> None:
        h = Harness()
        await h.start()
        await h.add_brokers(3)
        before = len(h.log.batches)
        [result] = await h.run(h.controller.create_topics([topic]))
        assert result.error.code is code
        assert result.error.message is not None and message in result.error.message
        assert len(h.log.batches) == before, "a failed topic writes nothing"
        await h.stop()

    body()


@run_async
async def test_name_longest_legal_is_accepted() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    [result] = await h.run(h.controller.create_topics([NewTopic("a._-Z9" + "x" * 243, 1, 1)]))
    assert result.error.ok
    await h.stop()


@run_async
async def test_all_brokers_fenced() -> None:
    h = Harness()
    await h.start()
    await h.register(1)  # registered, never unfenced
    [result] = await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    assert result.error.code is ErrorCode.INVALID_REPLICATION_FACTOR
    assert result.error.message == (
        "Unable to replicate the partition 1 time(s): All brokers are currently fenced."
    )
    [manual] = await h.run(h.controller.create_topics([NewTopic("m", assignments={0: (1,)})]))
    assert manual.error.code is ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert manual.error.message is not None and "fenced" in manual.error.message
    await h.stop()


@run_async
async def test_manual_assignment_isr_is_active_replicas_and_leader_first_of_them() -> None:
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(2)
    await h.register(3)  # fenced
    del epochs
    [result] = await h.run(
        h.controller.create_topics([NewTopic("m", assignments={0: (3, 2, 1), 1: (1, 3, 2)})])
    )
    assert result.error.ok and result.replication_factor == 3
    image = h.log.replay_all()
    topic = image.topic_by_name("m")
    assert topic is not None
    assert topic.partitions[0].isr == (2, 1) and topic.partitions[0].leader == 2
    assert topic.partitions[1].isr == (1, 2) and topic.partitions[1].leader == 1
    await h.stop()


@run_async
async def test_topic_already_exists_committed_and_pending() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    first = await h.submit(h.controller.create_topics([NewTopic("t", 1, 1)]))
    second = await h.submit(h.controller.create_topics([NewTopic("t", 1, 1)]))
    # The second sees the first's pending records: nothing is committed yet.
    assert h.controller.committed_image.topic_by_name("t") is None
    assert len(h.log.uncommitted) == 1
    assert not second.done(), "a reply that wrote nothing still waits for pending records"
    h.log.commit()
    [ok] = await first
    [duplicate] = await second
    assert ok.error.ok
    assert duplicate.error.code is ErrorCode.TOPIC_ALREADY_EXISTS
    assert duplicate.error.message == "Topic 't' already exists."
    [again] = await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    assert again.error.code is ErrorCode.TOPIC_ALREADY_EXISTS
    await h.stop()


@run_async
async def test_duplicate_names_and_collisions_in_one_request() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    results = await h.run(
        h.controller.create_topics(
            [NewTopic("a", 1, 1), NewTopic("a", 1, 1), NewTopic("b.c", 1, 1), NewTopic("b_c", 1, 1)]
        )
    )
    codes = [result.error.code for result in results]
    assert codes == [
        ErrorCode.INVALID_REQUEST,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.NONE,
        ErrorCode.INVALID_TOPIC_EXCEPTION,
    ]
    await h.stop()


@run_async
async def test_validate_only_writes_nothing() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(2)
    before = len(h.log.batches)
    [result] = await h.run(h.controller.create_topics([NewTopic("t", 2, 2)], validate_only=True))
    assert result.error.ok and result.num_partitions == 2
    assert len(h.log.batches) == before
    assert h.controller.latest_image.topic_by_name("t") is None
    await h.stop()


@run_async
async def test_two_topics_in_one_request_share_one_batch() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(3)
    before = len(h.log.batches)
    results = await h.run(h.controller.create_topics([NewTopic("a", 3, 1), NewTopic("b", 3, 1)]))
    assert all(result.error.ok for result in results)
    assert len(h.log.batches) == before + 1
    image = h.log.replay_all()
    # The second topic's placement saw the first's: leaders spread over all three brokers.
    assert sorted(image.preferred_counts.values()) == [2, 2, 2]
    await h.stop()


@run_async
async def test_create_partitions_continues_assignment() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(3)
    await h.run(h.controller.create_topics([NewTopic("t", 2, 2)]))
    [result] = await h.run(h.controller.create_partitions([NewPartitions("t", 6)]))
    assert result.error.ok
    image = h.log.replay_all()
    topic = image.topic_by_name("t")
    assert topic is not None and sorted(topic.partitions) == list(range(6))
    leaders = [topic.partitions[p].leader for p in range(6)]
    assert sorted(leaders.count(b) for b in (1, 2, 3)) == [2, 2, 2]
    assert all(len(topic.partitions[p].replicas) == 2 for p in range(6))
    await h.stop()


@run_async
async def test_create_partitions_errors() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(2)
    await h.run(h.controller.create_topics([NewTopic("t", 2, 2)]))
    results = await h.run(
        h.controller.create_partitions(
            [
                NewPartitions("missing", 3),
                NewPartitions("t", 1),
            ]
        )
    )
    assert [r.error.code for r in results] == [
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.INVALID_PARTITIONS,
    ]
    [same] = await h.run(h.controller.create_partitions([NewPartitions("t", 2)]))
    assert same.error.code is ErrorCode.INVALID_PARTITIONS
    [manual] = await h.run(
        h.controller.create_partitions([NewPartitions("t", 3, assignments=((1,),))])
    )
    assert manual.error.code is ErrorCode.INVALID_REPLICA_ASSIGNMENT
    [good] = await h.run(
        h.controller.create_partitions([NewPartitions("t", 3, assignments=((2, 1),))])
    )
    assert good.error.ok
    partition = h.log.replay_all().topic_by_name("t")
    assert partition is not None and partition.partitions[2].replicas == (2, 1)
    await h.stop()


@run_async
async def test_delete_topics() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    [created] = await h.run(
        h.controller.create_topics([NewTopic("t", 2, 1, configs={"retention.ms": "10"})])
    )
    task = await h.submit(h.controller.delete_topics(["t", "missing"]))
    assert h.log.uncommitted_records() == [RemoveTopicRecord(created.topic_id)]
    h.log.commit()
    deleted, missing = await task
    assert deleted.error.ok
    assert missing.error.code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    image = h.log.replay_all()
    assert image.topic_by_name("t") is None and image.partition_count == 0
    assert image.configs(int(ConfigResourceType.TOPIC), "t") == {}
    # The name can be used again.
    [again] = await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    assert again.error.ok
    await h.stop()


class _BrokenPlacer:
    def __init__(self, answer: object = None, error: Exception | None = None) -> None:
        self.answer = answer
        self.error = error

    def place(self, spec: PlacementSpec, cluster: ClusterView) -> list[list[int]]:
        if self.error is not None:
            raise self.error
        return self.answer  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("placer", "message"),
    [
        (_BrokenPlacer(answer=[[7]]), "not a usable broker"),
        (_BrokenPlacer(error=ZeroDivisionError("boom")), "ZeroDivisionError"),
        (_BrokenPlacer(error=PlacementError("no room")), "no room"),
    ],
)
def test_faulty_placer_is_replica_placement_failed(placer: _BrokenPlacer, message: str) -> None:
    @run_async
    async def body() -> None:
        h = Harness(placer=placer)
        await h.start()
        await h.add_brokers(1)
        [result] = await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
        assert result.error.code is ErrorCode.REPLICA_PLACEMENT_FAILED
        assert result.error.message is not None and message in result.error.message
        await h.stop()

    body()


@run_async
async def test_a_bug_costs_one_request_not_the_queue() -> None:
    calls = 0

    def flaky_ids() -> bytes:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("no ids today")
        return calls.to_bytes(16, "big")

    h = Harness(new_topic_id=flaky_ids)
    await h.start()
    await h.add_brokers(1)
    with pytest.raises(KafkaError) as raised:
        await h.controller.create_topics([NewTopic("t", 1, 1)])
    assert raised.value.code is ErrorCode.UNKNOWN_SERVER_ERROR
    assert raised.value.message == "RuntimeError: no ids today"
    [result] = await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    assert result.error.ok
    await h.stop()
