"""What a placement call knows before it counts anything: the usable brokers, laid out by rack.

The broker set changes only when a broker registers, unregisters, fences, unfences or shuts
down, which is rare next to CreateTopics; yet sorting the brokers, grouping them by rack and
ordering the racks used to be a fifth of the controller's time per small topic. A placer keeps
the last :class:`BrokerLayout` in a :class:`LayoutCache` and builds a new one only when the
brokers it is handed differ, compared exactly, so a cached layout never changes a placement.
"""

from __future__ import annotations

from collections.abc import Iterable

from placement.api import UsableBroker
from placement.checks import check_replication_factor_of, distinct_brokers


def rack_order_key(rack: str | None) -> tuple[bool, str]:
    """Brokers without a rack form one rack of their own, which sorts first, as in Kafka."""
    return (rack is not None, rack or "")


class BrokerLayout:
    """The usable brokers sorted by id, by index: racks, fencing, and each rack's members.

    Read-only once built: every placement call that shares it keeps its counts elsewhere (a
    stripe without budgets reads ``rack_sizes`` and ``unfenced_per_rack`` without copying).
    """

    __slots__ = (
        "all_unfenced",
        "brokers",
        "every_rack_unfenced",
        "fenced",
        "ids",
        "members",
        "other_racks",
        "rack_of",
        "rack_sizes",
        "rack_weight",
        "unfenced",
        "unfenced_count",
        "unfenced_per_rack",
    )

    def __init__(self, brokers: Iterable[UsableBroker]) -> None:
        """Raises PlacementError for a broker listed twice (see :func:`distinct_brokers`)."""
        self.brokers: tuple[UsableBroker, ...] = tuple(distinct_brokers(brokers))
        self.ids = [broker.id for broker in self.brokers]
        self.fenced = [broker.fenced for broker in self.brokers]
        self.unfenced = [index for index, fenced in enumerate(self.fenced) if not fenced]
        """Indexes of the brokers that may lead, in id order."""
        self.unfenced_count = len(self.unfenced)
        rack_names = sorted({broker.rack for broker in self.brokers}, key=rack_order_key)
        rack_index = {name: index for index, name in enumerate(rack_names)}
        self.rack_of = [rack_index[broker.rack] for broker in self.brokers]
        self.members: list[list[int]] = [[] for _ in rack_names]
        self.unfenced_per_rack = [0] * len(rack_names)
        for index, rack in enumerate(self.rack_of):
            self.members[rack].append(index)
            if not self.fenced[index]:
                self.unfenced_per_rack[rack] += 1
        self.rack_sizes = [len(rack) for rack in self.members]
        self.all_unfenced = self.unfenced_count == len(self.ids)
        self.every_rack_unfenced = all(self.unfenced_per_rack)
        """Every rack can offer an unfenced broker: with no budgets, rack spread alone orders a
        partition's first lap of racks."""
        self.other_racks = [
            [other for other in range(len(rack_names)) if other != rack]
            for rack in range(len(rack_names))
        ]
        """For each rack, every other rack, in index order."""
        # Racks are compared per unfenced broker: fenced brokers take replicas only as a last
        # resort, so counting them would send a rack's share to its few live brokers.
        self.rack_weight = [float(max(count, 1)) for count in self.unfenced_per_rack]

    def check_replication_factor(self, replication_factor: int) -> None:
        """:func:`placement.checks.check_replication_factor` without a pass over the brokers."""
        check_replication_factor_of(replication_factor, len(self.ids), self.unfenced_count > 0)


class LayoutCache:
    """The layout of the last broker set a placer was handed, rebuilt when the set differs.

    The key is the broker collection itself: the same object (the controller's view hands out
    one tuple while the brokers are unchanged) is a hit at once; anything else is compared by
    value, which is exact because :class:`UsableBroker` is a frozen value.
    """

    __slots__ = ("_entry",)

    def __init__(self) -> None:
        # One tuple, replaced whole, so a reader never pairs one set's key with another's layout.
        self._entry: tuple[tuple[UsableBroker, ...], BrokerLayout] | None = None

    def layout(self, brokers: Iterable[UsableBroker]) -> BrokerLayout:
        entry = self._entry
        if entry is not None and brokers is entry[0]:
            return entry[1]
        key = brokers if isinstance(brokers, tuple) else tuple(brokers)
        if entry is not None and key == entry[0]:
            # Equal by value: keep the layout, and remember this object for the next identity hit.
            self._entry = (key, entry[1])
            return entry[1]
        layout = BrokerLayout(key)
        self._entry = (key, layout)
        return layout
