"""AdminClient and AsyncAdminClient checks that need no quorum: config and argument checking,
the exception's shape, request-level failures reaching every item, closing."""

from __future__ import annotations

import concurrent.futures
import time

import pytest

from raftmeta.admin import (
    AdminClient,
    AlterConfigOpType,
    AsyncAdminClient,
    ConfigEntry,
    ConfigResource,
    ElectionType,
    ErrorCode,
    KafkaException,
    NewPartitions,
    NewTopic,
    ResourceType,
    TopicPartition,
    parse_admin_config,
)
from raftmeta.errors import KafkaError
from tests.admin.fake_nodes import refusing_endpoint
from tests.support.scenario import run_with_deadline


@pytest.mark.parametrize(
    ("config", "complaint"),
    [
        ({}, "needs bootstrap.servers"),
        ({"bootstrap.servers": "a:1", "group.id": "x"}, "unknown admin config key group.id"),
        ({"bootstrap.servers": "a:1", "x": 1, "y": 2}, "unknown admin config keys x, y"),
        ({"bootstrap.servers": "a"}, "not host:port"),
        ({"bootstrap.servers": 5}, "host:port strings"),
        ({"bootstrap.servers": "a:1", "request.timeout.ms": 0}, "request.timeout.ms"),
        ({"bootstrap.servers": "a:1", "request.timeout.ms": "soon"}, "request.timeout.ms"),
        ({"bootstrap.servers": "a:1", "bearer.token": ""}, "bearer.token"),
    ],
)
def test_a_bad_config_is_a_clear_value_error(config: dict[str, object], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        AdminClient(config)
    with pytest.raises(ValueError, match=complaint):
        AsyncAdminClient(config)


def test_config_values_may_come_from_a_properties_file_as_strings() -> None:
    settings = parse_admin_config(
        {"bootstrap.servers": "a:1, b:2", "request.timeout.ms": "1500", "bearer.token": "t"}
    )
    assert settings.bootstrap_servers == ("a:1", "b:2")
    assert settings.request_timeout_ms == 1500
    assert settings.bearer_token == "t"


def test_kafka_exception_carries_the_code_its_name_and_the_message() -> None:
    error = KafkaException(ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 't' already exists.")
    assert isinstance(error, KafkaError)
    assert error.error is error
    assert (error.code, error.name, int(error.code)) == (
        ErrorCode.TOPIC_ALREADY_EXISTS,
        "TOPIC_ALREADY_EXISTS",
        36,
    )
    assert str(error) == "TOPIC_ALREADY_EXISTS (36): Topic 't' already exists."
    unknown = KafkaException(9999, "odd")
    assert unknown.code is ErrorCode.UNKNOWN_SERVER_ERROR and "9999" in unknown.message


def test_config_resources_compare_by_type_and_name_only() -> None:
    setting = ConfigEntry("retention.ms", "1", incremental_operation=AlterConfigOpType.SET)
    change = ConfigResource("topic", "t", [setting])
    assert change == ConfigResource(ResourceType.TOPIC, "t") == ConfigResource(2, "t")
    assert {change: 1}[ConfigResource("TOPIC", "t")] == 1
    assert ConfigResource("broker", "1") != ConfigResource("topic", "1")
    with pytest.raises(ValueError, match="unknown config resource type"):
        ConfigResource("group", "g")
    with pytest.raises(ValueError, match="unknown config resource type"):
        ConfigResource(3, "g")


def test_bad_arguments_fail_before_anything_is_sent() -> None:
    with AdminClient({"bootstrap.servers": "127.0.0.1:1"}) as admin:
        with pytest.raises(ValueError, match="duplicate topic 't'"):
            admin.create_topics([NewTopic("t", 1, 1), NewTopic("t", 2, 1)])
        with pytest.raises(ValueError, match="at least one topic"):
            admin.create_topics([])
        with pytest.raises(ValueError, match="list of NewTopic"):
            admin.create_topics(NewTopic("t", 1, 1))  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="counts must be ints"):
            admin.create_topics([NewTopic("t", "3")])  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="config keys and values must be strings"):
            admin.create_topics([NewTopic("t", 1, 1, config={"retention.ms": 5})])  # type: ignore[dict-item]
        with pytest.raises(ValueError, match="replica_assignment must be lists"):
            admin.create_topics([NewTopic("t", replica_assignment=[["1"]])])  # type: ignore[list-item]
        with pytest.raises(ValueError, match="int new_total_count"):
            admin.create_partitions([NewPartitions("t", 2.5)])  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="list of topic names"):
            admin.delete_topics("t")
        with pytest.raises(ValueError, match="list of NewPartitions"):
            admin.create_partitions([NewTopic("t")])  # type: ignore[list-item]
        with pytest.raises(ValueError, match="needs an incremental_operation"):
            admin.incremental_alter_configs(
                [ConfigResource("topic", "t", [ConfigEntry("retention.ms", "1")])]
            )
        with pytest.raises(ValueError, match="no incremental_configs"):
            admin.incremental_alter_configs([ConfigResource("topic", "t")])
        with pytest.raises(ValueError, match="request_timeout"):
            admin.delete_topics(["t"], request_timeout=0)
        with pytest.raises(ValueError, match="at least one TopicPartition"):
            admin.elect_leaders(ElectionType.PREFERRED, [])
        with pytest.raises(ValueError, match="election_type"):
            admin.elect_leaders("PREFERRED", None)  # type: ignore[arg-type]


