"""DescribeUserScramCredentials (key 50, v0) and AlterUserScramCredentials (key 51, v0), over
the API layer: the only version Kafka 4.x serves of either.

The API layer authorizes, validates and writes; this module only moves fields. An upsertion
arrives salted and iterated (the client computed the SaltedPassword), and a description carries
mechanisms and iteration counts, never a key. A failure of the whole AlterUserScramCredentials
call (NOT_CONTROLLER on a standby, say) lands on every user it named, as Kafka's error response
puts it; DescribeUserScramCredentials has a top-level error code for that.
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.items import ItemError
from raftmeta.common.scram import AlterScramRequest, ScramDeletion, ScramUpsertion
from raftmeta.errors import KafkaError
from raftmeta.server.kafka.context import Fields, KafkaContext, error_fields

DESCRIBE_USER_SCRAM_CREDENTIALS_KEY = 50
ALTER_USER_SCRAM_CREDENTIALS_KEY = 51


def _item_fields(error: ItemError) -> tuple[int, str | None]:
    return int(error.code), None if error.ok else (error.message or error.code.name)


async def describe_user_scram_credentials(
    context: KafkaContext, request: Any, version: int
) -> Fields:
    users = None if request.users is None else [user.name for user in request.users]
    try:
        described = await context.apis.describe_user_scram_credentials(context.principal, users)
    except KafkaError as error:
        failed_code, failed_message = error_fields(error)
        return {"error_code": failed_code, "error_message": failed_message, "results": []}
    results = []
    for description in described:
        code, message = _item_fields(description.error)
        results.append(
            {
                "user": description.user,
                "error_code": code,
                "error_message": message,
                "credential_infos": [
                    {"mechanism": info.mechanism, "iterations": info.iterations}
                    for info in description.credentials
                ],
            }
        )
    return {"error_code": 0, "error_message": None, "results": results}


async def alter_user_scram_credentials(context: KafkaContext, request: Any, version: int) -> Fields:
    altered = AlterScramRequest(
        deletions=tuple(ScramDeletion(d.name, d.mechanism) for d in request.deletions or ()),
        upsertions=tuple(
            ScramUpsertion(
                u.name,
                u.mechanism,
                u.iterations,
                bytes(u.salt or b""),
                bytes(u.salted_password or b""),
            )
            for u in request.upsertions or ()
        ),
    )
    try:
        results = await context.apis.alter_user_scram_credentials(context.principal, altered)
    except KafkaError as error:
        failed_code, failed_message = error_fields(error)
        return alter_user_scram_credentials_failed(request, version, failed_code, failed_message)
    answers = []
    for result in results:
        code, message = _item_fields(result.error)
        answers.append({"user": result.user, "error_code": code, "error_message": message})
    return {"results": answers}


def alter_user_scram_credentials_failed(
    request: Any, version: int, code: int, message: str | None
) -> Fields:
    """Kafka's error response: the code on every user the request named, once each."""
    names = [d.name for d in request.deletions or ()] + [u.name for u in request.upsertions or ()]
    return {
        "results": [
            {"user": name, "error_code": code, "error_message": message}
            for name in dict.fromkeys(names)
        ]
    }
