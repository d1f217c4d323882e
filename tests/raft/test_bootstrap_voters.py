"""The first leader of a dynamic quorum copies the bootstrap voter set into the log.

``raftmeta format --standalone`` / ``--initial-controllers`` put the first voters in a bootstrap
file only; a controller formatted with ``--no-initial-controllers`` learns its voters by
fetching the log from the start, so the set must be in the log too.
"""

from __future__ import annotations

import random

from raftmeta.raft.batch import SnapshotId
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC, membership_in
from raftmeta.raft.core import RaftCore
from raftmeta.raft.log import RaftLog
from raftmeta.raft.roles import Role
from raftmeta.raft.state import ElectionState
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter, VoterSet
from tests.raft.builder import CONFIG, drain, new_core

ALONE = VoterSet([Voter(ReplicaKey(1, "d1"), (Endpoint("CONTROLLER", "h1", 9001),))])


def elected_alone(
    kraft_version: int, log: RaftLog | None = None
) -> list[tuple[int, int | None, int | None]]:
    if log is None:
        core = new_core(1, ALONE, directory_id="d1", kraft_version=kraft_version)
    else:  # (the builder takes an empty log for none)
        core = RaftCore(
            1,
            ALONE,
            CONFIG,
            election_state=ElectionState(),
            log=log,
            now_ms=0,
            rng=random.Random(7),
            directory_id="d1",
            kraft_version=kraft_version,
        )
    now = 3 * CONFIG.election_timeout_ms
    core.tick(now)
    drain(core, now)
    assert core.role is Role.LEADER
    found: list[tuple[int, int | None, int | None]] = []
    for batch in core.log.batches():
        version, voters = membership_in(batch)
        if version is not None or voters is not None:
            found.append((batch.base_offset, version, None if voters is None else len(voters)))
    assert core.voter_set == ALONE
    return found


def test_first_leader_of_a_dynamic_quorum_writes_the_bootstrap_voters_after_its_epoch_start() -> (
    None
):
    assert elected_alone(KRAFT_VERSION_DYNAMIC) == [(1, KRAFT_VERSION_DYNAMIC, 1)]


def test_a_static_quorum_keeps_its_voters_out_of_the_log() -> None:
    assert elected_alone(0) == []


def test_a_log_that_starts_at_a_snapshot_gets_no_copy() -> None:
    # The snapshot's own voter set stands in for the bootstrap file; a copy would be noise.
    log = RaftLog([], start_offset=10, snapshot=SnapshotId(10, 0))
    assert elected_alone(KRAFT_VERSION_DYNAMIC, log) == []
    assert log.end_offset == 11  # the epoch's LeaderChange alone
