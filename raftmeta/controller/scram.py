"""AlterUserScramCredentials and DescribeUserScramCredentials against the image: Kafka's
``ScramControlManager`` and ``ScramImage.describe``.

An alteration is checked per user, as Kafka does: a user whose deletions or upsertions hold an
unknown mechanism (UNSUPPORTED_SASL_MECHANISM), an empty name or an iteration count outside
4096..16384 (UNACCEPTABLE_CREDENTIAL), a deletion of a credential that does not exist
(RESOURCE_NOT_FOUND), or the same (user, mechanism) twice (DUPLICATE_RESOURCE) changes nothing
at all; every other user's changes are written together in one batch. The controller derives
the StoredKey and ServerKey from the SaltedPassword the client sent, so the password never
reaches it and the SaltedPassword is never written. A cluster whose ``metadata.version`` is
finalized below 3.5-IV2 (level 11, the first with SCRAM records) refuses with
UNSUPPORTED_VERSION.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from raftmeta.common.features import METADATA_VERSION
from raftmeta.common.items import OK, ItemError
from raftmeta.common.scram import (
    AlterScramRequest,
    ScramCredentialInfo,
    ScramDeletion,
    ScramUpsertion,
    ScramUserDescription,
    ScramUserResult,
)
from raftmeta.controller.result import ControllerResult
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage
from raftmeta.records import (
    Record,
    RemoveUserScramCredentialRecord,
    UserScramCredentialRecord,
)
from raftmeta.security.scram import (
    ScramCredential,
    ScramMechanism,
    credential_from_salted_password,
    iterations_problem,
)

log = logging.getLogger(__name__)

SCRAM_METADATA_VERSION = 11
"""3.5-IV2: the first ``metadata.version`` with SCRAM credential records."""

DUPLICATE = ItemError(
    ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request"
)
UNKNOWN_MECHANISM = ItemError(ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
EMPTY_NAME = ItemError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
DELETE_MISSING = ItemError(
    ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
)
DESCRIBE_MISSING = "Attempt to describe a user credential that does not exist: "
DESCRIBE_DUPLICATE = (
    "Cannot describe SCRAM credentials for the same user twice in a single request: "
)


def credential_record(name: str, mechanism: int, credential: ScramCredential) -> Record:
    return UserScramCredentialRecord(
        name,
        mechanism,
        credential.salt,
        credential.stored_key,
        credential.server_key,
        credential.iterations,
    )


def _deletion_problem(image: MetadataImage, deletion: ScramDeletion) -> ItemError | None:
    if ScramMechanism.of(deletion.mechanism) is ScramMechanism.UNKNOWN:
        return UNKNOWN_MECHANISM
    if not deletion.name:
        return EMPTY_NAME
    if image.scram.credential(deletion.name, deletion.mechanism) is None:
        return DELETE_MISSING
    return None


def _upsertion_problem(upsertion: ScramUpsertion) -> ItemError | None:
    if ScramMechanism.of(upsertion.mechanism) is ScramMechanism.UNKNOWN:
        return UNKNOWN_MECHANISM
    if not upsertion.name:
        return EMPTY_NAME
    problem = iterations_problem(upsertion.iterations)
    if problem is not None:
        return ItemError(ErrorCode.UNACCEPTABLE_CREDENTIAL, problem)
    if not upsertion.salt or not upsertion.salted_password:
        # Kafka's clients always send both; an empty one would make a key anyone can compute.
        return ItemError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Salt and salted password are required")
    return None


class ScramControlManager:
    """The SCRAM policy of the controller. Holds nothing."""

    def alter_credentials(
        self, image: MetadataImage, request: AlterScramRequest
    ) -> ControllerResult[list[ScramUserResult]]:
        """One result per user named, in the order users first appear (deletions first);
        the permitted changes in one atomic batch."""
        level = image.features.get(METADATA_VERSION)
        if level is not None and level < SCRAM_METADATA_VERSION:
            refused = ItemError(
                ErrorCode.UNSUPPORTED_VERSION, "The current metadata.version does not support SCRAM"
            )
            return ControllerResult((), [ScramUserResult(u, refused) for u in _users(request)])
        errors: dict[str, ItemError] = {}
        seen: set[tuple[str, int]] = set()
        changes: list[tuple[str, Record]] = []

        def check(name: str, mechanism: int, problem: ItemError | None) -> bool:
            if name in errors:
                return False
            if problem is None and (name, mechanism) in seen:
                problem = DUPLICATE
            seen.add((name, mechanism))
            if problem is not None:
                errors[name] = problem
                return False
            return True

        for deletion in request.deletions:
            if check(deletion.name, deletion.mechanism, _deletion_problem(image, deletion)):
                changes.append(
                    (
                        deletion.name,
                        RemoveUserScramCredentialRecord(deletion.name, deletion.mechanism),
                    )
                )
        for upsertion in request.upsertions:
            if check(upsertion.name, upsertion.mechanism, _upsertion_problem(upsertion)):
                mechanism = ScramMechanism(upsertion.mechanism)
                credential = credential_from_salted_password(
                    mechanism, upsertion.salt, upsertion.salted_password, upsertion.iterations
                )
                changes.append(
                    (upsertion.name, credential_record(upsertion.name, mechanism, credential))
                )
        records = tuple(record for name, record in changes if name not in errors)
        results = [ScramUserResult(user, errors.get(user, OK)) for user in _users(request)]
        for result in results:
            if result.error.ok:
                log.info("altering the SCRAM credentials of user %r", result.user)
            else:
                log.info(
                    "AlterUserScramCredentials refused user %r: %s",
                    result.user,
                    result.error.message,
                )
        return ControllerResult(records, results)

    def describe_credentials(
        self, image: MetadataImage, users: Sequence[str] | None
    ) -> list[ScramUserDescription]:
        """Every user holding a credential when ``users`` is None or empty (sorted), else
        each user named, once, in request order."""
        scram = image.scram
        if not users:
            return [_described(user, scram.of_user(user)) for user in scram.users()]
        counts: dict[str, int] = {}
        for user in users:
            counts[user] = counts.get(user, 0) + 1
        answers: list[ScramUserDescription] = []
        for user, count in counts.items():
            if count > 1:
                error = ItemError(ErrorCode.DUPLICATE_RESOURCE, DESCRIBE_DUPLICATE + user)
                answers.append(ScramUserDescription(user, error))
                continue
            held = scram.of_user(user)
            if not held:
                error = ItemError(ErrorCode.RESOURCE_NOT_FOUND, DESCRIBE_MISSING + user)
                answers.append(ScramUserDescription(user, error))
                continue
            answers.append(_described(user, held))
        return answers

    def bootstrap_credentials(
        self, image: MetadataImage, credentials: Iterable[Record]
    ) -> tuple[Record, ...]:
        """The credentials ``format --add-scram`` chose, for a log that holds none yet."""
        return () if len(image.scram) else tuple(credentials)


def _described(user: str, held: Sequence[UserScramCredentialRecord]) -> ScramUserDescription:
    return ScramUserDescription(
        user,
        OK,
        tuple(ScramCredentialInfo(record.mechanism, record.iterations) for record in held),
    )


def _users(request: AlterScramRequest) -> list[str]:
    """Each user the request names, once, in the order first named."""
    names = [d.name for d in request.deletions] + [u.name for u in request.upsertions]
    return list(dict.fromkeys(names))
