"""What a partition costs in memory: ids shared, not one int object per mention."""

from __future__ import annotations

from raftmeta.image import MetadataImage
from raftmeta.records import PartitionRecord, Record, TopicRecord, decode_record, encode_each


def test_partitions_share_one_int_per_broker_id() -> None:
    """Ids above 256 decode to new int objects each time; the image keeps one of each."""
    topic_id = bytes(range(16))
    records = [TopicRecord("big-ids", topic_id)] + [
        PartitionRecord(p, topic_id, (1000 + p % 2, 2000, 3000), (2000, 3000), leader=2000)
        for p in range(4)
    ]
    image = MetadataImage()
    image.apply_batch([decode_record(data) for data in encode_each(records)], 0)
    topic = image.topic_by_name("big-ids")
    assert topic is not None
    mentions = [
        broker_id
        for registration in topic.partitions.values()
        for broker_id in (*registration.replicas, *registration.isr, registration.leader)
    ]
    assert len({id(broker_id) for broker_id in mentions}) == len(set(mentions)) == 4


def test_topics_share_one_int_per_partition_id() -> None:
    records: list[Record] = []
    for index in range(2):
        topic_id = bytes([index]) * 16
        records.append(TopicRecord(f"t{index}", topic_id))
        records.append(PartitionRecord(300, topic_id, (1,), (1,), leader=1))
    image = MetadataImage()
    image.apply_batch([decode_record(data) for data in encode_each(records)], 0)
    ids = [
        partition_id
        for name in ("t0", "t1")
        if (topic := image.topic_by_name(name)) is not None
        for partition_id in topic.partitions
    ]
    assert ids == [300, 300] and ids[0] is ids[1]
