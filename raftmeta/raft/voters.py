"""Who the voters are: replicas named by (node id, directory id), as KIP-853 names them.

A node id alone cannot tell a voter from the same machine after its disk was wiped: the wiped
node has forgotten its votes and its log, and counting it as the old voter can elect two leaders
in one epoch or lose committed records. Every metadata directory therefore gets a random
directory id when it is formatted, and a voter is the pair. A voter set read from the static
``controller.quorum.voters`` setting knows no directory ids; such an entry matches its node id
with any directory (or none), exactly as Kafka treats a static voter, so directories formatted
before directory ids existed keep working as static voters.

The set is a value: changes (KIP-853's AddVoter, RemoveVoter, UpdateVoter) build a new set,
and ``majorities_overlap`` states the single-change safety rule so both the core's checks and
the simulator's invariant use the same arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from raftmeta.raft.majority import majority_size


@dataclass(frozen=True, slots=True, order=True)
class ReplicaKey:
    """A replica as KIP-853's ReplicaKey: a node id and, when known, its directory id."""

    node_id: int
    directory_id: str | None = None

    def __str__(self) -> str:
        return (
            f"{self.node_id}"
            if self.directory_id is None
            else (f"{self.node_id}:{self.directory_id}")
        )


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One listener a voter can be reached on (VotersRecord's Endpoints entry)."""

    name: str
    host: str
    port: int


@dataclass(frozen=True, slots=True)
class Voter:
    key: ReplicaKey
    endpoints: tuple[Endpoint, ...] = ()

    @property
    def node_id(self) -> int:
        return self.key.node_id


class VoterSet:
    """An immutable set of voters, at most one per node id."""

    __slots__ = ("_by_id", "_ids", "_keys")

    def __init__(self, voters: Iterable[Voter]) -> None:
        by_id: dict[int, Voter] = {}
        for voter in voters:
            if voter.node_id in by_id:
                raise ValueError(f"node {voter.node_id} is a voter twice")
            by_id[voter.node_id] = voter
        self._by_id = by_id
        # Asked on every message; the set never changes, so build these once.
        self._ids = frozenset(by_id)
        self._keys = tuple(by_id[node_id].key for node_id in sorted(by_id))

    @classmethod
    def of(cls, voters: Iterable[int | ReplicaKey | Voter]) -> VoterSet:
        """A set from node ids (static voters, no directory id), keys or voters."""
        built: list[Voter] = []
        for item in voters:
            if isinstance(item, Voter):
                built.append(item)
            elif isinstance(item, ReplicaKey):
                built.append(Voter(item))
            else:
                built.append(Voter(ReplicaKey(item)))
        return cls(built)

    def __iter__(self) -> Iterator[Voter]:
        return iter(self._by_id[node_id] for node_id in sorted(self._by_id))

    def __len__(self) -> int:
        return len(self._by_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VoterSet) and self._by_id == other._by_id

    def __hash__(self) -> int:
        return hash(frozenset(self._by_id.values()))

    def __repr__(self) -> str:
        return "VoterSet(" + ", ".join(str(v.key) for v in self) + ")"

    @property
    def ids(self) -> frozenset[int]:
        return self._ids

    @property
    def keys(self) -> tuple[ReplicaKey, ...]:
        return self._keys

    @property
    def majority(self) -> int:
        return majority_size(len(self._by_id))

    def voter(self, node_id: int) -> Voter | None:
        return self._by_id.get(node_id)

    def key_of(self, node_id: int) -> ReplicaKey | None:
        voter = self._by_id.get(node_id)
        return None if voter is None else voter.key

    def is_voter(self, key: ReplicaKey) -> bool:
        """Whether ``key`` is a voter: same node id, and the same directory id unless this
        set does not know the voter's directory (a static voter)."""
        voter = self._by_id.get(key.node_id)
        if voter is None:
            return False
        known = voter.key.directory_id
        return known is None or known == key.directory_id

    def with_voter(self, voter: Voter) -> VoterSet:
        """This set plus ``voter``, or with ``voter`` replacing the entry for its node id."""
        return VoterSet([*(v for v in self if v.node_id != voter.node_id), voter])

    def without(self, node_id: int) -> VoterSet:
        return VoterSet(v for v in self if v.node_id != node_id)


def majorities_overlap(first: Iterable[ReplicaKey], second: Iterable[ReplicaKey]) -> bool:
    """Whether every majority of ``first`` shares a member with every majority of ``second``.

    Two majorities can be disjoint when each can be made up mostly outside the other set: a
    majority of ``first`` needs ``majority(first) - |first - second|`` members (if positive)
    inside the common part, and likewise for ``second``; if both fit in the common part side
    by side, they need not meet. One change at a time always overlaps; two at once may not.
    """
    a, b = set(first), set(second)
    if not a or not b:
        return False
    common = len(a & b)
    need_a = max(0, majority_size(len(a)) - len(a - b))
    need_b = max(0, majority_size(len(b)) - len(b - a))
    return need_a + need_b > common
