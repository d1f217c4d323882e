"""Hostile admin input is refused before the controller does any work for it.

Duplicate names are refused in every copy, partition counts and config values are bounded
before placement, and broker ids that belong to a controller or are negative never register.
"""

from __future__ import annotations

import time

import pytest

from raftmeta.common.brokers import BrokerRegistrationRequest
from raftmeta.common.configs import AlterConfig, AlterConfigOp, ConfigResourceRef
from raftmeta.common.topics import NewPartitions, NewTopic
from raftmeta.controller import MAX_RECORDS_PER_USER_OP
from raftmeta.errors import ErrorCode
from raftmeta.records import BrokerEndpoint, BrokerFeature, ConfigResourceType, RemoveTopicRecord
from tests.controller.harness import CLUSTER_ID, Harness, run_async

INT32_MAX = 2**31 - 1


@run_async
async def test_delete_topics_refuses_every_copy_of_a_name_named_twice() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    await h.run(h.controller.create_topics([NewTopic("a", 1, 1), NewTopic("b", 1, 1)]))
    before = len(h.log.batches)
    results = await h.run(h.controller.delete_topics(["a", "b", "a"]))
    assert [(r.name, r.error.code) for r in results] == [
        ("a", ErrorCode.INVALID_REQUEST),
        ("b", ErrorCode.NONE),
        ("a", ErrorCode.INVALID_REQUEST),
    ]
    assert results[0].error.message == "Duplicate topic name."
    removed = [r for batch in h.log.batches[before:] for r in h.log.records(batch)]
    assert len(removed) == 1 and isinstance(removed[0], RemoveTopicRecord)
    assert h.log.replay_all().topic_by_name("a") is not None
    await h.stop()


@run_async
async def test_create_partitions_refuses_every_copy_of_a_name_named_twice() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    results = await h.run(
        h.controller.create_partitions([NewPartitions("t", 2), NewPartitions("t", 3)])
    )
    assert [r.error.code for r in results] == [ErrorCode.INVALID_REQUEST] * 2
    assert results[1].error.message == "Duplicate topic name."
    topic = h.log.replay_all().topic_by_name("t")
    assert topic is not None and len(topic.partitions) == 1
    await h.stop()


