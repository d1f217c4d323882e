"""Hypothesis strategies and helpers for placement tests: clusters shaped like real ones."""

from __future__ import annotations

import random
from collections.abc import Sequence

from hypothesis import strategies as st

from placement import PlacementSpec, ReplicaPlacer, StaticClusterView, UsableBroker

RACK_NAMES = (None, "a", "b", "c", "d", "e")


def view(
    brokers: Sequence[UsableBroker],
    assignment: Sequence[Sequence[int]] = (),
    replica_counts: dict[int, int] | None = None,
    leader_counts: dict[int, int] | None = None,
) -> StaticClusterView:
    return StaticClusterView(
        tuple(brokers),
        tuple(tuple(replicas) for replicas in assignment),
        replica_counts or {},
        leader_counts or {},
    )


def grid(racks: int, per_rack: int, fenced: Sequence[int] = ()) -> list[UsableBroker]:
    """Brokers 0.. laid out round-robin over racks r0.., the usual homogeneous test cluster."""
    return [
        UsableBroker(index, f"r{index % racks}", index in fenced)
        for index in range(racks * per_rack)
    ]


def place(
    placer: ReplicaPlacer,
    brokers: Sequence[UsableBroker],
    count: int,
    replication_factor: int,
    existing: Sequence[Sequence[int]] = (),
) -> list[list[int]]:
    spec = PlacementSpec(len(existing), count, replication_factor)
    return placer.place(spec, view(brokers, existing))


@st.composite
def clusters(draw: st.DrawFn, max_brokers: int = 24) -> list[UsableBroker]:
    """Any cluster with at least one unfenced broker: uneven racks, no racks, fenced brokers."""
    count = draw(st.integers(1, max_brokers))
    ids = draw(st.lists(st.integers(0, 5000), min_size=count, max_size=count, unique=True))
    rack_names = draw(st.lists(st.sampled_from(RACK_NAMES), min_size=1, max_size=5, unique=True))
    racks = [draw(st.sampled_from(rack_names)) for _ in ids]
    fenced = [draw(st.booleans()) for _ in ids] if draw(st.booleans()) else [False] * count
    if all(fenced):
        fenced[draw(st.integers(0, count - 1))] = False
    return [
        UsableBroker(broker_id, rack, is_fenced)
        for broker_id, rack, is_fenced in zip(ids, racks, fenced, strict=True)
    ]


@st.composite
def homogeneous_clusters(draw: st.DrawFn) -> list[UsableBroker]:
    """Racks of equal size, all brokers unfenced, ids in no particular order."""
    rack_count = draw(st.integers(1, 6))
    per_rack = draw(st.integers(1, 6))
    count = rack_count * per_rack
    ids = draw(st.lists(st.integers(0, 5000), min_size=count, max_size=count, unique=True))
    racks: list[str | None] = [None, *(f"rack-{index}" for index in range(1, rack_count))]
    return [
        UsableBroker(broker_id, racks[index % rack_count], False)
        for index, broker_id in enumerate(ids)
    ]


def seeded(seed: int) -> random.Random:
    return random.Random(seed)
