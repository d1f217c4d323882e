"""A node that repairs its directory at start-up says so: an operator must be able to learn that
a disk is going bad from the node's log, not only from the bytes that went missing."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from raftmeta.quorum import NodeSettings, Peers, RaftNode
from raftmeta.raft.batch import make_batch
from raftmeta.raft.state import ElectionState
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR, MetadataDir
from raftmeta.storage.log import FileLog
from raftmeta.storage.quorum_state import QUORUM_STATE_FILE, QuorumStateStore
from tests.quorum.harness import CLUSTER_ID


def _open_node(data_dir: Path) -> None:
    async def main() -> None:
        node = RaftNode(NodeSettings(node_id=1, voters={}, data_dir=data_dir), Peers)
        try:
            await node.open()
        finally:
            await node.stop(graceful=False)

    asyncio.run(main())


def _written_directory(tmp_path: Path) -> tuple[Path, Path, int]:
    """A formatted directory whose log holds three batches of epoch 1, beside the quorum-state
    that learning epoch 1 left; returns it, the segment and the size of the first two batches."""
    MetadataDir.format(tmp_path, 1, CLUSTER_ID)
    QuorumStateStore(tmp_path / METADATA_PARTITION_DIR / QUORUM_STATE_FILE).write(
        ElectionState(epoch=1)
    )
    log = FileLog.open(tmp_path / METADATA_PARTITION_DIR)
    sizes = []
    for index in range(3):
        before = sum(p.stat().st_size for p in (tmp_path / METADATA_PARTITION_DIR).glob("*.log"))
        log.append([make_batch(index * 2, 1, [b"a", b"b"])])
        log.flush()
        after = sum(p.stat().st_size for p in (tmp_path / METADATA_PARTITION_DIR).glob("*.log"))
        sizes.append(after - before)
    log.close()
    (segment,) = (tmp_path / METADATA_PARTITION_DIR).glob("*.log")
    return tmp_path, segment, sizes[0] + sizes[1]


def test_a_torn_tail_is_logged_with_segment_offset_and_bytes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir, segment, keep = _written_directory(tmp_path)
    os.truncate(segment, keep + 5)
    with caplog.at_level(logging.WARNING, logger="raftmeta.quorum.node"):
        _open_node(data_dir)
    (line,) = [r.getMessage() for r in caplog.records if "repaired" in r.getMessage()]
    assert "offset 4" in line
    assert "5 bytes dropped" in line
    assert segment.name in line


def test_a_clean_directory_logs_no_repair(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    data_dir, _segment, _keep = _written_directory(tmp_path)
    with caplog.at_level(logging.WARNING, logger="raftmeta.quorum.node"):
        _open_node(data_dir)
    assert not [r for r in caplog.records if "repaired" in r.getMessage()]
