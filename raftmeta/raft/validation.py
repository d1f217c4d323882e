"""Range checks on every Raft message, done once where a message enters a node.

A peer's message is input, never trusted: an epoch at the int32 limit, a negative offset or a
``max_bytes`` of zero must be refused before the core acts on it, or a single packet can be
persisted and brick a node for good (issue 12). These checks need nothing but the message, so
the runtime can run the same function at the wire edge; the core runs it at the top of
``step`` and then checks what only it can (membership, what it knows of the current epoch).

Every refusal is Kafka's INVALID_REQUEST with a one-line reason; ``refusal_response`` builds
the answer a refused request gets, with echoed fields clamped into range so the answer itself
can always be encoded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from raftmeta.errors import ErrorCode
from raftmeta.raft.batch import Batch, OffsetAndEpoch, SnapshotId
from raftmeta.raft.limits import (
    EPOCH_LIMIT,
    INT32_MAX,
    MAX_OFFSET,
    epoch_in_range,
    node_id_in_range,
    offset_in_range,
)
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
    Request,
    Response,
    VoteRequest,
    VoteResponse,
)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a message was refused: the Kafka code its sender gets, and a line for the log."""

    error: ErrorCode
    reason: str


def _invalid(reason: str) -> Refusal:
    return Refusal(ErrorCode.INVALID_REQUEST, reason)


def _epoch(name: str, value: int) -> Refusal | None:
    if epoch_in_range(value):
        return None
    return _invalid(f"{name} {value} is outside 0..{EPOCH_LIMIT - 1}")


def _offset(name: str, value: int) -> Refusal | None:
    if offset_in_range(value):
        return None
    return _invalid(f"{name} {value} is outside 0..{MAX_OFFSET}")


def _node(name: str, value: int | None) -> Refusal | None:
    if value is None or node_id_in_range(value):
        return None
    return _invalid(f"{name} {value} is not a node id")


def _positive_int32(name: str, value: int) -> Refusal | None:
    if 0 < value <= INT32_MAX:
        return None
    return _invalid(f"{name} {value} is outside 1..{INT32_MAX}")


def _first(checks: Iterable[Refusal | None]) -> Refusal | None:
    return next((check for check in checks if check is not None), None)


def _snapshot(name: str, snapshot_id: SnapshotId | None) -> Refusal | None:
    if snapshot_id is None:
        return None
    return _first(
        (
            _offset(f"{name} end offset", snapshot_id.end_offset),
            _epoch(f"{name} epoch", snapshot_id.epoch),
        )
    )


def _diverging(value: OffsetAndEpoch | None) -> Refusal | None:
    if value is None:
        return None
    return _first(
        (_offset("diverging end offset", value.offset), _epoch("diverging epoch", value.epoch))
    )


def _batches(batches: tuple[Batch, ...]) -> Refusal | None:
    for batch in batches:
        problem = _first(
            (
                _offset("batch base offset", batch.base_offset),
                _epoch("batch epoch", batch.epoch),
                None if batch.record_count > 0 else _invalid("a batch holds no records"),
                _offset("batch last offset", batch.last_offset),
            )
        )
        if problem is not None:
            return problem
    return None


