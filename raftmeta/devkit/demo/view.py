"""What the demo asks the cluster, through the AdminClient: brokers, partitions, new topics.

The steps wait on conditions over these answers (every broker unfenced, every partition led by
its preferred replica, ...), so this module turns the AdminClient's futures into plain values
and its errors into ``StepFailed``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from raftmeta.devkit.demo.errors import StepFailed, require_module

if TYPE_CHECKING:
    from raftmeta.admin import AdminClient

REQUEST_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class BrokerState:
    broker_id: int
    rack: str | None
    fenced: bool
    leader_count: int


@dataclass(frozen=True, slots=True)
class PartitionState:
    topic: str
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]

    @property
    def preferred(self) -> int:
        return self.replicas[0] if self.replicas else -1


@dataclass(frozen=True, slots=True)
class Partitions:
    """Every partition of the cluster, as of one committed metadata offset."""

    metadata_offset: int
    partitions: tuple[PartitionState, ...]

    def led_by(self, broker_id: int) -> list[PartitionState]:
        return [p for p in self.partitions if p.leader == broker_id]

    def hosted_by(self, broker_id: int) -> list[PartitionState]:
        return [p for p in self.partitions if broker_id in p.replicas]

    def not_preferred(self) -> list[PartitionState]:
        return [p for p in self.partitions if p.leader != p.preferred]

    def under_replicated(self) -> list[PartitionState]:
        return [p for p in self.partitions if set(p.isr) != set(p.replicas)]


class ClusterView:
    """The AdminClient as the demo uses it; built once the quorum is up."""

    def __init__(self, bootstrap_servers: str, client: Mapping[str, str] | None = None) -> None:
        """``client``: more AdminClient settings, e.g. ``security.protocol=SSL`` and the
        ``ssl.*`` keys of a TLS cluster."""
        require_module("the AdminClient", "raftmeta.admin")
        from raftmeta.admin import AdminClient

        config: dict[str, object] = {**(client or {}), "bootstrap.servers": bootstrap_servers}
        self._admin: AdminClient = AdminClient(config)

    def close(self) -> None:
        self._admin.close()

    def brokers(self) -> dict[int, BrokerState]:
        described = _result(self._admin.describe_cluster(), "describe the cluster")
        return {
            b.id: BrokerState(b.id, b.rack, b.fenced, b.leader_count) for b in described.brokers
        }

    def partitions(self, topics: Sequence[str]) -> Partitions:
        """The partitions of ``topics`` and the metadata offset they were read at."""
        futures = self._admin.describe_topics(list(topics))
        states: list[PartitionState] = []
        for name in topics:
            topic = _result(futures[name], f"describe topic {name}")
            for p in topic.partitions:
                states.append(PartitionState(name, p.id, p.leader, tuple(p.replicas), tuple(p.isr)))
        offset = _result(self._admin.describe_cluster(), "describe the cluster").metadata_offset
        return Partitions(offset, tuple(states))

    def create_topics(self, names: Iterable[str], partitions: int, replication: int) -> None:
        from raftmeta.admin import NewTopic

        new = [
            NewTopic(name, num_partitions=partitions, replication_factor=replication)
            for name in names
        ]
        for name, future in self._admin.create_topics(new).items():
            _result(future, f"create topic {name}")


def _result(future: Any, what: str) -> Any:
    """A future's value; its Kafka error (or a timeout) as ``StepFailed``."""
    from concurrent.futures import TimeoutError as FutureTimeout

    try:
        return future.result(timeout=REQUEST_TIMEOUT_S)
    except FutureTimeout:
        raise StepFailed(f"could not {what}: no answer in {REQUEST_TIMEOUT_S:g} s") from None
    except Exception as error:  # the AdminClient's KafkaException, or a transport error
        raise StepFailed(f"could not {what}: {error}") from None
