"""The voter sets kept outside the log: the bootstrap checkpoint and each snapshot's."""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.raft.batch import SnapshotId
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.raft.membership import Membership
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter, VoterSet
from raftmeta.storage.errors import MetadataDirError
from raftmeta.storage.membership_files import (
    bootstrap_path,
    log_start_membership,
    read_membership,
    snapshot_voters_path,
    write_membership,
    write_snapshot_membership,
)

THREE = Membership(
    KRAFT_VERSION_DYNAMIC,
    VoterSet(
        Voter(ReplicaKey(i, f"dir{i}"), (Endpoint("CONTROLLER", "127.0.0.1", 9090 + i),))
        for i in (1, 2, 3)
    ),
)
TWO = Membership(KRAFT_VERSION_DYNAMIC, THREE.voters.without(3))


def test_a_written_set_reads_back_whole(tmp_path: Path) -> None:
    path = bootstrap_path(tmp_path)
    assert read_membership(path) is None
    write_membership(path, THREE)
    assert read_membership(path) == THREE


def test_a_damaged_file_is_refused_not_read_as_another_set(tmp_path: Path) -> None:
    path = bootstrap_path(tmp_path)
    write_membership(path, THREE)
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(MetadataDirError, match="damaged voter set"):
        read_membership(path)


def test_the_latest_snapshot_set_wins_over_the_bootstrap_and_older_ones_go(tmp_path: Path) -> None:
    write_membership(bootstrap_path(tmp_path), THREE)
    assert log_start_membership(tmp_path, None) == THREE
    gone, older, newer = SnapshotId(5, 1), SnapshotId(10, 1), SnapshotId(20, 2)
    (tmp_path / f"{older.file_stem()}.checkpoint").write_bytes(b"")  # still on disk
    write_snapshot_membership(tmp_path, gone, THREE)
    write_snapshot_membership(tmp_path, older, THREE)
    write_snapshot_membership(tmp_path, newer, TWO)
    assert log_start_membership(tmp_path, newer) == TWO
    # A crash before the newer snapshot was published leaves the older one the latest: its
    # set must still be there. Sets of snapshots no longer on disk go.
    assert log_start_membership(tmp_path, older) == THREE
    assert not snapshot_voters_path(tmp_path, gone).exists()
    # A snapshot with no set beside it (a static quorum's) starts from the bootstrap's.
    assert log_start_membership(tmp_path, SnapshotId(30, 2)) == THREE


def test_a_static_directory_has_no_set(tmp_path: Path) -> None:
    assert log_start_membership(tmp_path, SnapshotId(5, 1)) is None
