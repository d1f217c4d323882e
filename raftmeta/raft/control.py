"""Control records the core itself writes and reads (Kafka's control batches).

- ``LeaderChange`` (type 2) opens every epoch. A new leader cannot commit anything until one
  entry of its own epoch is held by a majority (the Raft paper's "commit only entries of your
  own term"); writing this record at once makes the high watermark move quickly and records
  who voted, for operators reading the log.
- ``KRaftVersionRecord`` (type 5) sets ``kraft.version``: 0 is a static voter set from
  ``controller.quorum.voters``, 1 a dynamic one kept in the log (KIP-853).
- ``VotersRecord`` (type 6) is the whole voter set: ids, directory ids and endpoints. It takes
  effect when appended, committed or not, so the latest one in a node's log (or snapshot) is
  that node's voter set; truncating it away restores the one before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import msgpack

from raftmeta.raft.batch import Batch, make_batch
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter, VoterSet

LEADER_CHANGE_TYPE = 2
KRAFT_VERSION_TYPE = 5
VOTERS_TYPE = 6
KRAFT_VERSION_STATIC = 0
KRAFT_VERSION_DYNAMIC = 1
SUPPORTED_KRAFT_VERSIONS = (KRAFT_VERSION_STATIC, KRAFT_VERSION_DYNAMIC)


@dataclass(frozen=True, slots=True)
class LeaderChange:
    leader_id: int
    voters: tuple[int, ...]
    granting_voters: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class KRaftVersionRecord:
    kraft_version: int


@dataclass(frozen=True, slots=True)
class VotersRecord:
    voters: tuple[Voter, ...]

    @property
    def voter_set(self) -> VoterSet:
        return VoterSet(self.voters)


ControlRecord = LeaderChange | KRaftVersionRecord | VotersRecord


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


def encode_kraft_version(kraft_version: int) -> bytes:
    return msgpack.packb([KRAFT_VERSION_TYPE, 0, kraft_version])  # type: ignore[no-any-return]


def encode_voters(voters: VoterSet) -> bytes:
    entries = [
        [
            voter.node_id,
            voter.key.directory_id,
            [[e.name, e.host, e.port] for e in voter.endpoints],
            # The kraft.version range the voter supports (KRaftVersionFeature {Min, Max}).
            [KRAFT_VERSION_STATIC, KRAFT_VERSION_DYNAMIC],
        ]
        for voter in voters
    ]
    return msgpack.packb([VOTERS_TYPE, 0, entries], use_bin_type=True)  # type: ignore[no-any-return]


def membership_batch(
    base_offset: int,
    epoch: int,
    voters: VoterSet,
    *,
    kraft_version: int | None = None,
    timestamp_ms: int = 0,
) -> Batch:
    """A control batch holding a VotersRecord, after a KRaftVersionRecord when given one."""
    records: list[bytes] = []
    if kraft_version is not None:
        records.append(encode_kraft_version(kraft_version))
    records.append(encode_voters(voters))
    return make_batch(base_offset, epoch, records, timestamp_ms=timestamp_ms, is_control=True)


def decode_control_record(record: bytes) -> ControlRecord:
    """One control record; ``ValueError`` for anything that is not a well-formed one."""
    try:
        fields = msgpack.unpackb(record, raw=False)
    except Exception as error:  # msgpack raises several types for garbage
        raise ValueError(f"undecodable control record: {error}") from None
    if not isinstance(fields, list) or len(fields) < 2:
        raise ValueError(f"unknown control record: {fields!r}"[:200])
    kind = fields[0]
    try:
        if kind == LEADER_CHANGE_TYPE:
            _, _version, leader_id, voters, granting = fields
            return LeaderChange(int(leader_id), tuple(voters), tuple(granting))
        if kind == KRAFT_VERSION_TYPE:
            _, _version, level = fields
            if level not in SUPPORTED_KRAFT_VERSIONS:
                raise ValueError(f"unsupported kraft.version {level!r}")
            return KRaftVersionRecord(int(level))
        if kind == VOTERS_TYPE:
            _, _version, entries = fields
            voters = tuple(_voter(entry) for entry in entries)
            VoterSet(voters)  # refuses a node id listed twice
            return VotersRecord(voters)
    except (TypeError, ValueError) as error:
        raise ValueError(f"malformed control record of type {kind!r}: {error}") from None
    raise ValueError(f"unknown control record: {fields!r}"[:200])


def _voter(entry: Sequence[object]) -> Voter:
    node_id, directory_id, endpoints, _supported = entry
    if not isinstance(node_id, int) or not (directory_id is None or isinstance(directory_id, str)):
        raise ValueError(f"bad voter {entry!r}"[:200])
    if not isinstance(endpoints, list):
        raise ValueError(f"bad endpoints {endpoints!r}"[:200])
    return Voter(
        ReplicaKey(node_id, directory_id),
        tuple(Endpoint(str(name), str(host), int(port)) for name, host, port in endpoints),
    )


def membership_in(batch: Batch) -> tuple[int | None, VoterSet | None]:
    """The kraft.version and voter set a control batch sets (each None if it sets none)."""
    if not batch.is_control:
        return None, None
    kraft_version: int | None = None
    voters: VoterSet | None = None
    for record in batch.records():
        try:
            control = decode_control_record(record)
        except ValueError:
            continue
        if isinstance(control, KRaftVersionRecord):
            kraft_version = control.kraft_version
        elif isinstance(control, VotersRecord):
            voters = control.voter_set
    return kraft_version, voters
