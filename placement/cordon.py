"""KIP-660 scenario: keep new partitions off brokers that are being decommissioned.

Before a broker is removed, its partitions are reassigned away; if CreateTopics keeps placing new
replicas on it meanwhile, the drain never finishes (Strimzi's scale-down issue, and the reason for
Kafka's cordoning in KIP-1066). A cordoned broker keeps what it has and gets nothing new.

This placer wraps another one and hides the cordoned brokers from it, so cordoning composes with
any placement policy.

Configuration:

``replica.placer.cordoned.brokers``
    Comma-separated broker ids that receive no new replicas. Ids that are not registered are
    ignored, so a list can be written before the broker is gone or after.
``replica.placer.cordon.delegate.class.name``
    The placer that chooses among the other brokers; default
    ``placement.striped.StripedReplicaPlacer``. It is configured with the same settings.

``configure`` may be called again with a new list; the runtime does so when the setting changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from placement import _config
from placement.api import (
    ClusterView,
    ConfigurablePlacer,
    PlacementError,
    PlacementSpec,
    ReplicaPlacer,
    UsableBroker,
    close_placer,
)
from placement.checks import check_replication_factor, distinct_brokers
from placement.striped import StripedReplicaPlacer

CORDONED_BROKERS_KEY = "replica.placer.cordoned.brokers"
DELEGATE_CLASS_KEY = "replica.placer.cordon.delegate.class.name"


class _UncordonedView:
    """The cluster as the delegate should see it: the same, minus the cordoned brokers."""

    __slots__ = ("_brokers", "_cluster")

    def __init__(self, cluster: ClusterView, brokers: Sequence[UsableBroker]) -> None:
        self._cluster = cluster
        self._brokers = brokers

    def usable_brokers(self) -> Iterable[UsableBroker]:
        return self._brokers

    def replica_count(self, broker_id: int) -> int:
        return self._cluster.replica_count(broker_id)

    def leader_count(self, broker_id: int) -> int:
        return self._cluster.leader_count(broker_id)

    def existing_assignment(self) -> Sequence[Sequence[int]]:
        return self._cluster.existing_assignment()


class CordonedBrokerPlacer:
    """Places with a delegate among the brokers that are not cordoned.

    Kafka's replication-factor errors are checked against the whole cluster first, so a request
    that could never succeed reads as it would in Kafka; a request that fails only because of the
    cordon is a ``REPLICA_PLACEMENT_FAILED`` that lists the cordoned brokers.
    """

    def __init__(self, delegate: ReplicaPlacer | None = None, cordoned: Iterable[int] = ()) -> None:
        self._delegate: ReplicaPlacer = delegate if delegate is not None else StripedReplicaPlacer()
        self._cordoned = frozenset(cordoned)

    @property
    def cordoned(self) -> frozenset[int]:
        return self._cordoned

    def configure(self, config: Mapping[str, str]) -> None:
        delegate_path = config.get(DELEGATE_CLASS_KEY, "").strip()
        # The delegate does not see its own class key: a cordon placer named as its own delegate
        # would otherwise load itself forever.
        delegate_config = {key: value for key, value in config.items() if key != DELEGATE_CLASS_KEY}
        if delegate_path:
            from placement.loader import load_placer

            replacement = load_placer(delegate_path, delegate_config, key=DELEGATE_CLASS_KEY)
            close_placer(self._delegate)
            self._delegate = replacement
        elif isinstance(self._delegate, ConfigurablePlacer):
            self._delegate.configure(delegate_config)
        self._cordoned = frozenset(_config.int_list(config, CORDONED_BROKERS_KEY))

    def close(self) -> None:
        close_placer(self._delegate)

    def place(self, spec: PlacementSpec, cluster: ClusterView) -> list[list[int]]:
        brokers = distinct_brokers(cluster.usable_brokers())
        check_replication_factor(spec.replication_factor, brokers)
        open_brokers = [broker for broker in brokers if broker.id not in self._cordoned]
        cordoned = ", ".join(str(broker.id) for broker in brokers if broker.id in self._cordoned)
        if spec.replication_factor > len(open_brokers):
            raise PlacementError(
                f"The target replication factor of {spec.replication_factor} cannot be reached "
                f"because only {len(open_brokers)} broker(s) are registered and not cordoned "
                f"(cordoned: {cordoned})."
            )
        if all(broker.fenced for broker in open_brokers):
            raise PlacementError(
                f"All brokers that are not cordoned are currently fenced (cordoned: {cordoned})."
            )
        assignment = self._delegate.place(spec, _UncordonedView(cluster, open_brokers))
        for offset, replicas in enumerate(assignment):
            misplaced = [broker_id for broker_id in replicas if broker_id in self._cordoned]
            if misplaced:
                raise PlacementError(
                    f"The delegate placer put partition {spec.start_partition + offset} on "
                    f"cordoned broker(s) {misplaced}."
                )
        return assignment
