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

Not modelled, and why:

* Eligible leader replicas (KIP-966) are off, as they are by default in Kafka: there is no ELR
  and no "last known leader" fallback, and an empty target ISR is never written; the ISR keeps
  its last member and the partition goes leaderless instead.
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


@dataclass(frozen=True, slots=True)
class LeaderChange:
    """What an election changes; ``None`` fields stay as they are."""

    leader: int | None = None
    """The new leader, or -1 to leave the partition leaderless."""
    isr: tuple[int, ...] | None = None
    leader_recovery_state: LeaderRecoveryState | None = None
    unclean: bool = False
    """The new leader came from outside the ISR; controllers count these (and log them)."""

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
        )


def choose_leader(
    state: PartitionState,
    election: ElectionType,
    is_acceptable: Callable[[int], bool],
    *,
    target_isr: Sequence[int] | None = None,
) -> LeaderChange | None:
    """The change ``election`` makes to a partition, or ``None`` if it changes nothing.

    ``target_isr`` is the ISR the partition should end up with apart from the election (the
    current ISR without a broker being fenced, say); by default the current ISR.
    """
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
