"""Where a fetching replica's log stands against the leader's (KIP-595, KIP-630).

A fetch names the follower's log end and the epoch of its last entry. The leader answers one
of three ways: carry on from there, truncate back to where our logs agree (the diverging
epoch), or start over from a snapshot because the records it needs were compacted away.
"""

from __future__ import annotations

from dataclasses import dataclass

from raftmeta.raft.batch import OffsetAndEpoch, SnapshotId
from raftmeta.raft.log import RaftLog


@dataclass(frozen=True, slots=True)
class FetchPosition:
    diverging: OffsetAndEpoch | None = None
    snapshot_id: SnapshotId | None = None

    @property
    def valid(self) -> bool:
        return self.diverging is None and self.snapshot_id is None


VALID = FetchPosition()


def check_fetch_position(
    log: RaftLog,
    latest_snapshot: SnapshotId | None,
    fetch_offset: int,
    last_fetched_epoch: int,
) -> FetchPosition:
    start = log.snapshot
    if (
        start is not None
        and latest_snapshot is not None
        and (
            fetch_offset < log.start_offset
            or (fetch_offset == log.start_offset and last_fetched_epoch != start.epoch)
            or last_fetched_epoch < start.epoch
        )
    ):
        return FetchPosition(snapshot_id=latest_snapshot)
    if fetch_offset == 0 and log.start_offset == 0:
        return VALID
    end = log.end_offset_for_epoch(last_fetched_epoch)
    if (
        end.epoch != last_fetched_epoch
        or end.offset < fetch_offset
        or not log.is_batch_boundary(fetch_offset)
    ):
        # No epoch at or below the follower's: it must start again from our log start.
        diverging = end if end.epoch >= 0 else OffsetAndEpoch(log.start_offset, 0)
        return FetchPosition(diverging=diverging)
    return VALID
