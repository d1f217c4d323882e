"""AddVoter / RemoveVoter / UpdateVoter on the leader (KIP-853): Kafka's preconditions and
codes, one change at a time, effective on append, and a leader that removes itself resigns."""

from __future__ import annotations

from raftmeta.errors import ErrorCode
from raftmeta.raft.messages import VoteResponse
from raftmeta.raft.roles import Role
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter, VoterSet
from tests.raft.builder import CoreCluster, drain, new_core

NEW = Voter(ReplicaKey(4, "d4"), (Endpoint("CONTROLLER", "127.0.0.1", 9094),))


def dynamic_cluster(observers: int = 1) -> CoreCluster:
    cluster = CoreCluster(observers=observers, dynamic=True)
    cluster.elect()
    cluster.advance_time(cluster.now_ms + 300)  # observers find the leader and catch up
    return cluster


def test_add_voter_takes_effect_on_append_and_everyone_adopts_it() -> None:
    cluster = dynamic_cluster()
    leader = cluster.leader()
    result = leader.add_voter(NEW, cluster.now_ms)
    assert result.error is ErrorCode.NONE and result.offset is not None
    assert 4 in leader.voters and leader.high_watermark <= result.offset, "before it commits"
    cluster.pump()
    assert leader.high_watermark > result.offset
    for core in cluster.cores.values():
        assert core.voters == {1, 2, 3, 4}
    assert cluster.cores[4].is_voter
    described = {r.replica_id: r.directory_id for r in leader.describe().voters}
    assert described == {1: "d1", 2: "d2", 3: "d3", 4: "d4"}


def test_one_change_at_a_time() -> None:
    cluster = dynamic_cluster(observers=2)
    leader = cluster.leader()
    assert leader.add_voter(NEW, cluster.now_ms).error is ErrorCode.NONE
    second = leader.add_voter(Voter(ReplicaKey(5, "d5")), cluster.now_ms)
    assert second.error is ErrorCode.REQUEST_TIMED_OUT and "one change at a time" in second.message
    cluster.pump()
    assert leader.add_voter(Voter(ReplicaKey(5, "d5")), cluster.now_ms).error is ErrorCode.NONE


def test_kafka_codes_for_bad_changes() -> None:
    cluster = dynamic_cluster()
    leader = cluster.leader()
    now = cluster.now_ms
    assert leader.add_voter(Voter(ReplicaKey(2, "dx")), now).error is ErrorCode.DUPLICATE_VOTER
    assert leader.remove_voter(ReplicaKey(9, "d9"), now).error is ErrorCode.VOTER_NOT_FOUND
    wrong_directory = leader.remove_voter(ReplicaKey(2, "wiped"), now)
    assert wrong_directory.error is ErrorCode.INVALID_VOTER_KEY
    assert leader.update_voter(Voter(ReplicaKey(3, "dx")), now).error is ErrorCode.INVALID_VOTER_KEY
    assert leader.add_voter(Voter(ReplicaKey(4)), now).error is ErrorCode.INVALID_REQUEST
    follower = next(c for c in cluster.cores.values() if c.role is Role.FOLLOWER and c.is_voter)
    assert follower.add_voter(NEW, now).error is ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_a_replica_that_has_not_caught_up_is_not_added() -> None:
    cluster = CoreCluster(observers=1, dynamic=True)
    cluster.down.add(4)
    cluster.elect()
    result = cluster.leader().add_voter(NEW, cluster.now_ms)
    assert result.error is ErrorCode.REQUEST_TIMED_OUT and "caught up" in result.message


def test_static_quorum_refuses_changes() -> None:
    cluster = CoreCluster(observers=1)
    cluster.elect()
    result = cluster.leader().add_voter(NEW, cluster.now_ms)
    assert result.error is ErrorCode.UNSUPPORTED_VERSION


def test_new_leader_accepts_no_change_before_it_commits_in_its_epoch() -> None:
    voters = VoterSet.of(ReplicaKey(i, f"d{i}") for i in (1, 2, 3))
    core = new_core(1, voters, directory_id="d1", kraft_version=1)
    now = core.next_deadline_ms()
    core.tick(now)
    core.step(2, VoteResponse(ErrorCode.NONE, 0, None, True, 1, pre_vote=True), now)
    core.step(2, VoteResponse(ErrorCode.NONE, 1, None, True, 1), now)
    drain(core, now)
    assert core.role is Role.LEADER and core.high_watermark == 0
    result = core.remove_voter(ReplicaKey(3, "d3"), now)
    assert result.error is ErrorCode.REQUEST_TIMED_OUT and "epoch" in result.message


def test_leader_that_removes_itself_resigns_once_the_change_commits() -> None:
    cluster = dynamic_cluster(observers=0)
    leader = cluster.leader()
    result = leader.remove_voter(leader.local_key, cluster.now_ms)
    assert result.error is ErrorCode.NONE and leader.role is Role.LEADER
    cluster.pump()
    assert leader.role is Role.RESIGNED and not leader.is_voter
    cluster.advance_time(cluster.now_ms + 3000)
    successor = cluster.leader()
    assert successor is not leader and successor.voters == leader.voters
    assert leader.role is Role.FOLLOWER, "the removed leader follows as an observer"
    assert successor.describe().observers[0].replica_id == leader.node_id


def test_update_voter_replaces_endpoints() -> None:
    cluster = dynamic_cluster(observers=0)
    leader = cluster.leader()
    moved = Voter(ReplicaKey(2, "d2"), (Endpoint("CONTROLLER", "10.0.0.2", 9093),))
    assert leader.update_voter(moved, cluster.now_ms).error is ErrorCode.NONE
    cluster.pump()
    assert all(c.voter_set.voter(2) == moved for c in cluster.cores.values())


def test_a_removed_voter_that_missed_its_removal_cannot_disturb_the_quorum() -> None:
    """Node 3 was down while it was removed; back, it campaigns, but pre-votes (KIP-996) are
    refused by voters that hear from their leader, so nobody's epoch moves."""
    cluster = dynamic_cluster(observers=0)
    leader = cluster.leader()
    stale = next(c for c in cluster.cores.values() if c is not leader)
    cluster.down.add(stale.node_id)
    result = leader.remove_voter(stale.local_key, cluster.now_ms)
    assert result.error is ErrorCode.NONE
    cluster.advance_time(cluster.now_ms + 100)
    assert result.offset is not None and leader.high_watermark > result.offset
    epoch = leader.epoch
    now = cluster.now_ms
    while stale.role is not Role.PROSPECTIVE:
        now = stale.next_deadline_ms()
        stale.tick(now)
    for _ in range(3):  # deliver its pre-votes and the answers, three rounds
        for ready in drain(stale, now).readies:
            for outbound in (*ready.messages, *ready.messages_after_persist):
                if outbound.destination in cluster.cores:
                    cluster.cores[outbound.destination].step(stale.node_id, outbound.message, now)
        for core in cluster.cores.values():
            if core is stale:
                continue
            for ready in drain(core, now).readies:
                for outbound in (*ready.messages, *ready.messages_after_persist):
                    if outbound.destination == stale.node_id:
                        stale.step(core.node_id, outbound.message, now)
        now = max(now, stale.next_deadline_ms())
        stale.tick(now)
    assert stale.role is not Role.CANDIDATE and stale.epoch == epoch
    assert leader.role is Role.LEADER and leader.epoch == epoch
