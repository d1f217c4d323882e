"""Who leads a partition next: the leader-choice rules every election path shares.

These are the rules of Kafka's ``PartitionChangeBuilder`` as far as elections go, restated:

A replica is a *valid* new leader when it is in the target ISR and its broker is *acceptable*
(registered, not fenced, not in controlled shutdown; the caller's ``is_acceptable`` decides).
The target ISR is the current ISR unless the caller says otherwise, as the fencing and shutdown
paths do when they take a broker out.

An election is attempted only when the current leader is not in the target ISR (a leaderless
partition included, since -1 is never a member), or, for PREFERRED, when the leader is not the
first replica. Otherwise the leader stays, even one whose broker has just become unacceptable:
the controller takes such a broker out of every ISR in the same step, so that case never lasts.

PREFERRED picks, in order: the first replica if valid; else the current leader if still valid
(no change); else the first valid replica after the first, which is a clean election to a
non-preferred leader; else no leader.

ONLINE and UNCLEAN pick: the current leader if still valid (no change); else the first valid
replica in replica order. UNCLEAN then goes further: the first replica in replica order whose
broker is acceptable, in the ISR or not. That pick is *unclean*: it may lose committed data, so
the ISR becomes the new leader alone and the leader recovery state becomes RECOVERING (unless it
already is), until the new leader reports its log recovered. Otherwise there is no leader.

The change only names a leader when the pick differs from the current leader, because naming
one is what bumps the leader epoch on replay (clients fence on it). The ISR is written when it
differs from the current one; an ISR shrink alone leaves the leader epoch alone, as in Kafka
from metadata.version 3.6 on. The recovery state is written only when it changes.

With eligible leader replicas (KIP-966) off (``elr=None``), there is no ELR and no "last known
leader" fallback, and an empty target ISR is never written: the ISR keeps its last member and
the partition goes leaderless instead. That path is the one above, untouched.

With them on (``elr`` given, see :mod:`elections.elr`), the rules read two more lists:

* ELR upkeep first. While the target ISR holds at least ``min.insync.replicas`` members, the
  ELR and the last known ELR are emptied. Below it, the ELR becomes the old ISR and old ELR,
  less the target ISR and less replicas whose broker shut down uncleanly (their logs may have
  lost a tail, so they no longer hold every committed write).
* A replica is valid when it is acceptable and in the target ISR, or, once the target ISR is
  empty, in the ELR: electing it is clean, and the ISR becomes that replica alone (it leaves the
  ELR).
* After every valid replica, the *last known leader* (the single member of the last known ELR,
  recorded when the ISR became empty) if its broker is acceptable: counted unclean, as Kafka
  does, since it is not known to hold every committed write. Kafka elects it even when its
  broker is not acceptable; here a broker that cannot lead is never named leader.
* An unclean pick (last known leader or UNCLEAN) empties both lists.
* The ISR may become empty; the first time it does, the leader it had becomes the last known
  ELR. A partition that has (or keeps) a leader clears the last known ELR.

Not modelled, and why:

* Reassignment completion and its epoch bump belong to the reassignment path, not elections.
* Log directories: raftmeta does not track per-directory health, so a registered, unfenced
  broker not shutting down is taken to have the partition's directory online.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from raftmeta.common.elections import ElectionType
from raftmeta.records import (
    LEADER_RECOVERY_UNCHANGED,
    LEADER_UNCHANGED,
    NO_LEADER,
    LeaderRecoveryState,
    PartitionChangeRecord,
    TopicId,
)


class PartitionState(Protocol):
    """What the rules read of a partition; :class:`raftmeta.image.PartitionRegistration` is one."""

    @property
    def replicas(self) -> Sequence[int]:
        """In preference order: the first replica is the preferred leader."""
        ...

    @property
    def isr(self) -> Sequence[int]: ...

    @property
    def leader(self) -> int:
        """A broker id, or -1 for none."""
        ...

    @property
    def leader_recovery_state(self) -> int: ...

    @property
    def elr(self) -> Sequence[int]:
        """Eligible leader replicas (KIP-966); empty when the feature is off."""
        ...

    @property
    def last_known_elr(self) -> Sequence[int]: ...


@dataclass(frozen=True, slots=True)
class ElrSettings:
    """What the KIP-966 rules need besides the partition; ``None`` in its place means off."""

    min_isr: int
    """The topic's effective ``min.insync.replicas``."""
    unclean_shutdown: frozenset[int] = frozenset()
    """Brokers that came back from an unclean shutdown: they leave (and never join) the ELR."""


