"""Brokers, their sessions and fencing, and controller registrations: Kafka's
``ClusterControlManager``.

BrokerRegistration, BrokerHeartbeat (the lifecycle state machine of
:mod:`raftmeta.controller.brokers`), UnregisterBroker, fencing a broker whose session expired,
and ControllerRegistration (:mod:`raftmeta.controller.registration`). The manager holds the
one piece of state of its own the controller keeps outside the image: the brokers' sessions
(last contact, reported offset, where a controlled shutdown began), soft state rebuilt from
the image each time its controller becomes active.

Pure policy and records like every manager: each method reads the image it is handed and
returns a :class:`ControllerResult`; the time comes in as ``now_ms`` and the offset the first
record will take as ``next_offset`` (a broker's epoch is the offset of its registration).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Set

from elections import elections_for_unclean_shutdown, online_elections_for_broker_removal
from raftmeta.common.brokers import (
    BrokerHeartbeatReply,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
)
from raftmeta.controller import brokers as lifecycle
from raftmeta.controller.brokers import BrokerSession, BrokerState
from raftmeta.controller.features import check_broker_features
from raftmeta.controller.registration import ControllerRegistrationRequest, registration_records
from raftmeta.controller.result import ControllerResult
from raftmeta.controller.settings import ControllerSettings
from raftmeta.controller.slices import MAX_ELECTIONS_PER_SLICE
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import Record, RegisterBrokerRecord, UnregisterBrokerRecord

log = logging.getLogger(__name__)


def check_broker_epoch(image: MetadataImage, broker_id: int, broker_epoch: int) -> None:
    """STALE_BROKER_EPOCH unless ``broker_id`` is registered in ``image`` at ``broker_epoch``:
    a request from an older incarnation of a broker must change nothing."""
    registration = image.broker(broker_id)
    if registration is None:
        raise KafkaError(ErrorCode.STALE_BROKER_EPOCH, f"Broker {broker_id} is not registered.")
    if registration.broker_epoch != broker_epoch:
        raise KafkaError(
            ErrorCode.STALE_BROKER_EPOCH,
            f"Expected broker epoch {registration.broker_epoch}, but got broker epoch "
            f"{broker_epoch}.",
        )


class ClusterControlManager:
    """Broker and controller membership of the active controller, with broker sessions."""

    def __init__(
        self, settings: ControllerSettings, voter_ids: Callable[[], Set[int]] | None = None
    ) -> None:
        """``voter_ids`` names the quorum's voters as the Raft log has them now; a dynamic
        quorum (KIP-853) has no ``controller.quorum.voters`` to read them from, and its
        voters change while the controller runs."""
        self.settings = settings
        self._live_voter_ids = voter_ids
        self.sessions: dict[int, BrokerSession] = {}
        """Per registered broker, what this controller saw of it since it became active."""
        self.shutdowns_moving: set[int] = set()
        """Brokers in controlled shutdown whose leaderships and ISR places are still being
        moved, slice by slice (:meth:`controlled_shutdown_slice`)."""

    @property
    def voter_ids(self) -> Set[int]:
        """The voters a registration is checked against: the live set when known, else the
        configured static one."""
        if self._live_voter_ids is not None:
            return self._live_voter_ids()
        return self.settings.voter_ids

    @property
    def _unclean_default(self) -> bool:
        return self.settings.unclean_leader_election_enable

    # --- sessions ---------------------------------------------------------------------

    def reset_sessions(self, image: MetadataImage, now_ms: int) -> None:
        """Heartbeat state is soft: on becoming active every registered broker gets a fresh
        session. A broker already in controlled shutdown waits until the others report the
        image's offset, since where its shutdown began was not kept."""
        self.sessions = {}
        self.shutdowns_moving = set()
        for broker_id, registration in image.brokers.items():
            session = self.sessions[broker_id] = BrokerSession(now_ms)
            if registration.in_controlled_shutdown:
                session.controlled_shutdown_offset = image.offset
                # The previous controller may have stopped between two slices of its moves.
                self.shutdowns_moving.add(broker_id)

    def clear_sessions(self) -> None:
        """Leadership is gone: the next active controller keeps sessions of its own."""
        self.sessions.clear()
        self.shutdowns_moving.clear()

    def touch_session(
        self, image: MetadataImage, broker_id: int, broker_epoch: int, now_ms: int
    ) -> None:
        """A heartbeat that waited out its deadline in the queue still counts as contact, so a
        backed-up queue does not get live brokers fenced."""
        registration = image.broker(broker_id)
        session = self.sessions.get(broker_id)
        if registration is not None and registration.broker_epoch == broker_epoch and session:
            log.warning("controller event queue overloaded: heartbeat of broker %d", broker_id)
            session.last_contact_ms = now_ms

    # --- brokers ----------------------------------------------------------------------

    def register_broker(
        self,
        image: MetadataImage,
        request: BrokerRegistrationRequest,
        *,
        now_ms: int,
        next_offset: int,
    ) -> ControllerResult[int]:
        """BrokerRegistration; the response is the broker epoch, the offset its
        registration record takes."""
        settings = self.settings
        if request.cluster_id != settings.cluster_id:
            raise KafkaError(
                ErrorCode.INCONSISTENT_CLUSTER_ID,
                f"Expected cluster ID {settings.cluster_id}, but got cluster ID "
                f"{request.cluster_id}.",
            )
        lifecycle.check_registration(request, self.voter_ids)
        check_broker_features(image, request.broker_id, request.features)
        broker_id = request.broker_id
        existing = image.broker(broker_id)
        session = self.sessions.get(broker_id)
        if existing is not None and existing.incarnation_id == request.incarnation_id:
            # The same process registering again: amend, keeping epoch and fencing state.
            amended = RegisterBrokerRecord(
                broker_id,
                request.incarnation_id,
                existing.broker_epoch,
                request.endpoints,
                request.features,
                request.rack,
                existing.fenced,
                existing.in_controlled_shutdown,
            )
            if session is None:
                self.sessions[broker_id] = BrokerSession(now_ms)
            else:
                session.last_contact_ms = now_ms
            return ControllerResult((amended,), existing.broker_epoch)
        records: list[Record] = []
        if existing is not None:
            timeout = settings.broker_session_timeout_ms
            # A fenced broker holds no live session (it shut down, or its session expired),
            # so its successor need not wait out a session timeout, as in Kafka.
            live = session is not None and session.last_contact_ms + timeout >= now_ms
            if live and not existing.fenced:
                raise KafkaError(
                    ErrorCode.DUPLICATE_BROKER_REGISTRATION,
                    f"Another broker is registered with broker id {broker_id}.",
                )
            clean = request.previous_broker_epoch == existing.broker_epoch
            unclean_stop = (
                ()
                if clean
                else elections_for_unclean_shutdown(
                    image,
                    broker_id,
                    unclean_default=self._unclean_default,
                    min_isr_default=settings.min_insync_replicas,
                )
            )
            if unclean_stop:
                # KIP-966: no proof of a clean stop, so its log may have lost a tail; it
                # leaves every ISR and ELR before the new incarnation is written.
                records.extend(unclean_stop)
            elif not existing.fenced:
                # The old incarnation is gone: take it out of ISRs before replacing it.
                records.extend(
                    online_elections_for_broker_removal(
                        image,
                        broker_id,
                        unclean_default=self._unclean_default,
                        min_isr_default=settings.min_insync_replicas,
                    )
                )
        broker_epoch = next_offset + len(records)
        records.append(
            RegisterBrokerRecord(
                broker_id,
                request.incarnation_id,
                broker_epoch,
                request.endpoints,
                request.features,
                request.rack,
                fenced=True,
            )
        )
        self.sessions[broker_id] = BrokerSession(now_ms)
        # Not a user operation: one record per partition the old incarnation was in, however
        # many (capping it would keep a broker in many partitions from ever registering).
        return ControllerResult(tuple(records), broker_epoch, atomic=False)

    def heartbeat(
        self,
        image: MetadataImage,
        request: BrokerHeartbeatRequest,
        *,
        now_ms: int,
        next_offset: int,
    ) -> ControllerResult[BrokerHeartbeatReply]:
        """BrokerHeartbeat: records the contact and moves the broker through its lifecycle."""
        broker_id = request.broker_id
        check_broker_epoch(image, broker_id, request.broker_epoch)
        registration = image.broker(broker_id)
        assert registration is not None
        session = self.sessions.get(broker_id)
        if session is None:
            session = self.sessions[broker_id] = BrokerSession(now_ms)
        session.last_contact_ms = now_ms
        session.metadata_offset = request.current_metadata_offset
        current = lifecycle.current_state(image, broker_id)
        target = lifecycle.next_state(
            image,
            broker_id,
            session,
            want_fence=request.want_fence,
            want_shut_down=request.want_shut_down,
            sessions=self.sessions,
        )
        unclean = self._unclean_default
        min_isr = self.settings.min_insync_replicas
        records: list[Record] = []
        if target is not current:
            if target is BrokerState.UNFENCED:
                records = lifecycle.unfence_records(
                    image, broker_id, unclean_default=unclean, min_isr_default=min_isr
                )
                session.unfenced_at_ms = now_ms
            elif target is BrokerState.CONTROLLED_SHUTDOWN:
                records = lifecycle.controlled_shutdown_records(
                    image,
                    broker_id,
                    unclean_default=unclean,
                    min_isr_default=min_isr,
                    max_elections=MAX_ELECTIONS_PER_SLICE,
                )
                # The shutdown counts from the offset of its last record (so far).
                session.controlled_shutdown_offset = next_offset + len(records) - 1
                if len(records) > MAX_ELECTIONS_PER_SLICE:
                    self.shutdowns_moving.add(broker_id)
            elif current is not BrokerState.FENCED:
                records = lifecycle.fence_records(
                    image, broker_id, unclean_default=unclean, min_isr_default=min_isr
                )
        reply = BrokerHeartbeatReply(
            is_caught_up=request.current_metadata_offset >= registration.broker_epoch,
            is_fenced=target in (BrokerState.FENCED, BrokerState.SHUTDOWN_NOW),
            should_shut_down=target is BrokerState.SHUTDOWN_NOW,
        )
        # Fencing, unfencing and a controlled shutdown write one record per partition the
        # broker touches: the controller's own work, which the cap on what one user operation
        # may write must not block (a broker leading more partitions than that would stay
        # fenced, or never be fenced, for good).
        return ControllerResult(tuple(records), reply, atomic=False)

    def unregister_broker(self, image: MetadataImage, broker_id: int) -> ControllerResult[None]:
        """UnregisterBroker: out of every ISR, leaderships moved, then the unregistration."""
        registration = image.broker(broker_id)
        if registration is None:
            raise KafkaError(
                ErrorCode.BROKER_ID_NOT_REGISTERED,
                f"Broker ID {broker_id} is not currently registered",
            )
        elections = online_elections_for_broker_removal(
            image,
            broker_id,
            unclean_default=self._unclean_default,
            min_isr_default=self.settings.min_insync_replicas,
        )
        self.sessions.pop(broker_id, None)
        return ControllerResult(
            (*elections, UnregisterBrokerRecord(broker_id, registration.broker_epoch)),
            None,
            atomic=False,
        )

    def fence_one_stale_broker(self, image: MetadataImage, now_ms: int) -> ControllerResult[bool]:
        """One slice of the fencing of the unfenced broker whose last contact is oldest, if
        its session expired; True if it wrote one.

        One broker at a time, as in Kafka, and one slice of it per event (see
        :mod:`raftmeta.controller.slices`): the caller runs the check again at once until it
        writes nothing, and whatever was queued meanwhile runs between two slices. The broker
        stays the oldest until its last slice fences it, so its slices follow one another.
        """
        timeout = self.settings.broker_session_timeout_ms
        stale: tuple[int, int] | None = None
        for broker_id, session in self.sessions.items():
            registration = image.broker(broker_id)
            if registration is None or registration.fenced:
                continue
            if session.last_contact_ms + timeout < now_ms:
                candidate = (session.last_contact_ms, broker_id)
                if stale is None or candidate < stale:
                    stale = candidate
        if stale is None:
            return ControllerResult((), False, atomic=False)
        broker_id = stale[1]
        records = lifecycle.fence_records(
            image,
            broker_id,
            unclean_default=self._unclean_default,
            max_elections=MAX_ELECTIONS_PER_SLICE,
        )
        if len(records) <= MAX_ELECTIONS_PER_SLICE:  # the last slice: it holds the fencing
            log.info("fencing broker %d: no heartbeat for %d ms", broker_id, now_ms - stale[0])
        return ControllerResult(tuple(records), True, atomic=False)

    def controlled_shutdown_slice(
        self, image: MetadataImage, *, next_offset: int
    ) -> ControllerResult[bool]:
        """The next slice of moves of a broker in controlled shutdown, if one is left; True
        if there may be more (the caller asks again at once until False)."""
        while self.shutdowns_moving:
            broker_id = min(self.shutdowns_moving)
            registration = image.broker(broker_id)
            if registration is None or not registration.in_controlled_shutdown:
                self.shutdowns_moving.discard(broker_id)  # fenced or gone meanwhile
                continue
            records = lifecycle.controlled_shutdown_slice(
                image,
                broker_id,
                unclean_default=self._unclean_default,
                min_isr_default=self.settings.min_insync_replicas,
                max_elections=MAX_ELECTIONS_PER_SLICE,
            )
            if len(records) < MAX_ELECTIONS_PER_SLICE:
                self.shutdowns_moving.discard(broker_id)
            session = self.sessions.get(broker_id)
            if records and session is not None:
                session.controlled_shutdown_offset = next_offset + len(records) - 1
            return ControllerResult(tuple(records), True, atomic=False)
        return ControllerResult((), False, atomic=False)

    # --- controllers ------------------------------------------------------------------

    def register_controller(
        self, image: MetadataImage, request: ControllerRegistrationRequest
    ) -> ControllerResult[None]:
        """ControllerRegistration (KIP-919): nothing written if ``image`` already holds it."""
        return ControllerResult(
            registration_records(
                request,
                cluster_id=self.settings.cluster_id,
                voter_ids=self.voter_ids,
                image=image,
            ),
            None,
        )