def message_problem(message: Message) -> Refusal | None:
    """Why ``message`` carries a value no node may act on, or None when every field is in
    range. Needs nothing but the message."""
    if isinstance(message, VoteRequest):
        problem = _first(
            (
                _epoch("candidate epoch", message.candidate_epoch),
                _node("candidate id", message.candidate_id),
                _epoch("last offset epoch", message.last_offset_epoch),
                _offset("last offset", message.last_offset),
            )
        )
        if problem is None and message.last_offset_epoch >= message.candidate_epoch:
            # Kafka's rule: a candidate's last entry is from an earlier epoch than its own.
            problem = _invalid(
                f"last offset epoch {message.last_offset_epoch} is not below candidate epoch "
                f"{message.candidate_epoch}"
            )
        return problem
    if isinstance(message, BeginQuorumEpochRequest):
        return _first(
            (_node("leader id", message.leader_id), _epoch("leader epoch", message.leader_epoch))
        )
    if isinstance(message, EndQuorumEpochRequest):
        successors = message.preferred_successors
        return _first(
            (
                _node("leader id", message.leader_id),
                _epoch("leader epoch", message.leader_epoch),
                *(_node("preferred successor", s) for s in successors),
                None if len(set(successors)) == len(successors) else _invalid("a successor twice"),
            )
        )
    if isinstance(message, FetchRequest):
        return _first(
            (
                _epoch("current leader epoch", message.current_leader_epoch),
                _offset("fetch offset", message.fetch_offset),
                _epoch("last fetched epoch", message.last_fetched_epoch),
                None
                if 0 <= message.max_wait_ms <= INT32_MAX
                else _invalid(f"max wait {message.max_wait_ms} ms is out of range"),
                _positive_int32("max bytes", message.max_bytes),
            )
        )
    if isinstance(message, FetchSnapshotRequest):
        return _first(
            (
                _epoch("current leader epoch", message.current_leader_epoch),
                _snapshot("snapshot", message.snapshot_id),
                _offset("position", message.position),
                _positive_int32("max bytes", message.max_bytes),
            )
        )
    return _response_problem(message)


def _response_problem(response: Response) -> Refusal | None:
    common = _first((_epoch("epoch", response.epoch), _node("leader id", response.leader_id)))
    if common is not None:
        return common
    if isinstance(response, VoteResponse):
        return _epoch("candidate epoch", response.candidate_epoch)
    if isinstance(response, FetchResponse):
        return _first(
            (
                _offset("fetch offset", response.fetch_offset),
                None
                if -1 <= response.high_watermark <= MAX_OFFSET
                else _invalid(f"high watermark {response.high_watermark} is out of range"),
                _offset("log start offset", response.log_start_offset),
                _batches(response.batches),
                _diverging(response.diverging),
                _snapshot("snapshot", response.snapshot_id),
            )
        )
    if isinstance(response, FetchSnapshotResponse):
        return _first(
            (
                _snapshot("snapshot", response.snapshot_id),
                _offset("position", response.position),
                _offset("size", response.size),
                None
                if response.chunk_length == len(response.data)
                else _invalid(
                    f"chunk of {len(response.data)} bytes says it holds {response.chunk_length}"
                ),
                None
                if not response.data or response.position + len(response.data) <= response.size
                else _invalid("chunk runs past the end of the snapshot"),
            )
        )
    return None


def _clamp(value: int, high: int) -> int:
    return min(max(value, 0), high)


def refusal_response(
    request: Request, error: ErrorCode, epoch: int, leader_id: int | None
) -> Response:
    """The answer to a refused request, from a node at ``epoch`` that knows ``leader_id``."""
    if isinstance(request, VoteRequest):
        echoed = _clamp(request.candidate_epoch, EPOCH_LIMIT - 1)
        return VoteResponse(error, epoch, leader_id, False, echoed, request.pre_vote)
    if isinstance(request, BeginQuorumEpochRequest):
        return BeginQuorumEpochResponse(error, epoch, leader_id)
    if isinstance(request, EndQuorumEpochRequest):
        return EndQuorumEpochResponse(error, epoch, leader_id)
    if isinstance(request, FetchRequest):
        return FetchResponse(error, epoch, leader_id, _clamp(request.fetch_offset, MAX_OFFSET))
    snapshot_id = SnapshotId(
        _clamp(request.snapshot_id.end_offset, MAX_OFFSET),
        _clamp(request.snapshot_id.epoch, EPOCH_LIMIT - 1),
    )
    return FetchSnapshotResponse(
        error, epoch, leader_id, snapshot_id, _clamp(request.position, MAX_OFFSET)
    )
