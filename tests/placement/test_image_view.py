"""The controller's cluster view keeps the usable brokers between requests, never past a change.

The view hands out one tuple for as long as the image's broker registrations stay the same, so
that a placer can keep what it derived from them; every registration change (a broker joining,
fenced, unfenced, shutting down, leaving) must show in the next view at once.
"""

from __future__ import annotations

import uuid

import pytest

from placement import (
    ClusterView,
    PlacementError,
    PlacementSpec,
    StripedReplicaPlacer,
    UsableBroker,
)
from raftmeta.controller.topics import ImageClusterView, place_checked
from raftmeta.image import MetadataImage
from raftmeta.records import (
    BrokerRegistrationChangeRecord,
    ControlledShutdownChange,
    FencingChange,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicRecord,
    UnregisterBrokerRecord,
)
from tests.placement.clusters import seeded


class _Image:
    """An image with records applied at increasing offsets."""

    def __init__(self) -> None:
        self.image = MetadataImage()
        self._offset = 0

    def apply(self, record: Record) -> None:
        self.image.apply(record, self._offset)
        self._offset += 1

    def usable(self) -> tuple[UsableBroker, ...]:
        usable = ImageClusterView(self.image).usable_brokers()
        assert isinstance(usable, tuple)
        return usable


def register(broker_id: int, rack: str | None = None, fenced: bool = False) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(
        broker_id, uuid.UUID(int=broker_id).bytes, 1, rack=rack, fenced=fenced
    )


def test_the_usable_brokers_follow_every_registration_change() -> None:
    cluster = _Image()
    for broker_id in (1, 2, 3):
        cluster.apply(register(broker_id, rack="a"))
    first = cluster.usable()
    assert first == tuple(UsableBroker(broker_id, "a", False) for broker_id in (1, 2, 3))
    assert cluster.usable() is first, "unchanged brokers should give the same tuple"

    cluster.apply(BrokerRegistrationChangeRecord(2, 1, fenced=FencingChange.FENCE))
    assert cluster.usable() == (
        UsableBroker(1, "a", False),
        UsableBroker(2, "a", True),
        UsableBroker(3, "a", False),
    )
    cluster.apply(BrokerRegistrationChangeRecord(2, 1, fenced=FencingChange.UNFENCE))
    assert cluster.usable() == first

    cluster.apply(
        BrokerRegistrationChangeRecord(
            3, 1, in_controlled_shutdown=ControlledShutdownChange.IN_CONTROLLED_SHUTDOWN
        )
    )
    assert cluster.usable() == (UsableBroker(1, "a", False), UsableBroker(2, "a", False))
    cluster.apply(UnregisterBrokerRecord(1, 1))
    cluster.apply(register(4, rack="b"))
    assert cluster.usable() == (UsableBroker(2, "a", False), UsableBroker(4, "b", False))


def test_two_images_with_different_brokers_each_see_their_own() -> None:
    # Two controllers in one process share the module's cache; neither may see the other's.
    left, right = _Image(), _Image()
    left.apply(register(1))
    right.apply(register(1, fenced=True))
    right.apply(register(2))
    for _ in range(3):
        assert left.usable() == (UsableBroker(1, None, False),)
        assert right.usable() == (UsableBroker(1, None, True), UsableBroker(2, None, False))


def test_the_placer_sees_a_fenced_broker_at_once() -> None:
    cluster = _Image()
    for broker_id in (1, 2, 3):
        cluster.apply(register(broker_id))
    placer = StripedReplicaPlacer(seeded(3))
    spec = PlacementSpec(0, 6, 1)
    leaders = {
        replicas[0] for replicas in place_checked(placer, spec, ImageClusterView(cluster.image))
    }
    assert leaders == {1, 2, 3}
    cluster.apply(BrokerRegistrationChangeRecord(3, 1, fenced=FencingChange.FENCE))
    for _ in range(5):
        answer = place_checked(placer, spec, ImageClusterView(cluster.image))
        assert {replicas[0] for replicas in answer} == {1, 2}


def test_counts_in_bulk_equal_the_per_broker_counts() -> None:
    cluster = _Image()
    for broker_id in (1, 2, 3, 4):
        cluster.apply(register(broker_id))
    placer = StripedReplicaPlacer(seeded(5))
    topic_id = uuid.UUID(int=77).bytes
    cluster.apply(TopicRecord("t", topic_id))
    spec = PlacementSpec(0, 5, 2)
    for partition, replicas in enumerate(
        place_checked(placer, spec, ImageClusterView(cluster.image))
    ):
        cluster.apply(
            PartitionRecord(
                partition_id=partition,
                topic_id=topic_id,
                replicas=tuple(replicas),
                isr=tuple(replicas),
                leader=replicas[0],
            )
        )
    view = ImageClusterView(cluster.image)
    ids = [4, 1, 2, 3, 9]
    leaders = view.leader_counts_of(ids)
    replicas = view.replica_counts_of(ids)
    assert leaders == [view.leader_count(broker_id) for broker_id in ids]
    assert replicas == [view.replica_count(broker_id) for broker_id in ids]
    assert sum(leaders) == 5 and sum(replicas) == 10


class _DerivedPlacer(StripedReplicaPlacer):
    """A user's subclass: not the built-in type, so its answers are checked."""

    def place(self, spec: PlacementSpec, cluster: ClusterView) -> list[list[int]]:
        return [[99] for _ in range(spec.partition_count)]


def test_a_subclass_of_a_built_in_placer_is_still_checked() -> None:
    cluster = _Image()
    cluster.apply(register(1))
    with pytest.raises(PlacementError, match="not a usable broker"):
        place_checked(
            _DerivedPlacer(seeded(1)), PlacementSpec(0, 1, 1), ImageClusterView(cluster.image)
        )
