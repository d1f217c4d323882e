"""One test per replay rule of the metadata image."""

from __future__ import annotations

import gc
import pickle
import weakref

import pytest

from raftmeta.image import MetadataImage, PartitionRegistration, ReplayError
from raftmeta.records import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    ConfigResourceType,
    FeatureLevelRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
)

ORDERS = bytes([1] * 16)
PAYMENTS = bytes([2] * 16)
TOPIC = int(ConfigResourceType.TOPIC)
BROKER = int(ConfigResourceType.BROKER)


def replayed(*records: Record) -> MetadataImage:
    image = MetadataImage()
    image.apply_batch(records, 0)
    return image


def partition(
    partition_id: int,
    replicas: tuple[int, ...] = (1, 2, 3),
    isr: tuple[int, ...] | None = None,
    leader: int | None = None,
    topic_id: bytes = ORDERS,
) -> PartitionRecord:
    isr = replicas if isr is None else isr
    return PartitionRecord(
        partition_id=partition_id,
        topic_id=topic_id,
        replicas=replicas,
        isr=isr,
        leader=(isr[0] if isr else -1) if leader is None else leader,
    )


def register(broker_id: int, epoch: int, **fields: object) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(
        broker_id,
        bytes([broker_id] * 16),
        epoch,
        (BrokerEndpoint("PLAINTEXT", f"broker{broker_id}", 9092, 0),),
        **fields,  # type: ignore[arg-type]
    )


def orders_image(*more: Record) -> MetadataImage:
    return replayed(TopicRecord("orders", ORDERS), partition(0), *more)


def registration(image: MetadataImage, partition_id: int = 0) -> PartitionRegistration:
    found = image.partition(ORDERS, partition_id)
    assert found is not None
    return found


# --- brokers -------------------------------------------------------------------------------


def test_a_new_registration_starts_fenced_and_keeps_its_fields() -> None:
    image = replayed(register(1, 0, rack="rack-a"))
    broker = image.broker(1)
    assert broker is not None
    assert (broker.broker_epoch, broker.rack, broker.fenced) == (0, "rack-a", True)
    assert broker.in_controlled_shutdown is False
    assert broker.endpoints == (BrokerEndpoint("PLAINTEXT", "broker1", 9092, 0),)
    assert not broker.is_active


def test_registering_again_replaces_the_registration() -> None:
    image = replayed(register(1, 0, fenced=False), register(1, 1, rack="rack-b"))
    broker = image.broker(1)
    assert broker is not None
    assert (broker.broker_epoch, broker.rack, broker.fenced) == (1, "rack-b", True)
    assert list(image.brokers) == [1]


def _controller(controller_id: int, incarnation: int, port: int) -> RegisterControllerRecord:
    return RegisterControllerRecord(
        controller_id,
        bytes([incarnation] * 16),
        (BrokerEndpoint("KAFKA", "127.0.0.1", port, 0),),
    )


def test_the_image_keeps_each_controllers_latest_registration_in_snapshots_too() -> None:
    image = replayed(_controller(3001, 1, 9101), _controller(3000, 1, 9100))
    image.apply(_controller(3001, 2, 9111), 2)  # a restart: a new incarnation replaces the old
    assert dict(image.controllers) == {
        3000: _controller(3000, 1, 9100),
        3001: _controller(3001, 2, 9111),
    }
    loaded = MetadataImage.from_records(image.to_records(), image.offset)
    assert loaded == image
    assert loaded.digest() == image.digest()
    assert image != replayed(_controller(3000, 1, 9100), NoOpRecord(), NoOpRecord())


def test_a_log_without_controller_registrations_loads_with_none() -> None:
    image = replayed(register(1, 0), NoOpRecord())
    assert dict(image.controllers) == {}
    assert MetadataImage.from_records(image.to_records(), image.offset) == image


def test_unregister_removes_the_registration() -> None:
    image = replayed(register(1, 0), register(2, 1), UnregisterBrokerRecord(1, 0))
    assert list(image.brokers) == [2]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (UnregisterBrokerRecord(9, 0), "no registration for broker 9"),
        (UnregisterBrokerRecord(1, 7), "registered at epoch 0, not 7"),
        (BrokerRegistrationChangeRecord(9, 0, fenced=-1), "no registration for broker 9"),
        (BrokerRegistrationChangeRecord(1, 7, fenced=-1), "registered at epoch 0, not 7"),
        (BrokerRegistrationChangeRecord(1, 0, fenced=2), "fenced value 2"),
        (BrokerRegistrationChangeRecord(1, 0, in_controlled_shutdown=-1), "in_controlled_shutdown"),
    ],
)
def test_broker_records_must_name_the_current_registration(record: Record, message: str) -> None:
    image = replayed(register(1, 0))
    with pytest.raises(ReplayError, match=message):
        image.apply(record, 1)
    assert image.offset == 0
    assert image.broker(1) == replayed(register(1, 0)).broker(1)


