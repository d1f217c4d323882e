"""Objects for the loader tests to name in ``replica.placer.class.name``."""

from __future__ import annotations

from collections.abc import Mapping

from placement import ClusterDescriber, PlacementSpec, PlacerConfigError


class FirstBrokersPlacer:
    """A complete third-party placer: configurable and closeable."""

    def __init__(self) -> None:
        self.config: dict[str, str] = {}
        self.closed = False

    def configure(self, config: Mapping[str, str]) -> None:
        self.config = dict(config)

    def close(self) -> None:
        self.closed = True

    def place(self, spec: PlacementSpec, cluster: ClusterDescriber) -> list[list[int]]:
        ids = sorted(broker.id for broker in cluster.usable_brokers())
        return [ids[: spec.replication_factor] for _ in range(spec.partition_count)]


class MinimalPlacer:
    """Only ``place``: neither configure nor close."""

    def place(self, spec: PlacementSpec, cluster: ClusterDescriber) -> list[list[int]]:
        return []


class Outer:
    class NestedPlacer(MinimalPlacer):
        pass


class NotAPlacer:
    def put(self) -> None:
        pass


class NeedsArguments(MinimalPlacer):
    def __init__(self, size: int) -> None:
        self.size = size


class WrongArity:
    def place(self, spec: PlacementSpec) -> list[list[int]]:
        return []


class BadConfig(MinimalPlacer):
    def configure(self, config: Mapping[str, str]) -> None:
        raise PlacerConfigError("replica.placer.sample.size='big' is not an integer")


class BrokenConfigure(MinimalPlacer):
    def configure(self, config: Mapping[str, str]) -> None:
        raise KeyError("replica.placer.sample.size")


def factory_function() -> MinimalPlacer:
    return MinimalPlacer()


instance = MinimalPlacer()
