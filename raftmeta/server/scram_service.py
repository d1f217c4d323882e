"""The Admin service's SCRAM calls: DescribeUserScramCredentials and
AlterUserScramCredentials, over the API layer.

A mixin the Admin servicer inherits, as the ACL calls are. What they mean (DESCRIBE / ALTER on
the cluster, Kafka's per-user codes) is :mod:`raftmeta.apis.scram`'s; a failure of the whole
Alter call lands on every user it named too, as Kafka's error response puts it.
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.scram import AlterScramRequest, ScramDeletion, ScramUpsertion
from raftmeta.errors import KafkaError
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server import convert
from raftmeta.server.service_base import ServiceBase


class ScramMethods(ServiceBase):
    """DescribeUserScramCredentials and AlterUserScramCredentials of the ``Admin`` service."""

    async def DescribeUserScramCredentials(
        self, request: apb.DescribeUserScramCredentialsRequest, context: Any
    ) -> apb.DescribeUserScramCredentialsResponse:
        try:
            described = await self.apis.describe_user_scram_credentials(
                self.principal(context), list(request.users), request.timeout_ms
            )
        except KafkaError as error:
            return apb.DescribeUserScramCredentialsResponse(header=convert.failure_header(error))
        return apb.DescribeUserScramCredentialsResponse(
            header=convert.OK_HEADER,
            results=[
                apb.DescribeUserScramCredentialsResult(
                    user=description.user,
                    error_code=int(description.error.code),
                    error_message=description.error.message or "",
                    credential_infos=[
                        apb.ScramCredentialInfo(mechanism=i.mechanism, iterations=i.iterations)
                        for i in description.credentials
                    ],
                )
                for description in described
            ],
        )

    async def AlterUserScramCredentials(
        self, request: apb.AlterUserScramCredentialsRequest, context: Any
    ) -> apb.AlterUserScramCredentialsResponse:
        altered = AlterScramRequest(
            deletions=tuple(ScramDeletion(d.name, d.mechanism) for d in request.deletions),
            upsertions=tuple(
                ScramUpsertion(u.name, u.mechanism, u.iterations, u.salt, u.salted_password)
                for u in request.upsertions
            ),
            timeout_ms=request.timeout_ms,
        )
        try:
            results = await self.apis.alter_user_scram_credentials(self.principal(context), altered)
        except KafkaError as error:
            header = convert.failure_header(error)
            names = [d.name for d in request.deletions] + [u.name for u in request.upsertions]
            return apb.AlterUserScramCredentialsResponse(
                header=header,
                results=[
                    apb.AlterUserScramCredentialsResult(
                        user=name,
                        error_code=header.error_code,
                        error_message=header.error_message,
                    )
                    for name in dict.fromkeys(names)
                ],
            )
        return apb.AlterUserScramCredentialsResponse(
            header=convert.OK_HEADER,
            results=[
                apb.AlterUserScramCredentialsResult(
                    user=result.user,
                    error_code=int(result.error.code),
                    error_message=result.error.message or "",
                )
                for result in results
            ],
        )