def test_registration_change_fences_and_unfences() -> None:
    image = replayed(register(1, 0))
    image.apply(BrokerRegistrationChangeRecord(1, 0, fenced=-1), 1)
    assert image.brokers[1].fenced is False
    assert image.brokers[1].is_active
    image.apply(BrokerRegistrationChangeRecord(1, 0, fenced=0), 2)
    assert image.brokers[1].fenced is False
    image.apply(BrokerRegistrationChangeRecord(1, 0, fenced=1), 3)
    assert image.brokers[1].fenced is True


def test_registration_change_enters_controlled_shutdown_and_only_registering_leaves_it() -> None:
    image = replayed(register(1, 0, fenced=False))
    image.apply(BrokerRegistrationChangeRecord(1, 0, in_controlled_shutdown=0), 1)
    assert image.brokers[1].in_controlled_shutdown is False
    image.apply(BrokerRegistrationChangeRecord(1, 0, in_controlled_shutdown=1), 2)
    assert image.brokers[1].in_controlled_shutdown is True
    assert not image.brokers[1].is_active
    image.apply(BrokerRegistrationChangeRecord(1, 0, fenced=-1, in_controlled_shutdown=0), 3)
    assert image.brokers[1].in_controlled_shutdown is True
    image.apply(register(1, 4), 4)
    assert image.brokers[1].in_controlled_shutdown is False


# --- topics and partitions -----------------------------------------------------------------


def test_topic_record_creates_an_empty_topic() -> None:
    image = replayed(TopicRecord("orders", ORDERS))
    topic = image.topic_by_name("orders")
    assert topic is not None
    assert (topic.name, topic.topic_id, dict(topic.partitions)) == ("orders", ORDERS, {})
    assert image.topic_ids_by_name == {"orders": ORDERS}


def test_a_duplicate_topic_name_is_fatal() -> None:
    image = replayed(TopicRecord("orders", ORDERS))
    with pytest.raises(ReplayError, match="topic 'orders' already exists") as raised:
        image.apply(TopicRecord("orders", PAYMENTS), 1)
    assert raised.value.offset == 1
    assert "offset 1" in str(raised.value)


def test_a_duplicate_topic_id_is_fatal() -> None:
    image = replayed(TopicRecord("orders", ORDERS))
    with pytest.raises(ReplayError, match="already names topic 'orders'"):
        image.apply(TopicRecord("payments", ORDERS), 1)


def test_a_removed_topic_name_can_be_created_again() -> None:
    image = orders_image(RemoveTopicRecord(ORDERS), TopicRecord("orders", PAYMENTS))
    assert image.topic_ids_by_name == {"orders": PAYMENTS}
    assert image.partition_count == 0


def test_partition_record_sets_the_whole_state() -> None:
    image = orders_image(
        PartitionRecord(
            1, ORDERS, (3, 1), (1,), (3,), (4,), 1, 1, leader_epoch=4, partition_epoch=6
        )
    )
    assert registration(image, 1) == PartitionRegistration(
        replicas=(3, 1),
        isr=(1,),
        removing_replicas=(3,),
        adding_replicas=(4,),
        leader=1,
        leader_recovery_state=1,
        leader_epoch=4,
        partition_epoch=6,
    )
    assert image.partition_count == 2


def test_partition_record_for_an_unknown_topic_is_fatal() -> None:
    image = MetadataImage()
    with pytest.raises(ReplayError, match="no topic with id"):
        image.apply(partition(0), 0)


@pytest.mark.parametrize(
    "record",
    [
        PartitionRecord(0, ORDERS, (1,), (1,), leader=-2),
        PartitionRecord(0, ORDERS, (1,), (1,), leader=1, leader_recovery_state=-1),
        PartitionRecord(0, ORDERS, (1,), (1,), leader=1, leader_recovery_state=2),
    ],
)
def test_partition_record_sentinels_are_fatal(record: PartitionRecord) -> None:
    image = replayed(TopicRecord("orders", ORDERS))
    with pytest.raises(ReplayError):
        image.apply(record, 1)
    assert image.partition_count == 0


