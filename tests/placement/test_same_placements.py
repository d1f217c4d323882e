"""Today's placers give exactly the replicas the stripe gave before it was made cheap.

The small-cluster scan, the cached broker layout and the count lists are only ways to compute
the same choices faster, so for the same brokers, counts, request and random state every
placement must equal the one from the stripe kept in tests/placement/legacy_balance.py, on
clusters of both sizes (scanned and heap-ordered), with fenced brokers, budgets, topics being
extended and broker sets changing between calls of one placer.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence

import pytest

from placement import (
    ClusterView,
    EmptiestBrokerPlacer,
    PlacementError,
    PlacementSpec,
    StaticClusterView,
    StripedReplicaPlacer,
    UsableBroker,
)
from placement._balance import (
    SCAN_MAX_BROKERS,
    NoCandidateError,
    TopicCounts,
    budget,
    place_balanced,
)
from placement._layout import BrokerLayout
from tests.placement import legacy_balance

RACKS = (None, "a", "b", "c", "d", "e")


def random_cluster(rng: random.Random) -> tuple[UsableBroker, ...]:
    size = rng.choice((rng.randint(1, 8), rng.randint(1, SCAN_MAX_BROKERS + 16)))
    ids = rng.sample(range(500), size)
    racks = rng.sample(RACKS, rng.randint(1, len(RACKS)))
    fencing = rng.random() < 0.4
    brokers = [
        UsableBroker(broker_id, rng.choice(racks), fencing and rng.random() < 0.3)
        for broker_id in ids
    ]
    rng.shuffle(brokers)
    return tuple(brokers)


def random_view(rng: random.Random, brokers: tuple[UsableBroker, ...]) -> StaticClusterView:
    known = [broker.id for broker in brokers] + [900, 901]  # two no longer usable
    replication_factor = rng.randint(1, min(3, len(brokers)))
    assignment = tuple(
        tuple(rng.sample(known, replication_factor)) for _ in range(rng.choice((0, 0, 5, 40)))
    )
    counted = rng.random() < 0.8
    return StaticClusterView(
        brokers,
        assignment,
        {broker_id: rng.randint(0, 50) for broker_id in known if counted},
        {broker_id: rng.randint(0, 20) for broker_id in known if counted},
    )


def random_spec(rng: random.Random, view: StaticClusterView) -> PlacementSpec:
    replication_factor = rng.choice((1, 2, 3, 3, 3, len(view.brokers), len(view.brokers) + 1))
    return PlacementSpec(len(view.assignment), rng.choice((1, 3, 3, 12, 70)), replication_factor)


def outcome(call: Callable[..., list[list[int]]], *arguments: object) -> object:
    """The placement, or the failure as comparable values."""
    try:
        return call(*arguments)
    except (NoCandidateError, legacy_balance.NoCandidateError) as failure:
        return ("no candidate", failure.partition, failure.needed, failure.found, failure.leader)
    except PlacementError as error:
        return ("error", error.code, error.message)


class PerBrokerView:
    """A view with only the protocol's per-broker methods, not ClusterCounts."""

    def __init__(self, view: StaticClusterView) -> None:
        self._view = view

    def usable_brokers(self) -> Iterable[UsableBroker]:
        return self._view.usable_brokers()

    def replica_count(self, broker_id: int) -> int:
        return self._view.replica_count(broker_id)

    def leader_count(self, broker_id: int) -> int:
        return self._view.leader_count(broker_id)

    def existing_assignment(self) -> Sequence[Sequence[int]]:
        return self._view.existing_assignment()


@pytest.mark.parametrize("bulk_counts", [True, False], ids=["bulk", "per-broker"])
@pytest.mark.parametrize("seed", range(6))
def test_the_default_placer_places_as_before(seed: int, bulk_counts: bool) -> None:
    rng = random.Random(seed)
    for case in range(60):
        brokers = random_cluster(rng)
        static_view = random_view(rng, brokers)
        view: ClusterView = static_view if bulk_counts else PerBrokerView(static_view)
        spec = random_spec(rng, static_view)
        placer_seed = rng.getrandbits(32)
        old = outcome(legacy_balance.legacy_default, random.Random(placer_seed), spec, view)
        new = outcome(StripedReplicaPlacer(random.Random(placer_seed)).place, spec, view)
        assert new == old, f"seed {seed} case {case}: {spec} on {brokers}"


@pytest.mark.parametrize("seed", range(3))
def test_the_emptiest_placer_places_as_before(seed: int) -> None:
    rng = random.Random(100 + seed)
    for case in range(60):
        brokers = random_cluster(rng)
        view = random_view(rng, brokers)
        spec = random_spec(rng, view)
        placer_seed = rng.getrandbits(32)
        old = outcome(legacy_balance.legacy_emptiest, random.Random(placer_seed), spec, view)
        new = outcome(EmptiestBrokerPlacer(random.Random(placer_seed)).place, spec, view)
        assert new == old, f"seed {seed} case {case}: {spec} on {brokers}"


@pytest.mark.parametrize("seed", range(3))
def test_budgets_run_out_where_they_did(seed: int) -> None:
    # The capacity placer's engine: a budget per broker, some already spent or overdrawn.
    rng = random.Random(200 + seed)
    for case in range(60):
        brokers = random_cluster(rng)
        view = random_view(rng, brokers)
        spec = random_spec(rng, view)
        room = {broker.id: rng.randint(-2, 12) for broker in brokers if rng.random() < 0.9}
        stripe_seed = rng.getrandbits(32)
        sorted_brokers = sorted(brokers, key=lambda broker: broker.id)
        old_stripe = legacy_balance.BalancedStripe.from_assignment(
            sorted_brokers, view.assignment, random.Random(stripe_seed), room, view
        )
        layout = BrokerLayout(brokers)
        counts = TopicCounts.of_topic(layout, view.assignment, view)
        old = outcome(old_stripe.place_many, spec)
        new = outcome(
            place_balanced,
            layout,
            spec,
            random.Random(stripe_seed),
            counts,
            budget(layout, room),
        )
        assert new == old, f"seed {seed} case {case}: {spec} on {brokers} with {room}"


def test_one_placer_keeps_placing_as_before_while_the_brokers_change() -> None:
    # One placer, many calls: the random state runs on and the cached layout must follow every
    # change of the broker set (a broker fenced, one added, one gone, the same set rebuilt).
    rng = random.Random(7)
    placer_seed = 12345
    placer = StripedReplicaPlacer(random.Random(placer_seed))
    legacy_rng = random.Random(placer_seed)
    brokers = list(random_cluster(rng))
    for call in range(300):
        change = rng.random()
        if change < 0.1 and len(brokers) > 1:
            brokers.pop(rng.randrange(len(brokers)))
        elif change < 0.2:
            brokers.append(UsableBroker(1000 + call, rng.choice(RACKS), False))
        elif change < 0.3:
            index = rng.randrange(len(brokers))
            broker = brokers[index]
            brokers[index] = UsableBroker(broker.id, broker.rack, not broker.fenced)
        elif change < 0.4:
            brokers = list(brokers)  # an equal set in a new object
        view = random_view(rng, tuple(brokers))
        spec = random_spec(rng, view)
        old = outcome(legacy_balance.legacy_default, legacy_rng, spec, view)
        new = outcome(placer.place, spec, view)
        assert new == old, f"call {call}: {spec} on {brokers}"