@dataclass(frozen=True, slots=True)
class LeaderChange:
    """What an election changes; ``None`` fields stay as they are."""

    leader: int | None = None
    """The new leader, or -1 to leave the partition leaderless."""
    isr: tuple[int, ...] | None = None
    leader_recovery_state: LeaderRecoveryState | None = None
    unclean: bool = False
    """The new leader came from outside the ISR; controllers count these (and log them)."""
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    from_elr: bool = False
    """The new leader came from the ELR (a clean election with the ISR empty)."""

    def to_record(self, topic_id: TopicId, partition_id: int) -> PartitionChangeRecord:
        """The record that makes this change; replay adds the epoch bumps."""
        return PartitionChangeRecord(
            partition_id=partition_id,
            topic_id=topic_id,
            isr=self.isr,
            leader=LEADER_UNCHANGED if self.leader is None else self.leader,
            leader_recovery_state=(
                LEADER_RECOVERY_UNCHANGED
                if self.leader_recovery_state is None
                else int(self.leader_recovery_state)
            ),
            eligible_leader_replicas=self.elr,
            last_known_elr=self.last_known_elr,
        )


def choose_leader(
    state: PartitionState,
    election: ElectionType,
    is_acceptable: Callable[[int], bool],
    *,
    target_isr: Sequence[int] | None = None,
    elr: ElrSettings | None = None,
) -> LeaderChange | None:
    """The change ``election`` makes to a partition, or ``None`` if it changes nothing.

    ``target_isr`` is the ISR the partition should end up with apart from the election (the
    current ISR without a broker being fenced, say); by default the current ISR. ``elr`` turns
    on the KIP-966 rules; without it the result is exactly that of the rules before them.
    """
    if elr is not None:
        return _choose_with_elr(state, election, is_acceptable, target_isr, elr)
    current_isr = tuple(state.isr)
    target = current_isr if target_isr is None else tuple(target_isr)
    current_leader = state.leader

    def is_valid(broker_id: int) -> bool:
        return broker_id != NO_LEADER and broker_id in target and is_acceptable(broker_id)

    new_leader: int | None = None
    new_isr: tuple[int, ...] | None = None
    new_recovery_state: LeaderRecoveryState | None = None
    unclean = False

    if _should_elect(state, election, target):
        pick, pick_is_unclean = _pick_leader(state, election, is_valid, is_acceptable)
        if pick != current_leader:
            new_leader = pick
            if pick_is_unclean:
                unclean = True
                new_isr = (pick,)
                if state.leader_recovery_state != LeaderRecoveryState.RECOVERING:
                    new_recovery_state = LeaderRecoveryState.RECOVERING

    if new_isr is None and target:
        new_isr = target
    if new_isr == current_isr:
        new_isr = None

    if new_leader is None and new_isr is None and new_recovery_state is None:
        return None
    return LeaderChange(new_leader, new_isr, new_recovery_state, unclean)


def _should_elect(state: PartitionState, election: ElectionType, target: tuple[int, ...]) -> bool:
    if state.leader not in target:
        return True
    replicas = state.replicas
    return election is ElectionType.PREFERRED and bool(replicas) and state.leader != replicas[0]


