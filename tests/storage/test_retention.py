"""Retention: the log below the latest snapshot is kept until it is over
``metadata.max.retention.bytes`` or older than ``metadata.max.retention.ms``."""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.raft.batch import SnapshotId
from raftmeta.storage.data_dir import MetadataDir
from raftmeta.storage.retention import NO_LIMIT, LogRetention, retained_start
from raftmeta.storage.snapshots import list_snapshots

from .support import batch_run

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
KEEP_ALL = LogRetention(max_bytes=NO_LIMIT, max_age_ms=NO_LIMIT)


def _directory_with_snapshots(
    tmp_path: Path, retention: LogRetention, now_ms: int
) -> tuple[Path, int]:
    """Four one-batch segments (offsets 0-11, timestamps = base offsets) and snapshots at 3, 6
    and 9 taken in turn; returns the root and the size of one segment."""
    root = tmp_path / "metadata"
    MetadataDir.format(root, 1, CLUSTER)
    with MetadataDir.open(root, 1, segment_bytes=1, retention=retention) as opened:
        opened.log.append(batch_run(0, [1, 1, 1, 1]))
        opened.log.flush()
        segment_size = opened.log.segment_paths()[0].stat().st_size
        for end in (3, 6, 9):
            writer = opened.snapshot_writer(SnapshotId(end, 1), created_ms=1)
            writer.append([b"state"])
            writer.freeze()
            opened.snapshot_taken(SnapshotId(end, 1), now_ms=now_ms)
    return root, segment_size


def test_with_no_limits_the_whole_log_stays(tmp_path: Path) -> None:
    root, _ = _directory_with_snapshots(tmp_path, KEEP_ALL, now_ms=10**12)
    # (the log starts at 0, so no snapshot is needed to replay it: only the latest stays)
    with MetadataDir.open(root, 1, segment_bytes=1, retention=KEEP_ALL) as opened:
        assert opened.log.log_start_offset == 0
        assert len(opened.log.segment_paths()) == 4
        assert opened.replay_start_offset == 9
        assert list_snapshots(opened.partition_dir) == [SnapshotId(9, 1)]


def test_the_size_limit_deletes_oldest_segments_one_snapshot_at_a_time(tmp_path: Path) -> None:
    _, segment_size = _directory_with_snapshots(tmp_path / "probe", KEEP_ALL, now_ms=0)
    # Room for two and a half segments: the log sheds whole snapshot intervals until it fits.
    retention = LogRetention(max_bytes=segment_size * 5 // 2, max_age_ms=NO_LIMIT)
    root, _ = _directory_with_snapshots(tmp_path, retention, now_ms=0)
    with MetadataDir.open(root, 1, segment_bytes=1, retention=retention) as opened:
        assert opened.log.log_start_offset == 6
        assert len(opened.log.segment_paths()) == 2
        # The snapshot the log starts at stays, so the history kept is replayable.
        assert list_snapshots(opened.partition_dir) == [SnapshotId(6, 1), SnapshotId(9, 1)]
        assert opened.replay_start_offset == 9
        assert [b.base_offset for b in opened.log.batches()] == [6, 9]


def test_the_time_limit_deletes_what_is_older_and_never_passes_the_snapshot(
    tmp_path: Path,
) -> None:
    # Batches at timestamps 0, 3, 6 and 9; at 104 with a 100 ms limit, 0 and 3 are too old.
    retention = LogRetention(max_bytes=NO_LIMIT, max_age_ms=100)
    root, _ = _directory_with_snapshots(tmp_path, retention, now_ms=104)
    with MetadataDir.open(root, 1, segment_bytes=1, retention=retention) as opened:
        assert opened.log.log_start_offset == 6
        assert list_snapshots(opened.partition_dir) == [SnapshotId(6, 1), SnapshotId(9, 1)]
    # Everything old: the log still starts no later than the latest snapshot.
    root, _ = _directory_with_snapshots(tmp_path / "old", retention, now_ms=10**9)
    with MetadataDir.open(root, 1, segment_bytes=1, retention=retention) as opened:
        assert opened.log.log_start_offset == 9
        assert list_snapshots(opened.partition_dir) == [SnapshotId(9, 1)]
        assert [b.base_offset for b in opened.log.batches()] == [9]


def test_retained_start_stops_at_the_first_snapshot_within_both_limits() -> None:
    sizes = {0: 400, 3: 300, 6: 200, 9: 100}

    def start(retention: LogRetention, now_ms: int) -> int:
        return retained_start(
            retention, 0, [3, 6, 9], sizes.__getitem__, lambda end: end - 3, now_ms
        )

    assert start(KEEP_ALL, 10**9) == 0
    assert start(LogRetention(max_bytes=250, max_age_ms=NO_LIMIT), 0) == 6
    assert start(LogRetention(max_bytes=NO_LIMIT, max_age_ms=10), 14) == 6
    assert start(LogRetention(max_bytes=0, max_age_ms=0), 0) == 9
    with pytest.raises(ValueError, match="-1"):
        LogRetention(max_bytes=-2)


def test_a_server_reads_both_limits_from_its_configuration(tmp_path: Path) -> None:
    from raftmeta.config.node import parse_config
    from raftmeta.quorum.settings import NodeSettings

    base: dict[str, str | int] = {
        "node.id": 1,
        "controller.quorum.voters": "1@127.0.0.1:9093",
        "metadata.log.dir": str(tmp_path),
    }
    assert NodeSettings.from_config(parse_config(base)).retention == LogRetention(
        max_bytes=100 << 20, max_age_ms=7 * 24 * 3600 * 1000
    )
    configured = parse_config(
        {**base, "metadata.max.retention.bytes": -1, "metadata.max.retention.ms": 60000}
    )
    assert NodeSettings.from_config(configured).retention == LogRetention(
        max_bytes=NO_LIMIT, max_age_ms=60000
    )


def test_snapshots_between_the_log_start_and_the_latest_go(tmp_path: Path) -> None:
    """The log start's snapshot and the latest stay; one in between serves nothing."""
    retention = LogRetention(max_bytes=NO_LIMIT, max_age_ms=100)
    root = tmp_path / "metadata"
    MetadataDir.format(root, 1, CLUSTER)
    with MetadataDir.open(root, 1, segment_bytes=1, retention=retention) as opened:
        opened.log.append(batch_run(0, [1, 1, 1, 1, 1]))
        for end, now_ms in ((3, 104), (6, 0), (9, 0), (12, 0)):
            writer = opened.snapshot_writer(SnapshotId(end, 1), created_ms=1)
            writer.append([b"state"])
            writer.freeze()
            opened.snapshot_taken(SnapshotId(end, 1), now_ms=now_ms)
        assert opened.log.log_start_offset == 3
        assert list_snapshots(opened.partition_dir) == [SnapshotId(3, 1), SnapshotId(12, 1)]
