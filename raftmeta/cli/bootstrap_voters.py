"""The first voter set of a dynamic quorum, as ``raftmeta format`` takes it (KIP-853).

``--standalone`` makes the formatted controller the only voter; ``--initial-controllers``
names every first voter as ``id@host:port:directory-id`` (Kafka's form), the formatted node
among them under the directory id it is given; ``--no-initial-controllers`` writes no set: the
controller starts as an observer, learns the voters from ``controller.quorum.bootstrap.servers``
and joins with ``raftmeta quorum add-controller``.
"""

from __future__ import annotations

from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.raft.membership import Membership
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter, VoterSet

CONTROLLER_ENDPOINT = "CONTROLLER"


def parse_initial_controllers(text: str) -> VoterSet:
    """``id@host:port:directory-id,...``; ``ValueError`` naming the entry that is wrong."""
    from raftmeta.storage.meta_properties import check_id

    voters: list[Voter] = []
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        node_text, at, rest = entry.partition("@")
        address, colon, directory_id = rest.rpartition(":")
        host, colon2, port_text = address.rpartition(":")
        host = host.strip("[]")
        if (
            not at
            or not colon
            or not colon2
            or not node_text.isdigit()
            or not host
            or not port_text.isdigit()
            or not 0 < int(port_text) < 65536
        ):
            raise ValueError(f"entry '{entry}' is not id@host:port:directory-id")
        check_id("directory id", directory_id)
        voters.append(
            Voter(
                ReplicaKey(int(node_text), directory_id),
                (Endpoint(CONTROLLER_ENDPOINT, host, int(port_text)),),
            )
        )
    if not voters:
        raise ValueError("no controllers listed (expected id@host:port:directory-id,...)")
    try:
        return VoterSet(voters)
    except ValueError as error:
        raise ValueError(str(error)) from None


def standalone(node_id: int, directory_id: str, host: str, port: int) -> VoterSet:
    return VoterSet(
        [Voter(ReplicaKey(node_id, directory_id), (Endpoint(CONTROLLER_ENDPOINT, host, port),))]
    )


def dynamic(voters: VoterSet) -> Membership:
    return Membership(KRAFT_VERSION_DYNAMIC, voters)
