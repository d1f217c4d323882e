"""AlterClientQuotas / DescribeClientQuotas on the controller: Kafka's ClientQuotaControlManager
checks, its records, and its filter matching."""

from __future__ import annotations

import pytest

from raftmeta.common.quotas import (
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    QuotaFilterComponent,
    QuotaMatchType,
    QuotaOp,
)
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import ClientQuotaRecord, QuotaEntityData
from tests.controller.harness import Harness, run_async

ALICE = ClientQuotaEntity.of({"user": "alice"})
ALICE_C1 = ClientQuotaEntity.of({"user": "alice", "client-id": "c1"})
DEFAULT_USER = ClientQuotaEntity.of({"user": None})
DEFAULT_CLIENT = ClientQuotaEntity.of({"client-id": None})
C1 = ClientQuotaEntity.of({"client-id": "c1"})
IP = ClientQuotaEntity.of({"ip": "10.0.0.1"})
DEFAULT_IP = ClientQuotaEntity.of({"ip": None})


def setting(entity: ClientQuotaEntity, **values: float) -> ClientQuotaAlteration:
    return ClientQuotaAlteration(entity, tuple(QuotaOp(k, v) for k, v in values.items()))


def component(kind: str, match_type: int, match: str | None = None) -> QuotaFilterComponent:
    return QuotaFilterComponent(kind, match_type, match)


@run_async
async def test_quotas_are_written_as_kafkas_records_and_only_when_they_change() -> None:
    h = Harness()
    await h.start()
    task = await h.submit(
        h.controller.alter_client_quotas([setting(ALICE_C1, producer_byte_rate=1024)])
    )
    assert not task.done(), "answered before the records committed"
    assert h.log.uncommitted_records() == [
        ClientQuotaRecord(
            (QuotaEntityData("client-id", "c1"), QuotaEntityData("user", "alice")),
            "producer_byte_rate",
            1024.0,
        )
    ]
    h.log.commit()
    assert [r.code for r in await task] == [ErrorCode.NONE]
    image: MetadataImage = h.controller.committed_image
    assert image.effective_client_quotas("alice", "c1") == {"producer_byte_rate": 1024.0}
    same = await h.submit(
        h.controller.alter_client_quotas([setting(ALICE_C1, producer_byte_rate=1024)])
    )
    assert h.log.uncommitted_records() == [], "an unchanged value is not written again"
    assert (await same)[0].ok
    removed = await h.run(
        h.controller.alter_client_quotas(
            [
                ClientQuotaAlteration(
                    ALICE_C1,
                    (
                        QuotaOp("producer_byte_rate", remove=True),
                        QuotaOp("request_percentage", remove=True),
                    ),
                )
            ]
        )
    )
    assert removed[0].ok
    assert h.controller.committed_image.client_quotas.entities == set()


@pytest.mark.parametrize(
    ("alteration", "message"),
    [
        (setting(ClientQuotaEntity(()), producer_byte_rate=1), "Invalid empty client quota entity"),
        (
            setting(ClientQuotaEntity.of({"group": "g"}), producer_byte_rate=1),
            "Unhandled client quota entity type: group",
        ),
        (
            setting(ClientQuotaEntity.of({"user": ""}), producer_byte_rate=1),
            "Empty user not supported",
        ),
        (
            setting(ClientQuotaEntity((("user", "a"), ("user", "b"))), producer_byte_rate=1),
            "Invalid empty client quota entity, duplicate entity entry user",
        ),
        (
            setting(
                ClientQuotaEntity.of({"ip": "1.2.3.4", "user": "a"}), connection_creation_rate=1
            ),
            "Invalid quota entity combination, IP entity should not be combined with User or "
            "ClientId",
        ),
        (
            setting(ClientQuotaEntity.of({"ip": "not-an-ip"}), connection_creation_rate=1),
            "not-an-ip is not a valid IP or resolvable host.",
        ),
        (setting(ALICE, retention_ms=1), "Invalid configuration key retention_ms"),
        (setting(IP, producer_byte_rate=1), "Invalid configuration key producer_byte_rate"),
        (
            setting(ALICE, connection_creation_rate=1),
            "Invalid configuration key connection_creation_rate",
        ),
        (setting(ALICE, producer_byte_rate=0), "Quota producer_byte_rate must be greater than 0"),
        (
            setting(ALICE, request_percentage=-1.5),
            "Quota request_percentage must be greater than 0",
        ),
        (
            setting(ALICE, consumer_byte_rate=10.5),
            "consumer_byte_rate cannot be a fractional value.",
        ),
        (
            setting(IP, connection_creation_rate=2.5),
            "connection_creation_rate cannot be a fractional value.",
        ),
        (
            setting(IP, connection_creation_rate=2.0**31),
            "Proposed value for connection_creation_rate is too large for an INT.",
        ),
        (
            ClientQuotaAlteration(
                ALICE, (QuotaOp("producer_byte_rate", 1), QuotaOp("producer_byte_rate", 2))
            ),
            "Duplicate quota key producer_byte_rate not updating quota for this entity "
            "ClientQuotaEntity(user=alice)",
        ),
    ],
)
def test_bad_alterations_are_refused_whole_with_kafkas_message(
    alteration: ClientQuotaAlteration, message: str
) -> None:
    @run_async
    async def scenario() -> None:
        h = Harness()
        await h.start()
        good = setting(ALICE, request_percentage=12.5)
        results = await h.run(h.controller.alter_client_quotas([alteration, good]))
        assert results[0].code is ErrorCode.INVALID_REQUEST
        assert results[0].message == message
        assert results[1].ok, "the request's other entities go on"
        assert h.controller.committed_image.client_quotas.entities == {ALICE.parts}

    scenario()


