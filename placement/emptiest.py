"""KIP-660 scenario: send new partitions to the emptiest brokers, such as brokers just added.

Kafka places every topic as if the cluster were empty, so a broker added to grow capacity gets
only its even share of new topics and stays nearly idle until someone runs a reassignment. This
placer water-fills instead: every replica goes where the cluster holds the fewest, counting the
whole cluster plus what the current call has already placed, and every leader where there are the
fewest leaders. Rack spread, fenced-last and never-a-fenced-leader hold as in the default.

The trade-off is deliberate and worth knowing: a large topic created right after a broker joins
puts one replica of nearly every partition, and most leaders, on that broker until it has caught
up. The rack spread rule still bounds it to one replica per partition.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from placement import _config
from placement._balance import TopicCounts, cluster_counts, place_balanced
from placement._layout import LayoutCache
from placement.api import ClusterView, PlacementSpec
from placement.striped import SEED_KEY


class EmptiestBrokerPlacer:
    """Prefers brokers with the fewest replicas and leaders across the cluster.

    Reads ``usable_brokers()``, ``replica_count()`` and ``leader_count()``; ignores the topic's
    existing assignment, because the cluster-wide counts already include it.
    """

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng if rng is not None else random.Random()
        self._layouts = LayoutCache()

    def configure(self, config: Mapping[str, str]) -> None:
        seed = _config.optional_int(config, SEED_KEY)
        if seed is not None:
            self._rng.seed(seed)

    def place(self, spec: PlacementSpec, cluster: ClusterView) -> list[list[int]]:
        layout = self._layouts.layout(cluster.usable_brokers())
        layout.check_replication_factor(spec.replication_factor)
        leaders, replicas = cluster_counts(cluster, layout.ids)
        zeros = [0] * len(layout.ids)
        counts = TopicCounts(leaders, replicas, zeros, list(zeros))
        return place_balanced(layout, spec, self._rng, counts)
