"""The cluster's members (Kafka's ClusterImage): each broker's registration and each
controller's (KIP-919) latest registration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from raftmeta.image.errors import ReplayError
from raftmeta.records import (
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ControlledShutdownChange,
    FencingChange,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    UnregisterBrokerRecord,
    Uuid,
)

_FENCING_CHANGES = frozenset(int(change) for change in FencingChange)
_SHUTDOWN_CHANGES = frozenset(int(change) for change in ControlledShutdownChange)


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    broker_id: int
    incarnation_id: Uuid
    broker_epoch: int
    endpoints: tuple[BrokerEndpoint, ...]
    features: tuple[BrokerFeature, ...]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool

    @property
    def is_active(self) -> bool:
        """Whether the broker may lead partitions and be added to an ISR."""
        return not self.fenced and not self.in_controlled_shutdown

    @classmethod
    def from_record(cls, record: RegisterBrokerRecord) -> BrokerRegistration:
        return cls(
            record.broker_id,
            record.incarnation_id,
            record.broker_epoch,
            record.endpoints,
            record.features,
            record.rack,
            bool(record.fenced),
            bool(record.in_controlled_shutdown),
        )

    def to_record(self) -> RegisterBrokerRecord:
        return RegisterBrokerRecord(
            self.broker_id,
            self.incarnation_id,
            self.broker_epoch,
            self.endpoints,
            self.features,
            self.rack,
            self.fenced,
            self.in_controlled_shutdown,
        )


class ClusterImage:
    """The registered brokers and controllers; replay changes them, others only read them."""

    __slots__ = ("_brokers", "_controllers")

    def __init__(self) -> None:
        self._brokers: dict[int, BrokerRegistration] = {}
        self._controllers: dict[int, RegisterControllerRecord] = {}
        """The latest registration (KIP-919) of each controller, by controller id."""

    def copy(self) -> ClusterImage:
        """An independent part in the same state (registrations are frozen, so both share them)."""
        other = ClusterImage()
        other._brokers = dict(self._brokers)
        other._controllers = dict(self._controllers)
        return other

    # --- replay --------------------------------------------------------------------------

    def replay_register_broker(self, record: RegisterBrokerRecord) -> None:
        self._brokers[record.broker_id] = BrokerRegistration.from_record(record)

    def replay_register_controller(self, record: RegisterControllerRecord) -> None:
        self._controllers[record.controller_id] = record

    def _registration_at_epoch(self, broker_id: int, broker_epoch: int) -> BrokerRegistration:
        registration = self._brokers.get(broker_id)
        if registration is None:
            raise ReplayError(f"no registration for broker {broker_id}")
        if registration.broker_epoch != broker_epoch:
            raise ReplayError(
                f"broker {broker_id} is registered at epoch {registration.broker_epoch}, "
                f"not {broker_epoch}"
            )
        return registration

    def replay_unregister_broker(self, record: UnregisterBrokerRecord) -> None:
        self._registration_at_epoch(record.broker_id, record.broker_epoch)
        del self._brokers[record.broker_id]

    def replay_broker_change(self, record: BrokerRegistrationChangeRecord) -> None:
        registration = self._registration_at_epoch(record.broker_id, record.broker_epoch)
        if record.fenced not in _FENCING_CHANGES:
            raise ReplayError(f"fenced value {record.fenced} is not -1, 0 or 1")
        if record.in_controlled_shutdown not in _SHUTDOWN_CHANGES:
            raise ReplayError(
                f"in_controlled_shutdown value {record.in_controlled_shutdown} is not 0 or 1"
            )
        fenced = registration.fenced
        if record.fenced == FencingChange.FENCE:
            fenced = True
        elif record.fenced == FencingChange.UNFENCE:
            fenced = False
        in_controlled_shutdown = (
            registration.in_controlled_shutdown
            or record.in_controlled_shutdown == ControlledShutdownChange.IN_CONTROLLED_SHUTDOWN
        )
        self._brokers[record.broker_id] = BrokerRegistration(
            registration.broker_id,
            registration.incarnation_id,
            registration.broker_epoch,
            registration.endpoints,
            registration.features,
            registration.rack,
            fenced,
            in_controlled_shutdown,
        )

    # --- reading -------------------------------------------------------------------------

    @property
    def brokers(self) -> Mapping[int, BrokerRegistration]:
        return MappingProxyType(self._brokers)

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        return self._brokers.get(broker_id)

    @property
    def controllers(self) -> Mapping[int, RegisterControllerRecord]:
        """Each registered controller's latest registration, by controller id."""
        return MappingProxyType(self._controllers)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClusterImage):
            return NotImplemented
        return self._brokers == other._brokers and self._controllers == other._controllers

    __hash__ = None  # type: ignore[assignment]
