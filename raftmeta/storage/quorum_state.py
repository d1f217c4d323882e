"""The ``quorum-state`` file: the election state a voter must never forget.

A vote that is forgotten in a crash can be cast twice in one epoch, which lets two leaders be
elected. So the file is replaced atomically (temp file, fsync, rename, directory fsync) before
any vote is answered, and a file that cannot be read is an error the operator must resolve: a
silent reset to "no vote" is exactly the double-vote bug.

The JSON mirrors Kafka's file at ``data_version`` 1, with -1 for "none"::

    {"leaderId": 2, "leaderEpoch": 7, "votedId": 3, "votedDirectoryId": "J8aA", "data_version": 1}

``votedDirectoryId`` (KIP-853) is written only when the candidate voted for has a directory id;
a file without it is a vote for a static voter, as files written before it existed are.

Unknown keys are ignored so a later version can add fields a reader of this version skips.
Values outside Kafka's ranges (an epoch that leaves no room for another election, an id that is
not an int32) are refused both ways: never written, and a file holding one is unreadable.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from raftmeta.raft.limits import election_state_problem
from raftmeta.raft.state import ElectionState
from raftmeta.storage.errors import QuorumStateError
from raftmeta.storage.fsutil import write_file_atomically

QUORUM_STATE_FILE = "quorum-state"
DATA_VERSION = 1
_NONE = -1


class QuorumStateStore:
    """Reads and durably replaces one ``quorum-state`` file."""

    __slots__ = ("path",)

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def read(self) -> ElectionState:
        """The stored state; a missing file is a node that never voted (``ElectionState()``)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ElectionState()
        except UnicodeDecodeError:
            raise self._corrupt("not UTF-8 text") from None
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise self._corrupt(f"not JSON ({exc.args[0]})") from None
        if not isinstance(data, dict):
            raise self._corrupt("not a JSON object")
        version = data.get("data_version")
        if version != DATA_VERSION:
            raise self._corrupt(f"unsupported data_version {version!r}")
        epoch = self._field(data, "leaderEpoch")
        if epoch < 0:
            raise self._corrupt(f"leaderEpoch {epoch} is negative")
        voted_id = self._field(data, "votedId")
        leader_id = self._field(data, "leaderId")
        voted_directory_id = data.get("votedDirectoryId")
        if voted_directory_id is not None and not isinstance(voted_directory_id, str):
            raise self._corrupt(f"votedDirectoryId is {voted_directory_id!r}, not a string")
        state = ElectionState(
            epoch=epoch,
            voted_id=None if voted_id == _NONE else voted_id,
            leader_id=None if leader_id == _NONE else leader_id,
            voted_directory_id=voted_directory_id,
        )
        problem = election_state_problem(state)
        if problem is not None:
            raise self._corrupt(problem)
        return state

    def write(self, state: ElectionState) -> None:
        """Replace the file; when this returns, the state survives a power loss."""
        problem = election_state_problem(state)
        if problem is not None:
            raise ValueError(f"refusing to persist {state}: {problem}")
        body: dict[str, object] = {
            "leaderId": _NONE if state.leader_id is None else state.leader_id,
            "leaderEpoch": state.epoch,
            "votedId": _NONE if state.voted_id is None else state.voted_id,
        }
        if state.voted_directory_id is not None:
            body["votedDirectoryId"] = state.voted_directory_id
        body["data_version"] = DATA_VERSION
        write_file_atomically(self.path, json.dumps(body).encode("utf-8"))

    def _field(self, data: dict[str, object], key: str) -> int:
        value = data.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._corrupt(f"{key} is {value!r}, not an integer")
        if value < _NONE:
            raise self._corrupt(f"{key} {value} is below -1")
        return value

    def _corrupt(self, reason: str) -> QuorumStateError:
        return QuorumStateError(
            f"{self.path}: quorum-state is unreadable ({reason}); refusing to guess, since a "
            "forgotten vote could be cast twice in one epoch"
        )
