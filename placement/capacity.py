"""KIP-660 scenario: keep new replicas off brokers that are at or near their capacity.

Capacity is counted in replicas, the one load figure the controller has for free; operators size
it from disk and partition-count limits. A broker stops receiving new replicas at its capacity
less a headroom, so a broker that is nearly full keeps room for reassignments and growth of the
partitions it already has. Replicas placed earlier in the same call count, so one large
CreateTopics cannot overfill a broker that was below the line when the call began.

Configuration:

``replica.placer.capacity.max.replicas``
    Capacity of every broker without its own setting. Unset: such brokers are unlimited.
``replica.placer.capacity.broker.<id>.max.replicas``
    Capacity of broker ``<id>``, for clusters of mixed hardware.
``replica.placer.capacity.headroom.percent``
    0-99, default 10: new replicas stop at ``floor(capacity * (100 - headroom) / 100)``.

At least one capacity must be set, so that a misspelt key is reported rather than ignored.
Among brokers with room, placement is the default's (rack spread, per-broker leader balance,
continuation of the topic's layout).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from placement import _config
from placement._balance import NoCandidateError, TopicCounts, budget, place_balanced
from placement._layout import LayoutCache
from placement.api import ClusterView, PlacementError, PlacementSpec, PlacerConfigError
from placement.striped import SEED_KEY

MAX_REPLICAS_KEY = "replica.placer.capacity.max.replicas"
BROKER_MAX_REPLICAS_KEY = "replica.placer.capacity.broker.{broker_id}.max.replicas"
HEADROOM_PERCENT_KEY = "replica.placer.capacity.headroom.percent"
DEFAULT_HEADROOM_PERCENT = 10

_BROKER_PREFIX = "replica.placer.capacity.broker."
_BROKER_SUFFIX = ".max.replicas"


class CapacityAwarePlacer:
    """The default placement, restricted to brokers below their replica capacity less headroom.

    Reads ``usable_brokers()``, ``replica_count()`` and ``existing_assignment()``.
    """

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng if rng is not None else random.Random()
        self._default_capacity: int | None = None
        self._capacities: dict[int, int] = {}
        self._headroom_percent = DEFAULT_HEADROOM_PERCENT
        self._layouts = LayoutCache()

    def configure(self, config: Mapping[str, str]) -> None:
        seed = _config.optional_int(config, SEED_KEY)
        if seed is not None:
            self._rng.seed(seed)
        self._default_capacity = _config.optional_int(config, MAX_REPLICAS_KEY, minimum=1)
        self._capacities = {}
        for key in config:
            if key.startswith(_BROKER_PREFIX) and key.endswith(_BROKER_SUFFIX):
                broker_part = key[len(_BROKER_PREFIX) : -len(_BROKER_SUFFIX)]
                try:
                    broker_id = int(broker_part)
                except ValueError:
                    raise PlacerConfigError(f"{key}: {broker_part!r} is not a broker id") from None
                capacity = _config.optional_int(config, key, minimum=1)
                if capacity is not None:
                    self._capacities[broker_id] = capacity
        if self._default_capacity is None and not self._capacities:
            raise PlacerConfigError(
                f"{MAX_REPLICAS_KEY} or {BROKER_MAX_REPLICAS_KEY} must be set for "
                "CapacityAwarePlacer"
            )
        headroom = _config.optional_int(config, HEADROOM_PERCENT_KEY, minimum=0)
        if headroom is not None and headroom > 99:
            raise PlacerConfigError(f"{HEADROOM_PERCENT_KEY}={headroom} must be at most 99")
        self._headroom_percent = DEFAULT_HEADROOM_PERCENT if headroom is None else headroom

    def set_capacity(
        self,
        default: int | None,
        per_broker: Mapping[int, int] | None = None,
        headroom_percent: int = DEFAULT_HEADROOM_PERCENT,
    ) -> None:
        """Configure from code (embedded use and tests) with the meaning of the keys above."""
        if not 0 <= headroom_percent <= 99:
            raise ValueError(f"headroom_percent must be 0-99, got {headroom_percent}")
        self._default_capacity = default
        self._capacities = dict(per_broker or {})
        self._headroom_percent = headroom_percent

    def limit(self, broker_id: int) -> int | None:
        """Replicas at which the broker stops receiving new ones; None for unlimited."""
        capacity = self._capacities.get(broker_id, self._default_capacity)
        if capacity is None:
            return None
        return capacity * (100 - self._headroom_percent) // 100

    def place(self, spec: PlacementSpec, cluster: ClusterView) -> list[list[int]]:
        layout = self._layouts.layout(cluster.usable_brokers())
        layout.check_replication_factor(spec.replication_factor)
        room: dict[int, int] = {}
        for broker_id in layout.ids:
            limit = self.limit(broker_id)
            room[broker_id] = (
                spec.partition_count * spec.replication_factor
                if limit is None
                else limit - cluster.replica_count(broker_id)
            )
        counts = TopicCounts.of_topic(layout, cluster.existing_assignment(), cluster)
        try:
            return place_balanced(layout, spec, self._rng, counts, budget(layout, room))
        except NoCandidateError as failure:
            line = f"{100 - self._headroom_percent}% of their replica capacity"
            if failure.leader:
                raise PlacementError(
                    f"Cannot place partition {failure.partition}: no unfenced broker is "
                    f"below {line}."
                ) from None
            raise PlacementError(
                f"Cannot place partition {failure.partition} with {failure.needed} replicas: "
                f"only {failure.found} broker(s) are below {line}."
            ) from None
