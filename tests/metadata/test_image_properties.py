"""Properties over random histories: indexes match a from-scratch recount after every record,
and a snapshot plus the rest of the log rebuilds exactly the image a full replay builds."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raftmeta.image import MetadataImage, PartitionKey
from raftmeta.records import NO_LEADER, Record, decode_record, encode_each, encode_record
from tests.metadata.strategies import BROKER_IDS, histories


def assert_indexes_match_a_recount(image: MetadataImage) -> None:
    isr_members: dict[int, set[PartitionKey]] = {}
    leaderless: set[PartitionKey] = set()
    not_led_by_preferred: set[PartitionKey] = set()
    leaders: Counter[int] = Counter()
    preferred: Counter[int] = Counter()
    preferred_and_leading: Counter[int] = Counter()
    count = 0
    for key, registration in image.partitions():
        count += 1
        for broker_id in registration.isr:
            isr_members.setdefault(broker_id, set()).add(key)
        preferred_leader = registration.replicas[0] if registration.replicas else NO_LEADER
        if registration.leader == NO_LEADER:
            leaderless.add(key)
        else:
            leaders[registration.leader] += 1
        if registration.leader != preferred_leader:
            not_led_by_preferred.add(key)
        if preferred_leader != NO_LEADER:
            preferred[preferred_leader] += 1
            if registration.leader == preferred_leader:
                preferred_and_leading[preferred_leader] += 1

    assert image.partition_count == count
    names = list(image.topic_ids_by_name)
    for name in [*names, *(n.replace("_", ".") for n in names), *(n + "_" for n in names)]:
        colliding = sorted(
            other
            for other in names
            if other != name and other.replace(".", "_") == name.replace(".", "_")
        )
        assert image.colliding_topic(name) == (colliding[0] if colliding else None)
    for broker_id in (NO_LEADER, *BROKER_IDS, max(BROKER_IDS) + 1):
        assert image.partitions_with_isr_member(broker_id) == isr_members.get(broker_id, set())
    assert set(image.leaderless_partitions) == leaderless
    assert set(image.partitions_not_led_by_preferred) == not_led_by_preferred
    assert dict(image.leader_counts) == dict(leaders)
    assert dict(image.preferred_counts) == dict(preferred)
    assert dict(image.preferred_and_leading_counts) == dict(preferred_and_leading)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_incremental_indexes_equal_a_recount_after_every_record(history: list[Record]) -> None:
    image = MetadataImage()
    for offset, record in enumerate(history):
        image.apply(record, offset)
        assert_indexes_match_a_recount(image)


def replay_all(history: list[Record]) -> MetadataImage:
    image = MetadataImage()
    image.apply_batch(history, 0)
    return image


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_snapshot_then_rest_equals_replay_from_offset_zero(data: st.DataObject) -> None:
    history = data.draw(histories())
    split = data.draw(st.integers(0, len(history)))
    # Every record crosses the encoding on its way in, as it does through the log.
    history = [decode_record(encoded) for encoded in encode_each(history)]

    expected = replay_all(history)

    prefix = replay_all(history[:split])
    snapshot = [encode_record(record) for record in prefix.to_records()]
    restored = MetadataImage.from_records((decode_record(b) for b in snapshot), split - 1)
    assert restored == prefix
    for offset in range(split, len(history)):
        restored.apply(history[offset], offset)

    assert restored == expected
    assert restored.digest() == expected.digest()
    assert_indexes_match_a_recount(restored)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_a_snapshot_of_a_loaded_snapshot_is_byte_identical(history: list[Record]) -> None:
    image = replay_all(history)
    first = encode_each(list(image.to_records()))
    loaded = MetadataImage.from_records((decode_record(b) for b in first), image.offset)
    assert encode_each(list(loaded.to_records())) == first
    assert loaded.digest() == image.digest()


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), histories())
def test_different_content_gives_different_digests(
    first: list[Record], second: list[Record]
) -> None:
    one, other = replay_all(first), replay_all(second)
    same_content = list(one.to_records()) == list(other.to_records())
    assert (one.digest() == other.digest()) == same_content


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.data())
def test_a_copy_changes_independently_of_its_original(
    history: list[Record], data: st.DataObject
) -> None:
    """The controller's speculative image is a copy: replaying the rest of the log into the
    copy must leave the original exactly as it was, and give what a full replay gives."""
    cut = data.draw(st.integers(0, len(history)), label="cut")
    original = MetadataImage()
    for offset, record in enumerate(history[:cut]):
        original.apply(record, offset)
    before = original.digest()
    copy = original.copy()
    assert copy == original
    for offset, record in enumerate(history[cut:], start=cut):
        copy.apply(record, offset)
        assert_indexes_match_a_recount(copy)
    assert original.digest() == before
    assert_indexes_match_a_recount(original)
    assert copy == replay_all(history)
    # And the other way round: a copy holds still while its original goes on (the two share
    # index sets until one of them changes a set).
    held = original.copy()
    for offset, record in enumerate(history[cut:], start=cut):
        original.apply(record, offset)
        assert_indexes_match_a_recount(original)
    assert held.digest() == before
    assert_indexes_match_a_recount(held)
    assert original == copy


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.data())
def test_snapshot_work_encodes_the_image_as_captured(
    history: list[Record], data: st.DataObject
) -> None:
    """A node captures its image for a snapshot, then goes on applying commits while a worker
    thread encodes the capture: the snapshot must hold the image as it was at the capture."""
    cut = data.draw(st.integers(0, len(history)), label="cut")
    image = MetadataImage()
    for offset, record in enumerate(history[:cut]):
        image.apply(record, offset)
    expected = encode_each(image.to_records())
    work = image.snapshot_work()
    for offset, record in enumerate(history[cut:], start=cut):
        image.apply(record, offset)
    assert work() == expected
