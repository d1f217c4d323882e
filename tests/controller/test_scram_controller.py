"""AlterUserScramCredentials and DescribeUserScramCredentials as Kafka's ScramControlManager
answers them, and credentials that survive a snapshot."""

from __future__ import annotations

import hashlib

from raftmeta.common.scram import AlterScramRequest, ScramDeletion, ScramUpsertion
from raftmeta.controller.scram import ScramControlManager
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage
from raftmeta.records import (
    FeatureLevelRecord,
    UserScramCredentialRecord,
    decode_record,
)
from raftmeta.security.scram import (
    ScramCredential,
    ScramMechanism,
    credential_from_salted_password,
    salted_password,
)
from raftmeta.security.scram_exchange import ScramClient, ScramServer
from tests.controller.harness import Harness, run_async

SALT = b"salt-salt-salt"
MANAGER = ScramControlManager()


def upsert(name: str, mechanism: int = 1, iterations: int = 4096) -> ScramUpsertion:
    known = ScramMechanism.of(mechanism)
    salted = (
        salted_password(known, "pw", SALT, 4096)
        if known is not ScramMechanism.UNKNOWN
        else hashlib.sha256(b"pw").digest()
    )
    return ScramUpsertion(name, mechanism, iterations, SALT, salted)


def applied(image: MetadataImage, records: tuple[object, ...]) -> MetadataImage:
    image.apply_batch(records, image.offset + 1)  # type: ignore[arg-type]
    return image


def test_each_user_is_checked_and_only_good_users_are_written() -> None:
    image = MetadataImage()
    result = MANAGER.alter_credentials(
        image,
        AlterScramRequest(
            deletions=(ScramDeletion("gone", 1), ScramDeletion("x", 0)),
            upsertions=(
                upsert("alice"),
                upsert("alice", 2),
                upsert("bob"),
                upsert("bob"),
                upsert(""),
                upsert("few", iterations=4095),
                upsert("many", iterations=16385),
                upsert("odd", mechanism=3),
            ),
        ),
    )
    outcomes = {r.user: (r.error.code, r.error.message) for r in result.response}
    assert outcomes == {
        "gone": (
            ErrorCode.RESOURCE_NOT_FOUND,
            "Attempt to delete a user credential that does not exist",
        ),
        "x": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "alice": (ErrorCode.NONE, None),
        "bob": (
            ErrorCode.DUPLICATE_RESOURCE,
            "A user credential cannot be altered twice in the same request",
        ),
        "": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        "few": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        "many": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
        "odd": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
    }
    assert [(r.name, r.mechanism) for r in result.records] == [("alice", 1), ("alice", 2)]  # type: ignore[union-attr]
    record = result.records[0]
    assert isinstance(record, UserScramCredentialRecord)
    assert b"pw" not in record.stored_key + record.server_key
    assert record.salt == SALT


def test_describe_all_named_missing_and_duplicated_users() -> None:
    image = MetadataImage()
    applied(
        image,
        MANAGER.alter_credentials(
            image, AlterScramRequest(upsertions=(upsert("bob", 2, 8192), upsert("alice")))
        ).records,
    )
    every = MANAGER.describe_credentials(image, None)
    assert [(d.user, [(i.mechanism, i.iterations) for i in d.credentials]) for d in every] == [
        ("alice", [(1, 4096)]),
        ("bob", [(2, 8192)]),
    ]
    named = MANAGER.describe_credentials(image, ["bob", "ghost", "alice", "alice"])
    assert [(d.user, d.error.code, d.error.message) for d in named] == [
        ("bob", ErrorCode.NONE, None),
        (
            "ghost",
            ErrorCode.RESOURCE_NOT_FOUND,
            "Attempt to describe a user credential that does not exist: ghost",
        ),
        (
            "alice",
            ErrorCode.DUPLICATE_RESOURCE,
            "Cannot describe SCRAM credentials for the same user twice in a single request: alice",
        ),
    ]
    deleted = MANAGER.alter_credentials(
        image, AlterScramRequest(deletions=(ScramDeletion("bob", 2),))
    )
    assert deleted.response[0].error.ok
    applied(image, deleted.records)
    assert [d.user for d in MANAGER.describe_credentials(image, [])] == ["alice"]


def test_a_metadata_version_before_scram_refuses() -> None:
    image = applied(MetadataImage(), (FeatureLevelRecord("metadata.version", 8),))
    result = MANAGER.alter_credentials(image, AlterScramRequest(upsertions=(upsert("alice"),)))
    assert result.records == ()
    assert result.response[0].error.code == ErrorCode.UNSUPPORTED_VERSION


def test_credentials_survive_a_snapshot_and_still_check_a_login() -> None:
    image = MetadataImage()
    applied(
        image,
        MANAGER.alter_credentials(
            image, AlterScramRequest(upsertions=(upsert("alice", 2),))
        ).records,
    )
    encoded = image.snapshot_work()()
    loaded = MetadataImage.from_records((decode_record(r) for r in encoded), image.offset)
    assert loaded == image and loaded.digest() == image.digest()
    record = loaded.scram.credential("alice", 2)
    assert record is not None
    mechanism = ScramMechanism.SCRAM_SHA_512
    credential = ScramCredential(
        record.salt, record.stored_key, record.server_key, record.iterations
    )
    server = ScramServer(mechanism, lambda user, _: credential, b"k")
    client = ScramClient(mechanism, "alice", "pw")
    client.verify(server.respond(client.final(server.respond(client.first()))))
    assert server.username == "alice"


def _bootstrap_record(name: str) -> UserScramCredentialRecord:
    mechanism = ScramMechanism.SCRAM_SHA_256
    c = credential_from_salted_password(
        mechanism, SALT, salted_password(mechanism, "pw", SALT, 4096), 4096
    )
    return UserScramCredentialRecord(name, 1, c.salt, c.stored_key, c.server_key, 4096)


@run_async
async def test_bootstrap_credentials_are_written_after_a_broker_registered_first() -> None:
    alice = _bootstrap_record("alice")
    h = Harness(bootstrap_scram=(alice,))
    await h.start()
    await h.register(1)  # before the periodic duties run
    tick = await h.submit(h.controller.tick())
    h.log.commit()
    await tick
    assert h.log.replay_all().scram.credential("alice", 1) == alice
    # Another leader later finds credentials in the log and writes none again.
    again = h.controller.scram.bootstrap_credentials(h.log.replay_all(), (alice,))
    assert again == ()
    await h.stop()