def test_partition_change_keeps_every_null_or_sentinel_field() -> None:
    image = orders_image(
        PartitionRecord(
            1, ORDERS, (3, 1), (1,), (3,), (4,), 1, 1, leader_epoch=4, partition_epoch=6
        )
    )
    image.apply(PartitionChangeRecord(1, ORDERS), 3)
    after = registration(image, 1)
    assert after == PartitionRegistration((3, 1), (1,), (3,), (4,), 1, 1, 4, 7)


def test_partition_change_replaces_each_given_field() -> None:
    image = orders_image()
    image.apply(
        PartitionChangeRecord(
            0,
            ORDERS,
            isr=(2,),
            leader=2,
            replicas=(2, 3, 4),
            removing_replicas=(1,),
            adding_replicas=(4,),
            leader_recovery_state=1,
        ),
        2,
    )
    assert registration(image) == PartitionRegistration((2, 3, 4), (2,), (1,), (4,), 2, 1, 1, 1)


def test_leader_epoch_rises_whenever_leader_is_set_even_to_the_same_broker() -> None:
    image = orders_image()
    image.apply(PartitionChangeRecord(0, ORDERS, leader=1), 2)
    assert (registration(image).leader, registration(image).leader_epoch) == (1, 1)
    image.apply(PartitionChangeRecord(0, ORDERS, isr=(1, 2)), 3)
    assert registration(image).leader_epoch == 1
    image.apply(PartitionChangeRecord(0, ORDERS, leader=-1), 4)
    assert (registration(image).leader, registration(image).leader_epoch) == (-1, 2)


def test_partition_epoch_rises_on_every_change() -> None:
    image = orders_image()
    for offset in range(2, 6):
        image.apply(PartitionChangeRecord(0, ORDERS), offset)
    assert registration(image).partition_epoch == 4
    assert registration(image).leader_epoch == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (PartitionChangeRecord(0, PAYMENTS, leader=1), "no topic with id"),
        (PartitionChangeRecord(7, ORDERS, leader=1), "no partition 7"),
        (PartitionChangeRecord(0, ORDERS, leader=-3), "leader -3"),
        (PartitionChangeRecord(0, ORDERS, leader_recovery_state=2), "leader_recovery_state 2"),
    ],
)
def test_partition_change_must_name_an_existing_partition(
    change: PartitionChangeRecord, message: str
) -> None:
    image = orders_image()
    before = registration(image)
    with pytest.raises(ReplayError, match=message):
        image.apply(change, 2)
    assert registration(image) is before
    assert image.offset == 1


def test_remove_topic_drops_partitions_configs_and_index_entries() -> None:
    image = replayed(
        TopicRecord("orders", ORDERS),
        ConfigRecord(TOPIC, "orders", "retention.ms", "1"),
        partition(0, leader=-1, isr=()),
        partition(1, replicas=(2, 1), leader=1),
        TopicRecord("payments", PAYMENTS),
        ConfigRecord(TOPIC, "payments", "retention.ms", "2"),
        ConfigRecord(BROKER, "", "retention.ms", "3"),
        partition(0, replicas=(3,), topic_id=PAYMENTS),
        RemoveTopicRecord(ORDERS),
    )
    assert image.topic(ORDERS) is None
    assert image.topic_by_name("orders") is None
    assert image.partition(ORDERS, 0) is None
    assert image.partition_count == 1
    assert image.configs(TOPIC, "orders") == {}
    assert image.configs(TOPIC, "payments") == {"retention.ms": "2"}
    assert image.configs(BROKER, "") == {"retention.ms": "3"}
    assert image.leaderless_partitions == set()
    assert image.partitions_not_led_by_preferred == set()
    assert image.partitions_with_isr_member(1) == set()
    assert image.partitions_with_isr_member(3) == {(PAYMENTS, 0)}
    assert dict(image.leader_counts) == {3: 1}


def test_removing_an_unknown_topic_is_fatal() -> None:
    with pytest.raises(ReplayError, match="no topic with id"):
        replayed(RemoveTopicRecord(ORDERS))


# --- configs, features, offsets ------------------------------------------------------------


def test_config_value_none_deletes_and_the_last_delete_drops_the_resource() -> None:
    image = replayed(
        ConfigRecord(BROKER, "1", "a", "x"),
        ConfigRecord(BROKER, "1", "b", "y"),
        ConfigRecord(BROKER, "1", "a", "z"),
        ConfigRecord(BROKER, "1", "missing", None),
    )
    assert image.configs(BROKER, "1") == {"a": "z", "b": "y"}
    image.apply_batch(
        [ConfigRecord(BROKER, "1", "a", None), ConfigRecord(BROKER, "1", "b", None)], 4
    )
    assert image.configs(BROKER, "1") == {}
    assert set(image.config_resources) == set()