def test_no_controller_in_time_fails_every_item_with_request_timed_out() -> None:
    with (
        refusing_endpoint() as dead,
        AdminClient({"bootstrap.servers": dead, "request.timeout.ms": 200}) as admin,
    ):
        started = time.monotonic()
        futures = admin.create_topics([NewTopic("a", 1, 1), NewTopic("b", 1, 1)])
        assert set(futures) == {"a", "b"}
        for future in futures.values():
            with pytest.raises(KafkaException) as caught:
                future.result(timeout=5)
            assert caught.value.code is ErrorCode.REQUEST_TIMED_OUT
            assert dead in caught.value.message
        assert time.monotonic() - started < 10
        cluster = admin.describe_cluster(request_timeout=0.1)
        with pytest.raises(KafkaException, match="REQUEST_TIMED_OUT"):
            cluster.result(timeout=5)
        with pytest.warns(DeprecationWarning, match="elect_leaders"):
            result = admin.elect_preferred_leaders([TopicPartition("a", 0)])
        with pytest.raises(KafkaException, match="REQUEST_TIMED_OUT"):
            result.partitions().result(timeout=5)
        with pytest.raises(KafkaException, match="REQUEST_TIMED_OUT"):
            result.all().result(timeout=5)


def test_the_async_client_fails_every_item_alike_and_warns_on_the_old_name() -> None:
    async def scenario(dead: str) -> None:
        async with AsyncAdminClient({"bootstrap.servers": dead}) as admin:
            futures = admin.describe_configs(
                [ConfigResource("topic", "a"), ConfigResource("broker", "1")],
                request_timeout=0.2,
            )
            for future in futures.values():
                with pytest.raises(KafkaException) as caught:
                    await future
                assert caught.value.code is ErrorCode.REQUEST_TIMED_OUT
            with pytest.warns(DeprecationWarning):
                result = admin.elect_preferred_leaders(None, request_timeout=0.2)
            with pytest.raises(KafkaException, match="REQUEST_TIMED_OUT"):
                await result.all()

    with refusing_endpoint() as dead:
        run_with_deadline(scenario(dead), 10)


def test_the_async_client_needs_a_running_loop() -> None:
    admin = AsyncAdminClient({"bootstrap.servers": "127.0.0.1:1"})
    with pytest.raises(RuntimeError, match="running event loop"):
        admin.describe_cluster()


def test_closing_cancels_requests_under_way_and_refuses_new_ones() -> None:
    with refusing_endpoint() as dead:
        admin = AdminClient({"bootstrap.servers": dead, "request.timeout.ms": 60_000})
        pending = admin.delete_topics(["t"])["t"]
        admin.close()
        with pytest.raises(concurrent.futures.CancelledError):
            pending.result(timeout=5)
        with pytest.raises(RuntimeError, match="closed"):
            admin.delete_topics(["t"])
        admin.close()  # a second close does nothing


def test_partitions_to_grow_and_topics_to_create_accept_manual_assignments() -> None:
    topic = NewTopic("t", replica_assignment=[[1, 2], [2, 3]])
    grow = NewPartitions("t", 4, replica_assignment=[[3, 1], [1, 2]])
    assert topic.num_partitions == topic.replication_factor == -1
    assert grow.new_total_count == 4
