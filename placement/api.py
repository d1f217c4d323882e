"""The placement plug-in point: what a placer is given, what it returns, and how it fails.

Kafka's controller has had this interface since KRaft began but never let operators choose the
implementation (KIP-660 was discarded, KIP-1203 is still under discussion). raftmeta exposes it
through ``replica.placer.class.name``, so the types here are a public contract: they are kept
small, they are values, and a placer only has to understand as much of the cluster as it uses.

Two views of the cluster exist for that reason. :class:`ClusterDescriber` is the least a placer
can work with: the usable brokers. :class:`ClusterView` adds the per-broker counts and the topic's
current assignment, which the controller keeps in its metadata image anyway and can hand over
without a scan; that answers KIP-660's objection that smart placers need an expensive full view.
A placer whose ``place`` accepts a ``ClusterDescriber`` still satisfies :class:`ReplicaPlacer`,
because a method that asks for less is a valid stand-in for one that is offered more.

How the controller reports a failure:

* :class:`InvalidReplicationFactorError` becomes ``INVALID_REPLICATION_FACTOR`` with the error's
  message; on the CreateTopics path the controller prefixes it with
  ``"Unable to replicate the partition R time(s): "`` as Kafka does, so clients that match on
  Kafka's text keep working.
* Any other :class:`PlacementError` becomes ``REPLICA_PLACEMENT_FAILED`` with its message.
* Anything else a third-party placer raises is a bug in that placer; the controller reports it as
  ``REPLICA_PLACEMENT_FAILED`` naming the exception type, and never lets it escape the event loop.

Each error carries its :attr:`~PlacementError.code`, so the controller can map without a table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from raftmeta.errors import ErrorCode, KafkaError


@dataclass(frozen=True, slots=True)
class PlacementSpec:
    """One placement request: partitions ``start_partition`` .. ``start_partition + count - 1``.

    CreateTopics asks with ``start_partition`` 0; CreatePartitions asks with the topic's current
    partition count, which lets a placer continue the existing layout instead of restarting it.
    The replication factor is not checked here: rejecting it is the placer's job, with Kafka's
    message (see :func:`placement.checks.check_replication_factor`).
    """

    start_partition: int
    partition_count: int
    replication_factor: int

    def __post_init__(self) -> None:
        if self.start_partition < 0:
            raise ValueError(f"start_partition must be >= 0, got {self.start_partition}")
        if self.partition_count < 0:
            raise ValueError(f"partition_count must be >= 0, got {self.partition_count}")


@dataclass(frozen=True, slots=True)
class UsableBroker:
    """A broker that may receive replicas.

    Brokers in controlled shutdown are not usable and never appear. Fenced brokers do appear:
    they may hold followers (a rack with only fenced brokers still counts for rack spread), but
    must never be a partition's first replica, the one that becomes leader.
    """

    id: int
    rack: str | None
    fenced: bool


class ClusterDescriber(Protocol):
    """The minimum a placer can be given: the brokers it may use."""

    def usable_brokers(self) -> Iterable[UsableBroker]:
        """Every registered broker not in controlled shutdown, fenced ones flagged, any order."""
        ...


class ClusterView(ClusterDescriber, Protocol):
    """What the controller hands every placer: cheap facts from its metadata image.

    The counts cover the latest image including this controller's pending records, so two topics
    created in one request see each other. They do not cover what the current ``place`` call is
    choosing; a placer tracks that itself.
    """

    def replica_count(self, broker_id: int) -> int:
        """Replicas the broker holds across all topics; 0 for a broker the image does not know."""
        ...

    def leader_count(self, broker_id: int) -> int:
        """Partitions whose first (preferred) replica is the broker, across all topics."""
        ...

    def existing_assignment(self) -> Sequence[Sequence[int]]:
        """Replica lists of the topic's current partitions, by partition; empty for a new topic."""
        ...


