"""Checks shared by every placer, and the check the controller runs on a placer's answer.

The replication-factor checks live in one place so that every built-in placer rejects a request
with the same words, in the same order, as Kafka's controller: the order decides which message a
user sees when several apply (an empty cluster reports that all brokers are fenced).

:func:`check_assignment` exists because ``replica.placer.class.name`` admits code the project
does not control. The controller runs it on every answer before writing records, so a faulty
placer yields ``REPLICA_PLACEMENT_FAILED`` instead of a corrupt metadata log.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from placement.api import (
    InvalidReplicationFactorError,
    PlacementError,
    PlacementSpec,
    UsableBroker,
)


def check_replication_factor(replication_factor: int, brokers: Sequence[UsableBroker]) -> None:
    """Raise :class:`InvalidReplicationFactorError` with Kafka's message if RF cannot be met."""
    check_replication_factor_of(
        replication_factor, len(brokers), any(not broker.fenced for broker in brokers)
    )


def check_replication_factor_of(
    replication_factor: int, broker_count: int, any_unfenced: bool
) -> None:
    """:func:`check_replication_factor` from counts a placer may already hold."""
    if replication_factor <= 0:
        raise InvalidReplicationFactorError(
            f"Invalid replication factor {replication_factor}: "
            "the replication factor must be positive."
        )
    if not any_unfenced:
        raise InvalidReplicationFactorError("All brokers are currently fenced.")
    if replication_factor > broker_count:
        raise InvalidReplicationFactorError(
            f"The target replication factor of {replication_factor} cannot be reached because "
            f"only {broker_count} broker(s) are registered."
        )


def distinct_brokers(brokers: Iterable[UsableBroker]) -> list[UsableBroker]:
    """The brokers sorted by id; a repeated id means the cluster view is broken, so say so."""
    by_id: dict[int, UsableBroker] = {}
    for broker in brokers:
        if broker.id in by_id:
            raise PlacementError(f"Broker {broker.id} is listed more than once as usable.")
        by_id[broker.id] = broker
    return [by_id[broker_id] for broker_id in sorted(by_id)]


def check_assignment(
    spec: PlacementSpec, brokers: Iterable[UsableBroker], assignment: object
) -> list[list[int]]:
    """Return ``assignment`` if it is a valid answer to ``spec``, else raise PlacementError.

    Valid means: one list per partition; each of exactly RF distinct ids of usable brokers; the
    first replica unfenced, because it becomes the leader. The argument is typed ``object``
    because a third-party placer may return anything.
    """
    usable = {broker.id: broker for broker in brokers}
    if not isinstance(assignment, list) or not all(isinstance(r, list) for r in assignment):
        raise PlacementError(
            f"The replica placer returned {type(assignment).__name__}, not a list of lists."
        )
    if len(assignment) != spec.partition_count:
        raise PlacementError(
            f"The replica placer returned {len(assignment)} replica list(s) for "
            f"{spec.partition_count} partition(s)."
        )
    checked: list[list[int]] = []
    for offset, replicas in enumerate(assignment):
        partition = spec.start_partition + offset
        if len(replicas) != spec.replication_factor:
            raise PlacementError(
                f"The replica placer gave partition {partition} {len(replicas)} replica(s) "
                f"instead of {spec.replication_factor}."
            )
        for replica in replicas:
            if type(replica) is not int or replica not in usable:
                raise PlacementError(
                    f"The replica placer gave partition {partition} replica {replica!r}, "
                    "which is not a usable broker."
                )
        if len(set(replicas)) != len(replicas):
            raise PlacementError(
                f"The replica placer gave partition {partition} a repeated broker: {replicas}."
            )
        if usable[replicas[0]].fenced:
            raise PlacementError(
                f"The replica placer made fenced broker {replicas[0]} the leader of "
                f"partition {partition}."
            )
        checked.append(list(replicas))
    return checked


def leader_counts(assignment: Iterable[Sequence[int]]) -> Counter[int]:
    """Preferred leaders per broker; brokers with none are absent."""
    return Counter(replicas[0] for replicas in assignment if replicas)


def replica_counts(assignment: Iterable[Sequence[int]]) -> Counter[int]:
    """Replicas per broker; brokers with none are absent."""
    return Counter(broker for replicas in assignment for broker in replicas)


def spread(counts: Counter[int], broker_ids: Iterable[int]) -> int:
    """Max minus min of ``counts`` over ``broker_ids``, counting absent brokers as 0."""
    values = [counts.get(broker_id, 0) for broker_id in broker_ids]
    return max(values) - min(values) if values else 0