@run_async
async def test_validate_only_checks_without_writing() -> None:
    h = Harness()
    await h.start()
    results = await h.run(
        h.controller.alter_client_quotas(
            [setting(ALICE, producer_byte_rate=1), setting(ALICE, producer_byte_rate=-1)],
            validate_only=True,
        )
    )
    assert [r.code for r in results] == [ErrorCode.NONE, ErrorCode.INVALID_REQUEST]
    assert h.log.uncommitted_records() == []
    assert h.controller.committed_image.client_quotas.entities == set()


@run_async
async def test_describe_matches_exact_default_and_specified_components_as_kafka() -> None:
    h = Harness()
    await h.start()
    await h.run(
        h.controller.alter_client_quotas(
            [
                setting(ALICE, producer_byte_rate=1),
                setting(ALICE_C1, producer_byte_rate=2),
                setting(DEFAULT_USER, producer_byte_rate=3),
                setting(C1, consumer_byte_rate=4),
                setting(DEFAULT_CLIENT, consumer_byte_rate=5),
                setting(IP, connection_creation_rate=6),
                setting(DEFAULT_IP, connection_creation_rate=7),
            ]
        )
    )

    async def described(
        *components: QuotaFilterComponent, strict: bool = False
    ) -> set[ClientQuotaEntity]:
        found = await h.controller.describe_client_quotas(ClientQuotaFilter(components, strict))
        return set(found)

    exact, default, specified = (
        QuotaMatchType.EXACT,
        QuotaMatchType.DEFAULT,
        QuotaMatchType.SPECIFIED,
    )
    assert await described(component("user", exact, "alice")) == {ALICE, ALICE_C1}
    assert await described(component("user", exact, "alice"), strict=True) == {ALICE}
    assert await described(component("user", default)) == {DEFAULT_USER}
    assert await described(component("user", specified)) == {ALICE, ALICE_C1, DEFAULT_USER}
    assert await described(component("client-id", specified), strict=True) == {C1, DEFAULT_CLIENT}
    assert await described(
        component("user", exact, "alice"), component("client-id", exact, "c1")
    ) == {ALICE_C1}
    assert await described(component("ip", specified)) == {IP, DEFAULT_IP}
    assert len(await described()) == 7
    assert await described(strict=True) == set()
    values = await h.controller.describe_client_quotas(
        ClientQuotaFilter((component("user", exact, "alice"),), strict=True)
    )
    assert values == {ALICE: {"producer_byte_rate": 1.0}}


@pytest.mark.parametrize(
    ("components", "code", "message"),
    [
        ((component("", 0, "x"),), ErrorCode.INVALID_REQUEST, "Invalid empty entity type."),
        (
            (component("user", 2), component("user", 0, "a")),
            ErrorCode.INVALID_REQUEST,
            "Entity type user cannot appear more than once in the filter.",
        ),
        ((component("group", 2),), ErrorCode.UNSUPPORTED_VERSION, "Unsupported entity type group"),
        ((component("user", 7),), ErrorCode.UNSUPPORTED_VERSION, "Unknown match type 7"),
        (
            (component("user", 0),),
            ErrorCode.INVALID_REQUEST,
            "Request specified MATCH_TYPE_EXACT, but set match string to null.",
        ),
        (
            (component("user", 1, "a"),),
            ErrorCode.INVALID_REQUEST,
            "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.",
        ),
        (
            (component("ip", 2), component("client-id", 2)),
            ErrorCode.INVALID_REQUEST,
            "Invalid entity filter component combination. IP filter component should not be "
            "used with user or clientId filter component.",
        ),
    ],
)
def test_malformed_filters_fail_the_request_with_kafkas_code(
    components: tuple[QuotaFilterComponent, ...], code: ErrorCode, message: str
) -> None:
    @run_async
    async def scenario() -> None:
        h = Harness()
        await h.start()
        with pytest.raises(KafkaError) as raised:
            await h.controller.describe_client_quotas(ClientQuotaFilter(components))
        assert (raised.value.code, raised.value.message) == (code, message)

    scenario()