class ClusterCounts:
    """An optional base for a :class:`ClusterView`: many brokers' counts in one call.

    Placing a small topic asks for every usable broker's counts, and one Python call per broker
    and count was a tenth of the controller's placement cost. The built-in placers check for
    this base (a plain class, so the check is cheap) and fall back to the per-broker methods.
    Each method returns a new list, in the order of ``broker_ids``, equal to what the
    per-broker method gives for each id; the caller may change it.
    """

    __slots__ = ()

    def leader_counts_of(self, broker_ids: Sequence[int]) -> list[int]:
        raise NotImplementedError

    def replica_counts_of(self, broker_ids: Sequence[int]) -> list[int]:
        raise NotImplementedError


@runtime_checkable
class ReplicaPlacer(Protocol):
    """Chooses replicas for new partitions.

    ``place`` returns one replica list per requested partition, in partition order, each of
    ``replication_factor`` distinct usable broker ids with an unfenced broker first. It must be a
    pure function of its arguments and the placer's own state (a seeded random source is state):
    the controller calls it on its event thread, so it must not block or do I/O.

    Two further methods are optional, so they live on their own protocols:
    :class:`ConfigurablePlacer` and :class:`CloseablePlacer`.
    """

    def place(self, spec: PlacementSpec, cluster: ClusterView) -> list[list[int]]: ...


@runtime_checkable
class ConfigurablePlacer(ReplicaPlacer, Protocol):
    """A placer that reads settings; called once by the loader, before the first ``place``."""

    def configure(self, config: Mapping[str, str]) -> None: ...


@runtime_checkable
class CloseablePlacer(ReplicaPlacer, Protocol):
    """A placer holding something to release when the controller stops."""

    def close(self) -> None: ...


def close_placer(placer: ReplicaPlacer) -> None:
    """Release a placer if it has a ``close``; lets the runtime treat every placer alike."""
    if isinstance(placer, CloseablePlacer):
        placer.close()


class PlacementError(KafkaError):
    """No acceptable assignment exists; reported as ``REPLICA_PLACEMENT_FAILED``."""

    default_code = ErrorCode.REPLICA_PLACEMENT_FAILED

    def __init__(self, message: str) -> None:
        super().__init__(self.default_code, message)


class InvalidReplicationFactorError(PlacementError):
    """The replication factor cannot be met at all; reported as ``INVALID_REPLICATION_FACTOR``.

    A subclass of :class:`PlacementError` so that ``except PlacementError`` catches every
    placement failure; the controller still reads :attr:`code` to choose the reported error.
    """

    default_code = ErrorCode.INVALID_REPLICATION_FACTOR


class PlacerLoadError(Exception):
    """``replica.placer.class.name`` does not name a usable placer; the node refuses to start."""


class PlacerConfigError(PlacerLoadError):
    """A placer setting is missing or malformed; the message names the key."""


@dataclass(frozen=True, slots=True)
class StaticClusterView(ClusterCounts):
    """A fixed :class:`ClusterView` for tests, tools and benchmarks.

    The controller implements the protocol over its live image; this one holds plain values.
    """

    brokers: tuple[UsableBroker, ...]
    assignment: tuple[tuple[int, ...], ...] = ()
    replica_counts: Mapping[int, int] = field(default_factory=dict)
    leader_counts: Mapping[int, int] = field(default_factory=dict)

    def usable_brokers(self) -> Iterable[UsableBroker]:
        return self.brokers

    def replica_count(self, broker_id: int) -> int:
        return self.replica_counts.get(broker_id, 0)

    def leader_count(self, broker_id: int) -> int:
        return self.leader_counts.get(broker_id, 0)

    def existing_assignment(self) -> Sequence[Sequence[int]]:
        return self.assignment

    def leader_counts_of(self, broker_ids: Sequence[int]) -> list[int]:
        get = self.leader_counts.get
        return [get(broker_id, 0) for broker_id in broker_ids]

    def replica_counts_of(self, broker_ids: Sequence[int]) -> list[int]:
        get = self.replica_counts.get
        return [get(broker_id, 0) for broker_id in broker_ids]
