"""Membership in the log (KIP-853): VotersRecord and KRaftVersionRecord control records.

A node's voter set is the latest VotersRecord in its log, committed or not; truncating it away
restores the set before it; snapshots carry the set.
"""

from __future__ import annotations

import pytest

from raftmeta.errors import ErrorCode
from raftmeta.raft.batch import OffsetAndEpoch, SnapshotId, make_batch
from raftmeta.raft.control import (
    KRAFT_VERSION_DYNAMIC,
    KRaftVersionRecord,
    VotersRecord,
    decode_control_record,
    encode_voters,
    membership_batch,
)
from raftmeta.raft.core import RaftCore
from raftmeta.raft.membership import Membership, MembershipHistory
from raftmeta.raft.messages import FetchRequest, FetchResponse, FetchSnapshotResponse
from raftmeta.raft.ready import InstallSnapshot
from raftmeta.raft.roles import Role
from raftmeta.raft.state import ElectionState
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter, VoterSet
from tests.raft.builder import drain, new_core

THREE = VoterSet.of(ReplicaKey(i, f"d{i}") for i in (1, 2, 3))
FOUR = THREE.with_voter(Voter(ReplicaKey(4, "d4"), (Endpoint("CONTROLLER", "h4", 9004),)))
TWO = THREE.without(3)


def test_voters_record_round_trips_with_endpoints_and_kraft_version() -> None:
    batch = membership_batch(7, 2, FOUR, kraft_version=KRAFT_VERSION_DYNAMIC)
    assert batch.is_control and batch.record_count == 2
    version, voters = (decode_control_record(r) for r in batch.records())
    assert version == KRaftVersionRecord(KRAFT_VERSION_DYNAMIC)
    assert isinstance(voters, VotersRecord) and voters.voter_set == FOUR
    assert voters.voter_set.voter(4) == FOUR.voter(4)


@pytest.mark.parametrize(
    "record",
    [
        b"\xc1",
        encode_voters(THREE)[:-3],
        b"\x93\x06\x00\x92\x94\x01\xc0\x90\x90\x94\x01\xc0\x90\x90",  # node 1 twice
    ],
)
def test_malformed_control_records_are_value_errors(record: bytes) -> None:
    with pytest.raises(ValueError):
        decode_control_record(record)


def test_history_takes_effect_on_append_and_truncation_restores() -> None:
    history = MembershipHistory(Membership(KRAFT_VERSION_DYNAMIC, THREE))
    assert not history.appended(make_batch(0, 1, [b"x"]))
    assert history.appended(membership_batch(1, 1, FOUR))
    assert history.appended(membership_batch(2, 1, TWO))
    assert history.current.voters == TWO
    assert history.at(2).voters == FOUR and history.at(1).voters == THREE
    assert history.truncated(2) and history.current.voters == FOUR
    assert not history.truncated(5)
    history.start_moved(2)
    assert history.current.voters == FOUR and history.last_change_offset is None
    assert history.truncated(2) is False and history.current.voters == FOUR


def follower_of_1(node_id: int = 2) -> RaftCore:
    core = new_core(
        node_id,
        THREE,
        directory_id=f"d{node_id}",
        election=ElectionState(1, None, 1),
        kraft_version=KRAFT_VERSION_DYNAMIC,
    )
    drain(core)
    return core


def test_follower_adopts_a_fetched_voters_record_before_it_commits_and_drops_it_on_truncation() -> (
    None
):
    core = follower_of_1()
    change = membership_batch(0, 1, FOUR)
    core.step(1, FetchResponse(ErrorCode.NONE, 1, 1, 0, high_watermark=0, batches=(change,)), 5)
    drain(core, 5)
    assert core.high_watermark == 0 and core.voter_set == FOUR
    # The leader of epoch 2 never had it: the follower truncates and is back to three voters.
    core.step(1, FetchResponse(ErrorCode.NONE, 2, 1, 1, diverging=OffsetAndEpoch(0, 0)), 6)
    drain(core, 6)
    assert core.log.end_offset == 0 and core.voter_set == THREE


def removed_follower(*, committed: bool) -> RaftCore:
    core = follower_of_1(3)
    removal = membership_batch(0, 1, TWO)
    high_watermark = 1 if committed else 0
    core.step(1, FetchResponse(ErrorCode.NONE, 1, 1, 0, high_watermark, batches=(removal,)), 5)
    drain(core, 5)
    return core


def test_a_voter_whose_removal_is_uncommitted_may_still_campaign_without_counting_itself() -> None:
    """It may hold the longest log, and the others, without the record, still need it."""
    core = removed_follower(committed=False)
    assert not core.is_voter and core.may_vote
    while core.role is Role.FOLLOWER:
        core.tick(core.next_deadline_ms())
    assert core.role is Role.PROSPECTIVE
    assert core.state.granted == set()  # type: ignore[union-attr]


def test_a_voter_removed_by_a_committed_record_stops_being_a_voter() -> None:
    core = removed_follower(committed=True)
    assert not core.is_voter and core.role is Role.FOLLOWER
    # With the leader silent, it looks for a leader as an observer and never campaigns.
    sent = []
    for _ in range(50):
        now = core.next_deadline_ms()
        core.tick(now)
        sent += drain(core, now).sent
        assert core.role in (Role.FOLLOWER, Role.UNATTACHED)
    assert core.role is Role.UNATTACHED
    assert sent and all(isinstance(m.message, FetchRequest) for m in sent)


def test_installed_snapshot_brings_its_voter_set_and_the_install_op_carries_it() -> None:
    core = follower_of_1()
    snapshot = SnapshotId(10, 1)
    core.step(1, FetchResponse(ErrorCode.NONE, 1, 1, 0, snapshot_id=snapshot), 5)
    drain(core, 5)
    chunk = FetchSnapshotResponse(
        ErrorCode.NONE, 1, 1, snapshot, 0, 3, 3, b"abc", FOUR, KRAFT_VERSION_DYNAMIC
    )
    core.step(1, chunk, 6)
    ops = [op for r in drain(core, 6).readies for op in r.log_ops]
    assert InstallSnapshot(snapshot, Membership(KRAFT_VERSION_DYNAMIC, FOUR)) in ops
    assert core.voter_set == FOUR and core.membership_at(10).voters == FOUR


def test_restart_replays_voters_records_from_the_log() -> None:
    from raftmeta.raft.log import RaftLog

    log = RaftLog([make_batch(0, 1, [b"a"]), membership_batch(1, 1, FOUR)])
    core = new_core(4, THREE, directory_id="d4", log=log, kraft_version=KRAFT_VERSION_DYNAMIC)
    assert core.is_voter and core.voter_set == FOUR and core.kraft_version == 1