@run_async
async def test_create_topics_with_int32_max_partitions_answers_at_once() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(3)
    started = time.monotonic()
    for validate_only in (True, False):
        task = await h.submit(
            h.controller.create_topics(
                [NewTopic("huge", INT32_MAX, 1)], validate_only=validate_only
            )
        )
        assert task.done()
        error = task.exception()
        assert getattr(error, "code", None) is ErrorCode.POLICY_VIOLATION, error
        assert "Excessively large number of partitions per request." in str(error)
    assert time.monotonic() - started < 2
    # The cap counts the whole request, and the default partition count for -1.
    split = [NewTopic(f"t{i}", MAX_RECORDS_PER_USER_OP // 2 + 1, 1) for i in range(2)]
    task = await h.submit(h.controller.create_topics(split, validate_only=True))
    assert getattr(task.exception(), "code", None) is ErrorCode.POLICY_VIOLATION
    h2 = Harness(num_partitions=MAX_RECORDS_PER_USER_OP + 1)
    await h2.start()
    await h2.add_brokers(1)
    task = await h2.submit(h2.controller.create_topics([NewTopic("d", -1, 1)], validate_only=True))
    assert getattr(task.exception(), "code", None) is ErrorCode.POLICY_VIOLATION
    await h2.stop()
    # The controller still works afterwards.
    [ok] = await h.run(h.controller.create_topics([NewTopic("fine", 3, 3)]))
    assert ok.error.ok
    await h.stop()


@run_async
async def test_create_partitions_to_int32_max_answers_at_once() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(3)
    await h.run(h.controller.create_topics([NewTopic("t", 1, 3)]))
    started = time.monotonic()
    for validate_only in (True, False):
        task = await h.submit(
            h.controller.create_partitions(
                [NewPartitions("t", INT32_MAX)], validate_only=validate_only
            )
        )
        assert task.done()
        [result] = task.result()
        assert result.error.code is ErrorCode.POLICY_VIOLATION
        assert result.error.message is not None and str(INT32_MAX - 1) in result.error.message
    assert time.monotonic() - started < 2
    # Two topics that fit alone but not together: the second is refused before placement.
    await h.run(h.controller.create_topics([NewTopic("u", 1, 1)]))
    half = MAX_RECORDS_PER_USER_OP // 2 + 2  # each topic has one partition already
    first, second = await h.run(
        h.controller.create_partitions(
            [NewPartitions("t", half), NewPartitions("u", half)], validate_only=True
        )
    )
    assert first.error.ok
    assert second.error.code is ErrorCode.POLICY_VIOLATION
    [grown] = await h.run(h.controller.create_partitions([NewPartitions("t", 4)]))
    assert grown.error.ok
    await h.stop()


@run_async
async def test_config_values_too_long_or_out_of_range_are_invalid_config() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    [long_value] = await h.run(
        h.controller.create_topics(
            [NewTopic("t", 1, 1, configs={"cleanup.policy": "delete," * 100_000})]
        )
    )
    assert long_value.error.code is ErrorCode.INVALID_CONFIG
    assert long_value.error.message is not None and len(long_value.error.message) < 500
    [too_big] = await h.run(
        h.controller.create_topics([NewTopic("t", 1, 1, configs={"retention.ms": str(2**63)})])
    )
    assert too_big.error.code is ErrorCode.INVALID_CONFIG
    [int32] = await h.run(
        h.controller.create_topics(
            [NewTopic("t", 1, 1, configs={"min.insync.replicas": str(2**31)})]
        )
    )
    assert int32.error.code is ErrorCode.INVALID_CONFIG
    [long_name] = await h.run(
        h.controller.create_topics([NewTopic("t", 1, 1, configs={"x" * 100_000: "1"})])
    )
    assert long_name.error.code is ErrorCode.INVALID_CONFIG
    assert long_name.error.message is not None and len(long_name.error.message) < 500
    [ok] = await h.run(
        h.controller.create_topics([NewTopic("t", 1, 1, configs={"retention.ms": str(2**63 - 1)})])
    )
    assert ok.error.ok
    [altered] = await h.run(
        h.controller.incremental_alter_configs(
            {
                ConfigResourceRef(int(ConfigResourceType.TOPIC), "t"): [
                    AlterConfig("retention.bytes", AlterConfigOp.SET, "9" * 5000)
                ]
            }
        )
    )
    assert altered.error.code is ErrorCode.INVALID_CONFIG
    await h.stop()


@run_async
async def test_broker_ids_of_controllers_and_negative_ids_never_register() -> None:
    h = Harness(voter_ids=frozenset({3000, 3001, 3002}))
    await h.start()
    for broker_id in (3000, 3002, -1, -2, -(2**31)):
        task = await h.submit(
            h.controller.register_broker(
                BrokerRegistrationRequest(broker_id, CLUSTER_ID, b"\x01" * 16)
            )
        )
        error = task.exception()
        assert getattr(error, "code", None) is ErrorCode.INVALID_REGISTRATION, (broker_id, error)
        assert str(broker_id) in str(error)
    assert h.controller.latest_image.brokers == {}
    assert h.log.uncommitted_records() == []
    epochs = await h.add_brokers(1)
    assert h.log.replay_all().broker(1) is not None and epochs[1] >= 0
    await h.stop()


@run_async
async def test_only_a_combined_nodes_broker_registers_under_a_voters_id() -> None:
    """process.roles=broker,controller: the broker half registers as ``combined`` under its
    node's id; a combined registration under an id no voter has is refused."""
    h = Harness(voter_ids=frozenset({3000, 3001, 3002}))
    await h.start()
    stray = await h.submit(
        h.controller.register_broker(
            BrokerRegistrationRequest(7, CLUSTER_ID, b"\x02" * 16, combined=True)
        )
    )
    error = stray.exception()
    assert getattr(error, "code", None) is ErrorCode.INVALID_REGISTRATION, error
    assert "combined" in str(error)
    epoch = await h.run(
        h.controller.register_broker(
            BrokerRegistrationRequest(3001, CLUSTER_ID, b"\x01" * 16, combined=True)
        )
    )
    assert epoch >= 0
    assert h.log.replay_all().broker(3001) is not None
    await h.stop()


@pytest.mark.parametrize(
    ("endpoints", "features", "rack", "words"),
    [
        ((BrokerEndpoint("P", "h", 65_536, 0),), (), None, "port 65536"),
        ((BrokerEndpoint("P", "h", -1, 0),), (), None, "port -1"),
        ((BrokerEndpoint("P", "h", 1, 2**15),), (), None, "security protocol"),
        ((BrokerEndpoint("P", "h", 1, 0),) * 2, (), None, "twice"),
        ((BrokerEndpoint("P", "h" * 256, 1, 0),), (), None, "256 characters"),
        ((), (BrokerFeature("f", 2, 1),), None, "versions 2..1"),
        ((), (BrokerFeature("f", 0, 2**15),), None, "versions"),
        ((), (), "r" * 256, "rack"),
    ],
)
def test_registration_values_outside_kafkas_wire_types_are_refused(
    endpoints: tuple[BrokerEndpoint, ...],
    features: tuple[BrokerFeature, ...],
    rack: str | None,
    words: str,
) -> None:
    @run_async
    async def body() -> None:
        h = Harness()
        await h.start()
        task = await h.submit(
            h.controller.register_broker(
                BrokerRegistrationRequest(1, CLUSTER_ID, b"\x01" * 16, endpoints, features, rack)
            )
        )
        error = task.exception()
        assert getattr(error, "code", None) is ErrorCode.INVALID_REGISTRATION, error
        assert words in str(error)
        assert h.log.uncommitted_records() == []
        await h.stop()

    body()


@run_async
async def test_unregistering_an_unknown_broker_is_broker_id_not_registered() -> None:
    h = Harness()
    await h.start()
    task = await h.submit(h.controller.unregister_broker(66))
    error = task.exception()
    assert getattr(error, "code", None) is ErrorCode.BROKER_ID_NOT_REGISTERED
    assert "66" in str(error)
    await h.stop()
