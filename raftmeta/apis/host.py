"""What the API layer sees of its node, and how it says "not the active controller".

:class:`ControllerHost` is a protocol this layer owns: the controller node satisfies it, and
neither this layer nor the wire adapters above it import the node.
"""

from __future__ import annotations

from typing import Protocol

from raftmeta.auth import AccessControl
from raftmeta.controller import NotControllerError, QuorumController
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.quorum.identity import IdentityRule
from raftmeta.quorum.node import RaftNode


class ControllerHost(Protocol):
    """The node the API layer answers for, as it needs to see it."""

    @property
    def node_id(self) -> int: ...

    @property
    def node(self) -> RaftNode:
        """The Raft node, for DescribeQuorum, which any voter answers."""
        ...

    @property
    def access(self) -> AccessControl: ...

    @property
    def identity(self) -> IdentityRule:
        """Which certificate may make which call (off without client certificates)."""
        ...

    @property
    def maybe_controller(self) -> QuorumController | None:
        """The controller, once the node has one (``None`` while it starts)."""
        ...

    def endpoint_of(self, node_id: int | None) -> str:
        """Where voter ``node_id`` serves ("" if not known)."""
        ...


class NotActiveController(KafkaError):
    """NOT_CONTROLLER from a node that is not the active controller, naming the one it
    believes is (``controller_id`` ``None``: none known) and where it serves."""

    def __init__(self, controller_id: int | None, controller_endpoint: str) -> None:
        super().__init__(ErrorCode.NOT_CONTROLLER, NotControllerError(controller_id).message)
        self.controller_id = controller_id
        self.controller_endpoint = controller_endpoint
