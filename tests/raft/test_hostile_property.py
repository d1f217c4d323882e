"""Property: random peer messages, in range or not, never make a core raise or persist an
unchecked value, and never make it send one.

The one exception is Kafka's own fatal error: an answer from the node's current leader that
orders it to drop committed records (truncate or install a snapshot below its high watermark).
Only a message forged under the leader's own id can carry that; authenticated peers stop it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raftmeta.errors import ErrorCode
from raftmeta.raft.batch import Batch, OffsetAndEpoch, SnapshotId, make_batch
from raftmeta.raft.core import RaftCore
from raftmeta.raft.limits import EPOCH_LIMIT, election_state_problem
from raftmeta.raft.log import LogInvariantError
from raftmeta.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    Message,
    VoteRequest,
    VoteResponse,
)
from raftmeta.raft.ready import AppendBatches
from raftmeta.raft.state import ElectionState
from raftmeta.raft.validation import message_problem
from tests.raft.builder import new_core, with_elected_leader

EPOCHS = st.one_of(
    st.integers(0, 6),
    st.sampled_from([EPOCH_LIMIT - 1, EPOCH_LIMIT, EPOCH_LIMIT + 1, 2**40, -1, -(2**31)]),
)
OFFSETS = st.one_of(st.integers(0, 40), st.sampled_from([-1, -(2**63), 2**63 - 1, 2**63]))
IDS = st.one_of(st.integers(1, 4), st.sampled_from([-5, -1, 0, 66, 2**31 - 1, 2**31]))
MAYBE_IDS = st.one_of(st.none(), IDS)
SIZES = st.one_of(st.integers(1, 4096), st.sampled_from([0, -1, -(2**31), 2**31]))
ERRORS = st.sampled_from(list(ErrorCode))
SNAPSHOTS = st.builds(SnapshotId, OFFSETS, EPOCHS)
BATCHES = st.lists(
    st.builds(
        lambda base, epoch, count: (
            make_batch(base, epoch, [b"r"] * count)
            if count > 0
            else Batch(base, epoch, count, b"\x90")
        ),
        OFFSETS,
        EPOCHS,
        st.integers(-1, 3),
    ),
    max_size=3,
).map(tuple)
DATA = st.binary(max_size=8)

MESSAGES: st.SearchStrategy[Message] = st.one_of(
    st.builds(VoteRequest, EPOCHS, IDS, EPOCHS, OFFSETS, st.booleans()),
    st.builds(VoteResponse, ERRORS, EPOCHS, MAYBE_IDS, st.booleans(), EPOCHS, st.booleans()),
    st.builds(BeginQuorumEpochRequest, IDS, EPOCHS),
    st.builds(BeginQuorumEpochResponse, ERRORS, EPOCHS, MAYBE_IDS),
    st.builds(EndQuorumEpochRequest, IDS, EPOCHS, st.lists(IDS, max_size=4).map(tuple)),
    st.builds(EndQuorumEpochResponse, ERRORS, EPOCHS, MAYBE_IDS),
    st.builds(FetchRequest, EPOCHS, OFFSETS, EPOCHS, st.sampled_from([0, 50, -1]), SIZES),
    st.builds(
        FetchResponse,
        ERRORS,
        EPOCHS,
        MAYBE_IDS,
        OFFSETS,
        OFFSETS,
        OFFSETS,
        BATCHES,
        st.one_of(st.none(), st.builds(OffsetAndEpoch, OFFSETS, EPOCHS)),
        st.one_of(st.none(), SNAPSHOTS),
    ),
    st.builds(FetchSnapshotRequest, EPOCHS, SNAPSHOTS, OFFSETS, SIZES),
    st.builds(
        lambda error, epoch, leader, snapshot, position, size, data, honest: FetchSnapshotResponse(
            error,
            epoch,
            leader,
            snapshot,
            position,
            size,
            len(data) if honest else len(data) + 1,
            data,
        ),
        ERRORS,
        EPOCHS,
        MAYBE_IDS,
        SNAPSHOTS,
        OFFSETS,
        OFFSETS,
        DATA,
        st.booleans(),
    ),
)
INPUTS = st.lists(st.tuples(IDS, MESSAGES), min_size=1, max_size=25)


def _leader() -> RaftCore:
    cluster = with_elected_leader()
    leader = cluster.leader()
    leader.propose([b"committed"], cluster.now_ms)
    cluster.pump()
    return leader


SITUATIONS: dict[str, Callable[[], RaftCore]] = {
    "unattached voter": lambda: new_core(),
    "follower": lambda: new_core(election=ElectionState(3, None, 2)),
    "restarted leader": lambda: new_core(election=ElectionState(3, 1, 1)),
    "observer": lambda: new_core(node_id=4),
    "leader": _leader,
}


def _kafka_fatal(core: RaftCore, sender: int, message: Message) -> bool:
    """An order from our own leader to drop records: Kafka stops the node, so do we."""
    return (
        sender == core.leader_id
        and isinstance(message, FetchResponse | FetchSnapshotResponse)
        and (
            isinstance(message, FetchSnapshotResponse)
            or message.diverging is not None
            or message.snapshot_id is not None
        )
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(situation=st.sampled_from(sorted(SITUATIONS)), inputs=INPUTS)
def test_random_messages_never_stop_a_core_nor_plant_an_unchecked_value(
    situation: str, inputs: list[tuple[int, Message]]
) -> None:
    core = SITUATIONS[situation]()
    now = 10_000
    for sender, message in inputs:
        now += 1
        try:
            core.step(sender, message, now)
        except LogInvariantError:
            assert _kafka_fatal(core, sender, message), (sender, message)
            return
        while (ready := core.ready()) is not None:
            if ready.election_state is not None:
                state = ready.election_state
                assert election_state_problem(state) is None, state
                assert {state.voted_id, state.leader_id} - {None} <= core.voters, state
            for op in ready.log_ops:
                if isinstance(op, AppendBatches):
                    assert all(0 <= b.epoch <= core.epoch for b in op.batches), op
            for outbound in (*ready.messages, *ready.messages_after_persist):
                sent = outbound.message
                if isinstance(sent, FetchSnapshotResponse) and not sent.data:
                    sent = replace(sent, chunk_length=0)  # the runtime fills the chunk
                assert message_problem(sent) is None, outbound
            core.advance(ready, now)
        assert 0 <= core.epoch < EPOCH_LIMIT
