"""AlterUserScramCredentials and DescribeUserScramCredentials, for either wire.

As in Kafka, altering needs ALTER on the cluster and describing needs DESCRIBE (a caller
without it is refused on every user it named, or as a whole for a description). An alteration
is carried out by the active controller and answered once its records commit. A description
is answered by any controller from its committed image, as Kafka's brokers answer it from
theirs; the active controller first waits for its own pending records, so a client that
altered a credential there sees the change.
"""

from __future__ import annotations

from collections.abc import Sequence

from raftmeta.apis.base import CLUSTER_DENIED, CLUSTER_DENIED_ITEM, ApisBase
from raftmeta.apis.retries import timeout_of
from raftmeta.auth import CLUSTER_NAME, Operation, ResourceType
from raftmeta.common.scram import AlterScramRequest, ScramUserDescription, ScramUserResult
from raftmeta.controller import QuorumController
from raftmeta.errors import ErrorCode, KafkaError


class ScramApis(ApisBase):
    async def alter_user_scram_credentials(
        self, principal: str, request: AlterScramRequest
    ) -> list[ScramUserResult]:
        """One result per user named, in the order first named."""

        async def body(controller: QuorumController) -> list[ScramUserResult]:
            if not self.allowed(principal, Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
                users = [d.name for d in request.deletions] + [u.name for u in request.upsertions]
                return [ScramUserResult(user, CLUSTER_DENIED_ITEM) for user in dict.fromkeys(users)]
            if not request.deletions and not request.upsertions:
                return []
            return await controller.alter_user_scram_credentials(
                request, timeout_ms=timeout_of(request.timeout_ms)
            )

        return await self.on_active(body)

    async def describe_user_scram_credentials(
        self, principal: str, users: Sequence[str] | None, timeout_ms: int = 0
    ) -> list[ScramUserDescription]:
        """Every user with a credential when ``users`` is None or empty; CLUSTER_AUTHORIZATION
        _FAILED (raised) without DESCRIBE on the cluster; NOT_CONTROLLER before this node's
        controller runs."""
        controller = self.host.maybe_controller
        if controller is None:
            raise self.inactive(None)
        try:
            if not self.allowed(principal, Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
                raise KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_DENIED)
            if controller.is_active:
                await controller.sync(timeout_ms=timeout_of(timeout_ms))
            return await controller.describe_user_scram_credentials(
                users, timeout_ms=timeout_of(timeout_ms)
            )
        except Exception as error:
            raise self.failure(error) from error