def test_unknown_config_resource_type_is_fatal() -> None:
    with pytest.raises(ReplayError, match="resource type 3"):
        replayed(ConfigRecord(3, "x", "a", "b"))


def test_feature_levels_are_set_and_level_zero_removes() -> None:
    image = replayed(
        FeatureLevelRecord("metadata.version", 7),
        FeatureLevelRecord("kraft.version", 1),
        FeatureLevelRecord("metadata.version", 9),
        FeatureLevelRecord("kraft.version", 0),
    )
    assert image.features == {"metadata.version": 9}


def test_offsets_must_increase_and_no_op_moves_them() -> None:
    image = MetadataImage()
    assert image.offset == -1
    image.apply(NoOpRecord(), 0)
    image.apply(NoOpRecord(), 5)
    assert image.offset == 5
    with pytest.raises(ReplayError, match="already at offset 5"):
        image.apply(NoOpRecord(), 5)
    with pytest.raises(ReplayError, match="already at offset 5"):
        image.apply_batch([NoOpRecord()], 3)
    image.apply_batch([NoOpRecord(), NoOpRecord()], 6)
    assert image.offset == 7
    image.apply_batch([], 100)
    assert image.offset == 7


def test_a_failing_batch_reports_the_offset_and_stops_before_it() -> None:
    image = MetadataImage()
    with pytest.raises(ReplayError) as raised:
        image.apply_batch([TopicRecord("a", ORDERS), NoOpRecord(), RemoveTopicRecord(PAYMENTS)], 10)
    assert raised.value.offset == 12
    assert image.offset == 11


def test_something_that_is_not_a_record_is_refused() -> None:
    with pytest.raises(ReplayError, match="str is not a metadata record"):
        MetadataImage().apply("TopicRecord", 0)  # type: ignore[arg-type]


# --- indexes -------------------------------------------------------------------------------


def test_isr_index_follows_isr_changes() -> None:
    image = orders_image(partition(1, replicas=(2, 3), leader=2))
    assert image.partitions_with_isr_member(1) == {(ORDERS, 0)}
    assert image.partitions_with_isr_member(2) == {(ORDERS, 0), (ORDERS, 1)}
    image.apply(PartitionChangeRecord(0, ORDERS, isr=(1, 3, 4)), 3)
    assert image.partitions_with_isr_member(2) == {(ORDERS, 1)}
    assert image.partitions_with_isr_member(4) == {(ORDERS, 0)}
    assert image.partitions_with_isr_member(9) == set()


def test_leaderless_and_not_preferred_sets_follow_leader_changes() -> None:
    image = orders_image()
    assert image.leaderless_partitions == set()
    assert image.partitions_not_led_by_preferred == set()
    image.apply(PartitionChangeRecord(0, ORDERS, leader=2), 2)
    assert image.partitions_not_led_by_preferred == {(ORDERS, 0)}
    image.apply(PartitionChangeRecord(0, ORDERS, leader=-1), 3)
    assert image.leaderless_partitions == {(ORDERS, 0)}
    assert image.partitions_not_led_by_preferred == {(ORDERS, 0)}
    image.apply(PartitionChangeRecord(0, ORDERS, leader=1), 4)
    assert image.leaderless_partitions == set()
    assert image.partitions_not_led_by_preferred == set()


def test_reassignment_that_moves_the_preferred_replica_updates_the_indexes() -> None:
    image = orders_image()
    image.apply(PartitionChangeRecord(0, ORDERS, replicas=(3, 2, 1)), 2)
    assert image.partitions_not_led_by_preferred == {(ORDERS, 0)}
    assert (image.preferred_count(1), image.preferred_count(3)) == (0, 1)
    assert image.preferred_and_leading_count(3) == 0
    image.apply(PartitionChangeRecord(0, ORDERS, leader=3), 3)
    assert image.preferred_and_leading_count(3) == 1
    assert (image.leader_count(1), image.leader_count(3)) == (0, 1)


def test_leader_and_preferred_counts_per_broker() -> None:
    image = orders_image(
        partition(1, replicas=(1, 2), leader=2),
        partition(2, replicas=(2, 1), leader=2),
        partition(3, replicas=(3, 1), isr=(), leader=-1),
    )
    assert dict(image.leader_counts) == {1: 1, 2: 2}
    assert dict(image.preferred_counts) == {1: 2, 2: 1, 3: 1}
    assert dict(image.preferred_and_leading_counts) == {1: 1, 2: 1}
    assert image.leader_count(3) == 0


