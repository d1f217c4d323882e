"""Control records the core itself writes: the LeaderChange record that opens every epoch.

A new leader cannot commit anything until one entry of its own epoch is held by a majority
(the Raft paper's "commit only entries of your own term"). Writing this record at once makes
the high watermark move quickly and records who voted, for operators reading the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import msgpack

from raftmeta.raft.batch import Batch, make_batch

LEADER_CHANGE_TYPE = 2


@dataclass(frozen=True, slots=True)
class LeaderChange:
    leader_id: int
    voters: tuple[int, ...]
    granting_voters: tuple[int, ...]


def leader_change_batch(
    base_offset: int,
    epoch: int,
    leader_id: int,
    voters: Iterable[int],
    granting_voters: Iterable[int],
    timestamp_ms: int = 0,
) -> Batch:
    body = msgpack.packb(
        [LEADER_CHANGE_TYPE, 0, leader_id, sorted(voters), sorted(granting_voters)],
        use_bin_type=True,
    )
    return make_batch(base_offset, epoch, [body], timestamp_ms=timestamp_ms, is_control=True)


def decode_control_record(record: bytes) -> LeaderChange:
    fields = msgpack.unpackb(record, raw=False)
    if not isinstance(fields, list) or not fields or fields[0] != LEADER_CHANGE_TYPE:
        raise ValueError(f"unknown control record: {fields!r}"[:200])
    _, _version, leader_id, voters, granting = fields
    return LeaderChange(int(leader_id), tuple(voters), tuple(granting))