def _pick_leader(
    state: PartitionState,
    election: ElectionType,
    is_valid: Callable[[int], bool],
    is_acceptable: Callable[[int], bool],
) -> tuple[int, bool]:
    """The leader the rules choose (possibly the current one) and whether the pick is unclean."""
    replicas = state.replicas
    if election is ElectionType.PREFERRED:
        if replicas and is_valid(replicas[0]):
            return replicas[0], False
        if is_valid(state.leader):
            return state.leader, False
        for replica in replicas[1:]:
            if is_valid(replica):
                return replica, False
        return NO_LEADER, False

    if is_valid(state.leader):
        return state.leader, False
    for replica in replicas:
        if is_valid(replica):
            return replica, False
    if election is ElectionType.UNCLEAN:
        for replica in replicas:
            if replica != NO_LEADER and is_acceptable(replica):
                return replica, True
    return NO_LEADER, False


def _choose_with_elr(
    state: PartitionState,
    election: ElectionType,
    is_acceptable: Callable[[int], bool],
    target_isr: Sequence[int] | None,
    settings: ElrSettings,
) -> LeaderChange | None:
    """:func:`choose_leader` with eligible leader replicas on (the module docstring's rules)."""
    current_isr = tuple(state.isr)
    target = current_isr if target_isr is None else tuple(target_isr)
    current_leader = state.leader
    current_elr = tuple(state.elr)
    current_last_known = tuple(state.last_known_elr)

    if len(target) >= settings.min_isr:
        target_elr: tuple[int, ...] = ()
    else:
        candidates = set(current_elr) | set(current_isr)
        target_elr = tuple(
            sorted(
                replica
                for replica in candidates
                if replica not in target and replica not in settings.unclean_shutdown
            )
        )

    def is_valid(broker_id: int) -> bool:
        if broker_id == NO_LEADER or not is_acceptable(broker_id):
            return False
        return broker_id in target or (not target and broker_id in target_elr)

    new_leader: int | None = None
    new_isr: tuple[int, ...] | None = None
    new_recovery_state: LeaderRecoveryState | None = None
    unclean = from_elr = False
    if _should_elect(state, election, target):
        pick, pick_is_unclean = _pick_with_elr(
            state, election, is_valid, is_acceptable, target, target_elr
        )
        if pick != current_leader:
            new_leader = pick
            if pick in target_elr:
                from_elr = not pick_is_unclean
                target = (pick,)
                target_elr = tuple(replica for replica in target_elr if replica != pick)
            if pick_is_unclean:
                unclean = True
                new_isr = (pick,)
                target_elr = ()
                if state.leader_recovery_state != LeaderRecoveryState.RECOVERING:
                    new_recovery_state = LeaderRecoveryState.RECOVERING

    if new_isr is None and target != current_isr:
        new_isr = target

    new_last_known: tuple[int, ...] | None = None
    if new_isr == () and current_leader != NO_LEADER and current_last_known != (current_leader,):
        new_last_known = (current_leader,)
    elif current_last_known and (
        (new_leader is not None and new_leader != NO_LEADER)
        or (new_leader is None and current_leader != NO_LEADER)
    ):
        new_last_known = ()
    if new_last_known == current_last_known:
        new_last_known = None
    new_elr = None if target_elr == current_elr else target_elr

    if (
        new_leader is None
        and new_isr is None
        and new_recovery_state is None
        and new_elr is None
        and new_last_known is None
    ):
        return None
    return LeaderChange(
        new_leader, new_isr, new_recovery_state, unclean, new_elr, new_last_known, from_elr
    )


def _pick_with_elr(
    state: PartitionState,
    election: ElectionType,
    is_valid: Callable[[int], bool],
    is_acceptable: Callable[[int], bool],
    target: tuple[int, ...],
    target_elr: tuple[int, ...],
) -> tuple[int, bool]:
    """:func:`_pick_leader` with the ELR counted valid and the last known leader after it."""
    pick, unclean = _pick_leader(state, election, is_valid, is_acceptable)
    if pick != NO_LEADER and (not unclean or election is not ElectionType.UNCLEAN):
        return pick, unclean
    # Nothing clean: the last known leader comes before an unclean pick from the replicas.
    last_known = tuple(state.last_known_elr)
    if (
        not target
        and not target_elr
        and len(last_known) == 1
        and last_known[0] != NO_LEADER
        and is_acceptable(last_known[0])
    ):
        return last_known[0], True
    return pick, unclean
