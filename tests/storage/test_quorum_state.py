from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from raftmeta.raft.state import ElectionState
from raftmeta.storage.errors import QuorumStateError
from raftmeta.storage.quorum_state import QuorumStateStore


def test_a_missing_file_is_a_node_that_never_voted(tmp_path: Path) -> None:
    assert QuorumStateStore(tmp_path / "quorum-state").read() == ElectionState()


@pytest.mark.parametrize(
    "state",
    [
        ElectionState(),
        ElectionState(epoch=5, voted_id=2),
        ElectionState(epoch=6, voted_id=2, leader_id=2),
        ElectionState(epoch=7, leader_id=0),
        ElectionState(epoch=8, voted_id=3, voted_directory_id="J8aAPcfLQt2bqs1JT_rMgQ"),
    ],
)
def test_round_trip(tmp_path: Path, state: ElectionState) -> None:
    store = QuorumStateStore(tmp_path / "quorum-state")
    store.write(state)
    assert QuorumStateStore(store.path).read() == state


def test_file_uses_kafka_field_names_and_minus_one_for_none(tmp_path: Path) -> None:
    store = QuorumStateStore(tmp_path / "quorum-state")
    store.write(ElectionState(epoch=3, voted_id=1))
    assert json.loads(store.path.read_text()) == {
        "leaderId": -1,
        "leaderEpoch": 3,
        "votedId": 1,
        "data_version": 1,
    }


def test_write_replaces_by_rename_and_leaves_no_temp_file(tmp_path: Path) -> None:
    store = QuorumStateStore(tmp_path / "quorum-state")
    store.write(ElectionState(epoch=1))
    first_inode = os.stat(store.path).st_ino
    store.write(ElectionState(epoch=2, voted_id=3))
    assert os.stat(store.path).st_ino != first_inode  # a new file, renamed over the old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quorum-state"]
    assert store.read() == ElectionState(epoch=2, voted_id=3)


def test_a_stale_temp_file_does_not_matter(tmp_path: Path) -> None:
    store = QuorumStateStore(tmp_path / "quorum-state")
    store.write(ElectionState(epoch=4, voted_id=1))
    (tmp_path / "quorum-state.tmp").write_text("{half a wri")
    assert store.read() == ElectionState(epoch=4, voted_id=1)
    store.write(ElectionState(epoch=5))
    assert store.read() == ElectionState(epoch=5)


def test_unknown_keys_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "quorum-state"
    path.write_text(
        '{"leaderId": 1, "leaderEpoch": 9, "votedId": 1, "votedDirectoryId": null, '
        '"data_version": 1}'
    )
    assert QuorumStateStore(path).read() == ElectionState(epoch=9, voted_id=1, leader_id=1)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "not JSON"),
        ('{"leaderId": 1', "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"leaderId": -1, "leaderEpoch": 2, "votedId": -1}', "data_version None"),
        ('{"leaderId": -1, "leaderEpoch": 2, "votedId": -1, "data_version": 0}', "data_version 0"),
        ('{"leaderId": -1, "leaderEpoch": "2", "votedId": -1, "data_version": 1}', "leaderEpoch"),
        ('{"leaderId": -1, "leaderEpoch": -1, "votedId": -1, "data_version": 1}', "negative"),
        ('{"leaderId": -1, "leaderEpoch": 2, "data_version": 1}', "votedId is None"),
        ('{"leaderId": -7, "leaderEpoch": 2, "votedId": -1, "data_version": 1}', "below -1"),
        ('{"leaderId": true, "leaderEpoch": 2, "votedId": -1, "data_version": 1}', "leaderId"),
    ],
)
def test_a_corrupt_file_is_a_one_line_error_never_a_reset(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / "quorum-state"
    path.write_text(text)
    with pytest.raises(QuorumStateError) as caught:
        QuorumStateStore(path).read()
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message and reason in message
    assert path.read_text() == text  # nothing was overwritten


def test_non_utf8_bytes_are_corruption(tmp_path: Path) -> None:
    path = tmp_path / "quorum-state"
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(QuorumStateError, match="not UTF-8"):
        QuorumStateStore(path).read()


def test_impossible_states_are_not_written(tmp_path: Path) -> None:
    store = QuorumStateStore(tmp_path / "quorum-state")
    with pytest.raises(ValueError):
        store.write(ElectionState(epoch=-1))
    with pytest.raises(ValueError):
        store.write(ElectionState(epoch=1, voted_id=-3))
    assert not store.path.exists()


def test_voted_directory_id_is_written_only_when_known(tmp_path: Path) -> None:
    store = QuorumStateStore(tmp_path / "quorum-state")
    store.write(ElectionState(epoch=3, voted_id=1, voted_directory_id="d1"))
    assert json.loads(store.path.read_text())["votedDirectoryId"] == "d1"
    store.path.write_text(
        '{"leaderId": -1, "leaderEpoch": 3, "votedId": 1, "votedDirectoryId": 5, "data_version": 1}'
    )
    with pytest.raises(QuorumStateError, match="votedDirectoryId"):
        store.read()
