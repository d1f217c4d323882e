"""KIP-853's voter changes as the leader checks them: AddVoter, RemoveVoter, UpdateVoter.

Only one voter may change at a time. Each VotersRecord differs from the set before it by one
voter, so every majority of the old set meets every majority of the new one, and both sets may
decide (the new one takes effect on append, the old one is what other nodes still use) without
ever committing two different things. Two changes in flight at once break that (3 voters to 5
can leave {1,2} and {3,4,5} as majorities that never meet). So a change is refused while an
earlier one is not yet committed, and also before the leader has committed a record of its own
epoch: until then a change appended by a previous leader may still sit uncommitted in its log
(the single-server-change bug in the Raft dissertation's errata).

The checks here read only what they are given; the core applies them and appends the record.
"""

from __future__ import annotations

from dataclasses import dataclass

from raftmeta.errors import ErrorCode
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.raft.progress import ReplicaProgress
from raftmeta.raft.voters import ReplicaKey, Voter, VoterSet


@dataclass(frozen=True, slots=True)
class VoterChangeResult:
    """The answer to a voter change: an error code and message, or the offset and epoch of the
    appended VotersRecord; the change is done once that record commits."""

    error: ErrorCode
    message: str = ""
    offset: int | None = None
    epoch: int | None = None


@dataclass(frozen=True, slots=True)
class LeaderView:
    """What the leader knows that a voter change depends on."""

    voters: VoterSet
    kraft_version: int
    committed_own_epoch: bool
    change_pending: bool


def refuse(error: ErrorCode, message: str) -> VoterChangeResult:
    return VoterChangeResult(error, message)


def common_problem(view: LeaderView) -> VoterChangeResult | None:
    """The checks every change shares (AddVoterHandler's and RemoveVoterHandler's first)."""
    if not view.committed_own_epoch:
        return refuse(
            ErrorCode.REQUEST_TIMED_OUT,
            "the leader has not yet committed a record of its epoch; retry shortly",
        )
    if view.kraft_version < KRAFT_VERSION_DYNAMIC:
        return refuse(
            ErrorCode.UNSUPPORTED_VERSION,
            "the quorum's voters are static (kraft.version 0); format it with "
            "--standalone or --initial-controllers for dynamic membership",
        )
    if view.change_pending:
        return refuse(
            ErrorCode.REQUEST_TIMED_OUT,
            "an earlier voter change is not committed yet; one change at a time",
        )
    return None


def add_problem(
    view: LeaderView,
    voter: Voter,
    progress: ReplicaProgress | None,
    now_ms: int,
    caught_up_within_ms: int,
) -> VoterChangeResult | None:
    problem = common_problem(view)
    if problem is not None:
        return problem
    if voter.key.directory_id is None:
        return refuse(ErrorCode.INVALID_REQUEST, "a dynamic voter needs its directory id")
    if voter.node_id in view.voters.ids:
        return refuse(ErrorCode.DUPLICATE_VOTER, f"node {voter.node_id} is already a voter")
    caught_up = progress is not None and progress.last_caught_up_ms
    if progress is None or not caught_up or now_ms - caught_up > caught_up_within_ms:
        return refuse(
            ErrorCode.REQUEST_TIMED_OUT,
            f"replica {voter.key} has not caught up to the leader's log end; it must fetch "
            "as an observer first",
        )
    return None


def remove_problem(view: LeaderView, key: ReplicaKey) -> VoterChangeResult | None:
    problem = common_problem(view)
    if problem is not None:
        return problem
    return _known_voter_problem(view.voters, key) or (
        refuse(ErrorCode.INVALID_REQUEST, "the last voter cannot be removed")
        if len(view.voters) == 1
        else None
    )


def update_problem(view: LeaderView, voter: Voter) -> VoterChangeResult | None:
    problem = common_problem(view)
    if problem is not None:
        return problem
    return _known_voter_problem(view.voters, voter.key)


def _known_voter_problem(voters: VoterSet, key: ReplicaKey) -> VoterChangeResult | None:
    known = voters.key_of(key.node_id)
    if known is None:
        return refuse(ErrorCode.VOTER_NOT_FOUND, f"node {key.node_id} is not a voter")
    if known != key:
        return refuse(ErrorCode.INVALID_VOTER_KEY, f"the voter is {known}, not {key}")
    return None
