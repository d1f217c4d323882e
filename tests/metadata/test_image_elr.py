"""The KIP-966 lists in the image: carried by partition records, changed by deltas, cleared by
ClearElrRecord, and written back into snapshots."""

from __future__ import annotations

import pytest

from raftmeta.image import MetadataImage, ReplayError
from raftmeta.records import (
    ClearElrRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    TopicRecord,
)

T1, T2 = bytes(range(16)), bytes(range(1, 17))


def _image(records: list[Record]) -> MetadataImage:
    return MetadataImage.from_records(records, len(records) - 1)


def _history() -> list[Record]:
    return [
        TopicRecord("a", T1),
        PartitionRecord(0, T1, (1, 2, 3), (1,), leader=1, eligible_leader_replicas=(2,)),
        TopicRecord("b", T2),
        PartitionRecord(0, T2, (1, 2, 3), (), leader=-1, eligible_leader_replicas=(2, 3)),
        PartitionChangeRecord(0, T2, last_known_elr=(1,)),
    ]


def test_a_change_sets_the_lists_and_none_keeps_them() -> None:
    image = _image(_history())
    b = image.partition(T2, 0)
    assert b is not None and (b.elr, b.last_known_elr, b.partition_epoch) == ((2, 3), (1,), 1)
    a = image.partition(T1, 0)
    assert a is not None and (a.elr, a.last_known_elr) == ((2,), ())


def test_clear_elr_for_one_topic_leaves_the_others() -> None:
    image = _image([*_history(), ClearElrRecord("b")])
    b, a = image.partition(T2, 0), image.partition(T1, 0)
    assert b is not None and (b.elr, b.last_known_elr) == ((), ())
    assert b.partition_epoch == 1, "clearing is not a partition change"
    assert a is not None and a.elr == (2,)


def test_clear_elr_with_no_name_clears_every_topic() -> None:
    image = _image([*_history(), ClearElrRecord("")])
    assert all(not p.elr and not p.last_known_elr for _key, p in image.partitions())


def test_clear_elr_naming_no_topic_is_a_replay_error() -> None:
    with pytest.raises(ReplayError, match="names no topic"):
        _image([*_history(), ClearElrRecord("missing")])


def test_the_lists_survive_a_snapshot_round_trip() -> None:
    image = _image(_history())
    again = MetadataImage.from_records(image.to_records(), image.offset)
    assert again == image
    assert again.partition(T2, 0) == image.partition(T2, 0)
