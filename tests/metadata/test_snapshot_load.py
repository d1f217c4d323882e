"""The bulk snapshot load builds the image the record-by-record replay builds, indexes included,
and leaves whatever it does not expect to that replay, which names a bad record as before."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from raftmeta.image import MetadataImage, ReplayError, load_snapshot_image
from raftmeta.raft.batch import SnapshotId
from raftmeta.records import (
    NO_LEADER,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicRecord,
    decode_record,
    encode_each,
)
from raftmeta.storage.snapshots import SnapshotReader, SnapshotWriter
from tests.metadata.strategies import histories
from tests.metadata.test_image_properties import assert_indexes_match_a_recount

BULK_LOG = "raftmeta.image.snapshot_load"
TOPIC_ID = bytes(range(16))


def write_snapshot(directory: Path, records: Iterable[Record], end_offset: int) -> SnapshotReader:
    """``records`` as a snapshot file in small batches, so runs of partitions cross batches."""
    encoded = encode_each(records)
    writer = SnapshotWriter(
        directory, SnapshotId(end_offset, 0), cluster_id="test", records_per_batch=7
    )
    writer.append(encoded)
    return SnapshotReader(writer.freeze())


def replayed(records: Iterable[Record], offset: int) -> MetadataImage:
    """The record-by-record load, each record through the encoding as from a file."""
    return MetadataImage.from_records(
        (decode_record(data) for data in encode_each(records)), offset
    )


def assert_loads_alike(records: list[Record], end_offset: int) -> MetadataImage:
    with tempfile.TemporaryDirectory() as directory:
        image = load_snapshot_image(write_snapshot(Path(directory), records, end_offset))
    expected = replayed(records, end_offset - 1)
    assert image == expected
    assert image.digest() == expected.digest()
    assert_indexes_match_a_recount(image)
    assert dict(image.leader_counts) == dict(expected.leader_counts)
    assert list(image.leader_counts) == list(expected.leader_counts)
    assert list(image.preferred_counts) == list(expected.preferred_counts)
    return image


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_a_snapshot_loads_in_bulk_as_its_records_replay(history: list[Record]) -> None:
    source = MetadataImage()
    source.apply_batch(history, 0)
    assert_loads_alike(list(source.to_records()), source.offset + 1)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_a_whole_history_written_as_a_snapshot_loads_as_it_replays(
    history: list[Record],
) -> None:
    # Changes, removals and partitions placed again: the bulk path hands over to replay.
    assert_loads_alike(history, len(history))


def broker(broker_id: int) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(broker_id, bytes(16), broker_id, (), (), None, False, False)


def partition(partition_id: int, replicas: tuple[int, ...], leader: int) -> PartitionRecord:
    return PartitionRecord(partition_id, TOPIC_ID, replicas, replicas, leader=leader)


def cluster(partitions: int) -> list[Record]:
    """Brokers with ids past the small ints CPython shares, and partitions of mixed shapes:
    three replicas, one, none, leaderless, led by another than the preferred."""
    records: list[Record] = [broker(broker_id) for broker_id in range(1000, 1006)]
    records.append(TopicRecord("orders", TOPIC_ID))
    for partition_id in range(partitions):
        replicas = tuple(1000 + (partition_id + step) % 6 for step in range(3))
        shape = partition_id % 5
        if shape == 1:
            replicas = replicas[:1]
        elif shape == 2:
            replicas = ()
        leader = NO_LEADER if shape in (2, 3) else replicas[shape == 4]
        records.append(partition(partition_id, replicas, leader))
    return records


def test_a_snapshot_of_every_partition_shape_loads_in_bulk(
    caplog: pytest.LogCaptureFixture,
) -> None:
    records = cluster(400)
    with caplog.at_level(logging.WARNING, logger=BULK_LOG):
        image = assert_loads_alike(records, len(records))
    assert not caplog.records, "the bulk path gave up on a snapshot it should load"
    assert image.partition_count == 400
    assert image.leaderless_partitions


def test_the_bulk_load_shares_the_ids_replay_shares() -> None:
    records = cluster(40)
    with tempfile.TemporaryDirectory() as directory:
        image = load_snapshot_image(write_snapshot(Path(directory), records, len(records)))
    one, other = image.partition(TOPIC_ID, 0), image.partition(TOPIC_ID, 30)
    assert one is not None and other is not None
    assert one.replicas == other.replicas and one.replicas[0] is other.replicas[0]
    assert one.isr is one.replicas


def test_a_partition_placed_twice_loads_as_it_replays(caplog: pytest.LogCaptureFixture) -> None:
    records = cluster(10)
    records.append(partition(3, (1005, 1004, 1003), 1004))
    with caplog.at_level(logging.WARNING, logger=BULK_LOG):
        assert_loads_alike(records, len(records))
    assert "placed twice" in caplog.text


def test_a_change_in_a_snapshot_hands_over_to_replay() -> None:
    records = cluster(10)
    records.append(PartitionChangeRecord(4, TOPIC_ID, leader=1001))
    records.append(partition(10, (1001, 1002, 1003), 1001))
    assert_loads_alike(records, len(records))


def test_a_bad_partition_is_named_as_replay_names_it() -> None:
    records = cluster(10)
    records.append(partition(10, (1001, 1002, 1003), -5))
    with tempfile.TemporaryDirectory() as directory:
        reader = write_snapshot(Path(directory), records, len(records))
        with pytest.raises(ReplayError, match=f"snapshot record {len(records) - 1}: .*-5"):
            load_snapshot_image(reader)


def test_a_partition_of_no_topic_is_named_as_replay_names_it() -> None:
    records: list[Record] = [
        broker(1000),
        PartitionRecord(0, TOPIC_ID, (1000,), (1000,), leader=1000),
    ]
    with tempfile.TemporaryDirectory() as directory:
        reader = write_snapshot(Path(directory), records, len(records))
        with pytest.raises(ReplayError, match="snapshot record 1: no topic"):
            load_snapshot_image(reader)
