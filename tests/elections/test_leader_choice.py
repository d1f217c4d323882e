"""The leader-choice rules one at a time, on hand-made partition states."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from elections import LeaderChange, choose_leader
from raftmeta.common.elections import ElectionType
from raftmeta.records import (
    LEADER_RECOVERY_UNCHANGED,
    LEADER_UNCHANGED,
    NO_LEADER,
    LeaderRecoveryState,
    PartitionChangeRecord,
)

PREFERRED = ElectionType.PREFERRED
ONLINE = ElectionType.ONLINE
UNCLEAN = ElectionType.UNCLEAN
RECOVERING = LeaderRecoveryState.RECOVERING


@dataclass(frozen=True)
class State:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_recovery_state: int = 0
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()


def alive(*brokers: int) -> Callable[[int], bool]:
    return lambda broker_id: broker_id in brokers


# --- PREFERRED --------------------------------------------------------------------------------


def test_preferred_elects_the_first_replica_when_it_is_in_the_isr_and_alive() -> None:
    state = State((1, 2, 3), (1, 2, 3), leader=2)
    assert choose_leader(state, PREFERRED, alive(1, 2, 3)) == LeaderChange(leader=1)


def test_preferred_keeps_a_valid_current_leader_when_the_first_replica_cannot_lead() -> None:
    not_in_isr = State((1, 2, 3), (2, 3), leader=2)
    assert choose_leader(not_in_isr, PREFERRED, alive(1, 2, 3)) is None
    fenced = State((1, 2, 3), (1, 2, 3), leader=2)
    assert choose_leader(fenced, PREFERRED, alive(2, 3)) is None


def test_preferred_falls_back_to_the_next_valid_replica_in_replica_order() -> None:
    # Leaderless: neither the first replica nor the old leader can lead, so the first valid
    # replica after position 0 wins, in replica order, not ISR order.
    state = State((1, 2, 3), (3, 2), leader=NO_LEADER)
    assert choose_leader(state, PREFERRED, alive(2, 3)) == LeaderChange(leader=2)


def test_preferred_with_nobody_valid_changes_nothing_for_a_leaderless_partition() -> None:
    state = State((1, 2), (1, 2), leader=NO_LEADER)
    assert choose_leader(state, PREFERRED, alive()) is None


def test_preferred_takes_leadership_from_a_leader_that_may_no_longer_lead() -> None:
    state = State((1, 2), (2,), leader=2)
    assert choose_leader(state, PREFERRED, alive(1)) == LeaderChange(leader=NO_LEADER)


def test_preferred_never_picks_outside_the_isr() -> None:
    state = State((1, 2, 3), (3,), leader=NO_LEADER)
    assert choose_leader(state, PREFERRED, alive(1, 2)) is None


def test_preferred_leaves_a_preferred_leader_alone() -> None:
    state = State((1, 2), (1, 2), leader=1)
    assert choose_leader(state, PREFERRED, alive(1, 2)) is None


# --- ONLINE and UNCLEAN -----------------------------------------------------------------------


@pytest.mark.parametrize("election", [ONLINE, UNCLEAN])
def test_online_and_unclean_keep_a_leader_still_in_the_isr(election: ElectionType) -> None:
    state = State((1, 2, 3), (1, 2, 3), leader=3)
    assert choose_leader(state, election, alive(1, 2, 3)) is None


@pytest.mark.parametrize("election", [ONLINE, UNCLEAN])
def test_a_leader_outside_the_target_isr_is_replaced_by_the_first_valid_replica(
    election: ElectionType,
) -> None:
    state = State((1, 2, 3), (1, 2, 3), leader=1)
    change = choose_leader(state, election, alive(2, 3), target_isr=(3, 2))
    assert change == LeaderChange(leader=2, isr=(3, 2))


def test_online_leaves_the_partition_leaderless_when_nobody_in_the_isr_can_lead() -> None:
    state = State((1, 2, 3), (1, 2), leader=1)
    change = choose_leader(state, ONLINE, alive(3), target_isr=(2,))
    assert change == LeaderChange(leader=NO_LEADER, isr=(2,))


def test_unclean_picks_the_first_live_replica_outside_the_isr() -> None:
    state = State((1, 2, 3), (1,), leader=NO_LEADER)
    change = choose_leader(state, UNCLEAN, alive(3, 2))
    assert change == LeaderChange(
        leader=2, isr=(2,), leader_recovery_state=RECOVERING, unclean=True
    )


def test_unclean_prefers_a_clean_pick_when_one_exists() -> None:
    state = State((1, 2, 3), (3,), leader=NO_LEADER)
    assert choose_leader(state, UNCLEAN, alive(1, 2, 3)) == LeaderChange(leader=3)


def test_an_unclean_pick_on_a_recovering_partition_does_not_rewrite_the_recovery_state() -> None:
    state = State((1, 2), (1,), leader=NO_LEADER, leader_recovery_state=1)
    change = choose_leader(state, UNCLEAN, alive(2))
    assert change == LeaderChange(leader=2, isr=(2,), unclean=True)


def test_unclean_with_no_live_replica_changes_nothing() -> None:
    state = State((1, 2), (1,), leader=NO_LEADER)
    assert choose_leader(state, UNCLEAN, alive(7)) is None


def test_online_never_goes_outside_the_isr() -> None:
    state = State((1, 2), (1,), leader=NO_LEADER)
    assert choose_leader(state, ONLINE, alive(2)) is None


# --- the ISR ----------------------------------------------------------------------------------


def test_an_isr_shrink_without_a_leader_move_sets_only_the_isr() -> None:
    state = State((1, 2, 3), (1, 2, 3), leader=1)
    assert choose_leader(state, ONLINE, alive(1, 3), target_isr=(1, 3)) == LeaderChange(isr=(1, 3))


def test_an_empty_target_isr_is_never_written() -> None:
    # Eligible leader replicas are off: the last member stays in the ISR, the leader goes.
    state = State((1, 2), (1,), leader=1)
    assert choose_leader(state, ONLINE, alive(2), target_isr=()) == LeaderChange(leader=NO_LEADER)


def test_an_empty_target_isr_with_an_unclean_pick_sets_the_isr_to_the_new_leader() -> None:
    state = State((1, 2), (1,), leader=1)
    change = choose_leader(state, UNCLEAN, alive(2), target_isr=())
    assert change == LeaderChange(
        leader=2, isr=(2,), leader_recovery_state=RECOVERING, unclean=True
    )


def test_a_target_isr_equal_to_the_current_one_is_not_written() -> None:
    state = State((1, 2), (1, 2), leader=NO_LEADER)
    assert choose_leader(state, ONLINE, alive(2), target_isr=[1, 2]) == LeaderChange(leader=2)


# --- records ----------------------------------------------------------------------------------


def test_to_record_uses_the_unchanged_sentinels() -> None:
    assert LeaderChange(isr=(1, 3)).to_record(b"t" * 16, 4) == PartitionChangeRecord(
        partition_id=4,
        topic_id=b"t" * 16,
        isr=(1, 3),
        leader=LEADER_UNCHANGED,
        leader_recovery_state=LEADER_RECOVERY_UNCHANGED,
    )


def test_to_record_of_an_unclean_change_sets_every_field() -> None:
    change = LeaderChange(leader=2, isr=(2,), leader_recovery_state=RECOVERING, unclean=True)
    assert change.to_record(b"t" * 16, 0) == PartitionChangeRecord(
        partition_id=0, topic_id=b"t" * 16, isr=(2,), leader=2, leader_recovery_state=1
    )


def test_to_record_can_take_a_leader_away() -> None:
    assert LeaderChange(leader=NO_LEADER).to_record(b"t" * 16, 0).leader == NO_LEADER


def test_the_image_partition_registration_is_a_partition_state() -> None:
    from raftmeta.image import PartitionRegistration

    registration = PartitionRegistration((1, 2), (1, 2), (), (), 2, 0, 3, 4)
    assert choose_leader(registration, PREFERRED, alive(1, 2)) == LeaderChange(leader=1)