def test_a_partition_without_replicas_is_not_counted_as_imbalanced() -> None:
    image = orders_image(partition(1, replicas=(), leader=-1))
    assert image.leaderless_partitions == {(ORDERS, 1)}
    assert image.partitions_not_led_by_preferred == set()
    assert registration(image, 1).is_led_by_preferred


def test_rewriting_a_partition_record_reindexes_it() -> None:
    image = orders_image(partition(0, replicas=(4, 5), leader=5))
    assert image.partition_count == 1
    assert image.partitions_with_isr_member(1) == set()
    assert image.partitions_with_isr_member(4) == {(ORDERS, 0)}
    assert dict(image.leader_counts) == {5: 1}
    assert image.partitions_not_led_by_preferred == {(ORDERS, 0)}


def test_isr_equal_to_replicas_shares_the_tuple() -> None:
    image = orders_image()
    assert registration(image).isr is registration(image).replicas


# --- snapshots -----------------------------------------------------------------------------


def test_to_records_writes_features_brokers_topics_partitions_then_other_configs() -> None:
    image = replayed(
        ConfigRecord(BROKER, "", "x", "1"),
        TopicRecord("payments", PAYMENTS),
        partition(1, topic_id=PAYMENTS),
        partition(0, topic_id=PAYMENTS),
        register(2, 4),
        TopicRecord("orders", ORDERS),
        ConfigRecord(TOPIC, "orders", "retention.ms", "5"),
        ConfigRecord(TOPIC, "ghost", "retention.ms", "6"),
        partition(0),
        register(1, 9),
        FeatureLevelRecord("metadata.version", 20),
    )
    kinds = [
        (type(record).__name__, getattr(record, "name", None) or getattr(record, "broker_id", ""))
        for record in image.to_records()
    ]
    assert kinds == [
        ("FeatureLevelRecord", "metadata.version"),
        ("RegisterBrokerRecord", 1),
        ("RegisterBrokerRecord", 2),
        ("TopicRecord", "orders"),
        ("ConfigRecord", "retention.ms"),
        ("PartitionRecord", ""),
        ("TopicRecord", "payments"),
        ("PartitionRecord", ""),
        ("PartitionRecord", ""),
        ("ConfigRecord", "retention.ms"),
        ("ConfigRecord", "x"),
    ]
    assert MetadataImage.from_records(image.to_records(), image.offset) == image


def test_snapshot_keeps_broker_state_and_epochs() -> None:
    image = orders_image(register(1, 2), BrokerRegistrationChangeRecord(1, 2, fenced=-1))
    image.apply(PartitionChangeRecord(0, ORDERS, leader=2), 4)
    loaded = MetadataImage.from_records(image.to_records(), image.offset)
    assert loaded == image
    assert loaded.offset == 4
    assert loaded.brokers[1].fenced is False
    assert registration(loaded) == registration(image)
    assert loaded.digest() == image.digest()


def test_a_bad_snapshot_record_is_fatal() -> None:
    with pytest.raises(ReplayError, match="snapshot record 0"):
        MetadataImage.from_records([partition(0)], 10)


def test_digest_covers_content_not_offset() -> None:
    image = orders_image()
    same_content_later = orders_image(NoOpRecord())
    assert image.digest() == same_content_later.digest()
    assert image != same_content_later
    changed = orders_image(PartitionChangeRecord(0, ORDERS))
    assert changed.digest() != image.digest()
    assert len(image.digest()) == 64
    assert MetadataImage().digest() == MetadataImage().digest()


def test_a_dropped_image_is_freed_without_the_cycle_collector() -> None:
    image = orders_image(register(1, 2))
    dropped = weakref.ref(image)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        del image
        assert dropped() is None
    finally:
        if was_enabled:
            gc.enable()


def test_an_image_survives_pickling_and_replays_into_its_own_parts() -> None:
    image = orders_image(ConfigRecord(TOPIC, "orders", "retention.ms", "1"))
    copied = pickle.loads(pickle.dumps(image))
    assert copied == image
    copied.apply(RemoveTopicRecord(ORDERS), image.offset + 1)
    assert copied.topic(ORDERS) is None
    assert copied.configs(TOPIC, "orders") == {}
    assert image.topic(ORDERS) is not None
    assert image.configs(TOPIC, "orders") == {"retention.ms": "1"}
