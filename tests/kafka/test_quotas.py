"""Client quotas on the KAFKA listener: DescribeClientQuotas (48) and AlterClientQuotas (49),
every version, sent with kafka-python's generated protocol classes (no client library has a
quota call) and compared with the gRPC AdminClient on the same state; the admin client over
either transport; and the embedded broker's effective quotas, resolved in Kafka's order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)

from raftmeta.admin import (
    AdminClient,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    KafkaException,
    QuotaFilterComponent,
    QuotaMatchType,
    QuotaOp,
)
from raftmeta.errors import ErrorCode
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.kafka.test_wire import connect, read_response, request
from tests.support.waiting import wait_until

TIMEOUT_S = 15.0
VERSIONS = (0, 1)
EVERYTHING = ClientQuotaFilter()


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    with kafka_quorum(tmp_path_factory.mktemp("kafka-quotas"), brokers=1) as running:
        yield running


def raw(address: str, message: Any, response_class: Any, version: int) -> Any:
    with connect(address) as sock:
        sock.sendall(request(message, 11))
        payload = read_response(sock)
    assert payload is not None, "the listener answered"
    return response_class.decode(payload, version=version, header=True)


def grpc_client(quorum: KafkaQuorum) -> AdminClient:
    return AdminClient({"bootstrap.servers": ",".join(quorum.quorum.addresses.values())})


def kafka_alter(
    quorum: KafkaQuorum,
    version: int,
    entries: list[tuple[list[tuple[str, str | None]], list[tuple[str, float, bool]]]],
    validate_only: bool = False,
) -> list[tuple[int, str | None, list[tuple[str, str | None]]]]:
    answer = raw(
        quorum.kafka_address(quorum.active()),
        AlterClientQuotasRequest(version=version, entries=entries, validate_only=validate_only),
        AlterClientQuotasResponse,
        version,
    )
    return [
        (
            entry.error_code,
            entry.error_message,
            [(part.entity_type, part.entity_name) for part in entry.entity],
        )
        for entry in answer.entries
    ]


def kafka_describe(
    address: str, version: int, components: list[tuple[str, int, str | None]], strict: bool
) -> Any:
    return raw(
        address,
        DescribeClientQuotasRequest(version=version, components=components, strict=strict),
        DescribeClientQuotasResponse,
        version,
    )


def as_described(answer: Any) -> dict[ClientQuotaEntity, dict[str, float]]:
    assert answer.error_code == 0, answer.error_message
    return {
        ClientQuotaEntity.of((p.entity_type, p.entity_name) for p in entry.entity): {
            value.key: value.value for value in entry.values
        }
        for entry in answer.entries
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_quotas_altered_over_kafka_are_described_alike_over_kafka_and_grpc(
    quorum: KafkaQuorum, version: int
) -> None:
    user = f"user-v{version}"
    answered = kafka_alter(
        quorum,
        version,
        [
            ([("user", user), ("client-id", "c1")], [("producer_byte_rate", 1024.0, False)]),
            (
                [("user", user)],
                [("consumer_byte_rate", 2048.0, False), ("request_percentage", 12.5, False)],
            ),
            ([("user", None)], [("controller_mutation_rate", 5.0, False)]),
            ([("ip", f"10.0.0.{version}")], [("connection_creation_rate", 7.0, False)]),
        ],
    )
    assert answered == [
        (0, None, [("user", user), ("client-id", "c1")]),
        (0, None, [("user", user)]),
        (0, None, [("user", None)]),
        (0, None, [("ip", f"10.0.0.{version}")]),
    ]

    address = quorum.kafka_address(quorum.active())
    filters: list[tuple[list[tuple[str, int, str | None]], bool]] = [
        ([], False),
        ([("user", 0, user)], False),
        ([("user", 0, user)], True),
        ([("user", 1, None)], False),
        ([("user", 2, None)], False),
        ([("ip", 2, None)], True),
        ([("user", 0, user), ("client-id", 0, "c1")], True),
    ]
    with grpc_client(quorum) as grpc:
        for components, strict in filters:
            over_kafka = as_described(kafka_describe(address, version, components, strict))
            quota_filter = ClientQuotaFilter(
                tuple(QuotaFilterComponent(*component) for component in components), strict
            )
            over_grpc = grpc.describe_client_quotas(quota_filter).result(TIMEOUT_S)
            assert over_kafka == over_grpc, (components, strict)
        exact = as_described(kafka_describe(address, version, [("user", 0, user)], True))
        assert exact == {
            ClientQuotaEntity.of({"user": user}): {
                "consumer_byte_rate": 2048.0,
                "request_percentage": 12.5,
            }
        }


@pytest.mark.parametrize("version", VERSIONS)
def test_refusals_carry_kafkas_codes_and_messages_on_either_wire(
    quorum: KafkaQuorum, version: int
) -> None:
    bad_entries: list[Any] = [
        ([("user", "x")], [("retention_ms", 1.0, False)]),
        ([("user", "y")], [("producer_byte_rate", 0.5, False)]),
        ([("ip", "nope")], [("connection_creation_rate", 1.0, False)]),
        ([("group", "g")], [("producer_byte_rate", 1.0, False)]),
    ]
    answered = kafka_alter(quorum, version, bad_entries)
    with grpc_client(quorum) as grpc:
        for (code, message, parts), (_, ops) in zip(answered, bad_entries, strict=True):
            alteration = ClientQuotaAlteration(
                ClientQuotaEntity.of(parts), tuple(QuotaOp(k, v, r) for k, v, r in ops)
            )
            with pytest.raises(KafkaException) as raised:
                grpc.alter_client_quotas([alteration])[alteration.entity].result(TIMEOUT_S)
            assert (code, message) == (raised.value.code, raised.value.message)
            assert code == ErrorCode.INVALID_REQUEST
    assert [message for _, message, _ in answered] == [
        "Invalid configuration key retention_ms",
        "producer_byte_rate cannot be a fractional value.",
        "nope is not a valid IP or resolvable host.",
        "Unhandled client quota entity type: group",
    ]
    twice = kafka_alter(
        quorum,
        version,
        [
            ([("user", "twice")], [("producer_byte_rate", 1.0, False)]),
            ([("user", "twice")], [("consumer_byte_rate", 1.0, False)]),
        ],
    )
    assert [(code, message) for code, message, _ in twice] == [
        (ErrorCode.INVALID_REQUEST, "Duplicate entity in the request.")
    ] * 2
    address = quorum.kafka_address(quorum.active())
    assert as_described(kafka_describe(address, version, [("user", 0, "twice")], False)) == {}
    mixed = kafka_describe(address, version, [("ip", 2, None), ("user", 2, None)], False)
    assert mixed.error_code == ErrorCode.INVALID_REQUEST
    assert mixed.entries is None
    unknown = kafka_describe(address, version, [("group", 2, None)], False)
    assert unknown.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert unknown.error_message == "Unsupported entity type group"


def test_validate_only_writes_nothing(quorum: KafkaQuorum) -> None:
    answered = kafka_alter(
        quorum, 1, [([("user", "validated")], [("producer_byte_rate", 10.0, False)])], True
    )
    assert answered == [(0, None, [("user", "validated")])]
    address = quorum.kafka_address(quorum.active())
    assert as_described(kafka_describe(address, 1, [("user", 0, "validated")], False)) == {}


def test_a_standby_describes_quotas_from_its_own_image(quorum: KafkaQuorum) -> None:
    kafka_alter(quorum, 1, [([("client-id", "standby-c")], [("producer_byte_rate", 99.0, False)])])
    standby = quorum.kafka_address(quorum.follower())
    wanted = {ClientQuotaEntity.of({"client-id": "standby-c"}): {"producer_byte_rate": 99.0}}

    def seen() -> bool:
        answer = kafka_describe(standby, 1, [("client-id", 0, "standby-c")], False)
        return as_described(answer) == wanted

    wait_until(seen, "the standby to describe the new quota", TIMEOUT_S)


def test_the_admin_client_alters_and_describes_over_either_transport(quorum: KafkaQuorum) -> None:
    grpc = grpc_client(quorum)
    kafka = AdminClient({"bootstrap.controllers": quorum.kafka_address(quorum.follower())})
    with grpc, kafka:
        for name, client in (("over-grpc", grpc), ("over-kafka", kafka)):
            entity = ClientQuotaEntity.of({"user": name, "client-id": None})
            alteration = ClientQuotaAlteration(entity, (QuotaOp("consumer_byte_rate", 4096.0),))
            assert client.alter_client_quotas([alteration])[entity].result(TIMEOUT_S) is None
            mine = ClientQuotaFilter(
                (
                    QuotaFilterComponent("user", QuotaMatchType.EXACT, name),
                    QuotaFilterComponent("client-id", QuotaMatchType.DEFAULT),
                ),
                strict=True,
            )
            expected = {entity: {"consumer_byte_rate": 4096.0}}
            assert grpc.describe_client_quotas(mine).result(TIMEOUT_S) == expected
            assert kafka.describe_client_quotas(mine).result(TIMEOUT_S) == expected
            removal = ClientQuotaAlteration(entity, (QuotaOp("consumer_byte_rate", remove=True),))
            assert client.alter_client_quotas([removal])[entity].result(TIMEOUT_S) is None
            assert kafka.describe_client_quotas(mine).result(TIMEOUT_S) == {}
        everything_grpc = grpc.describe_client_quotas(EVERYTHING).result(TIMEOUT_S)
        assert kafka.describe_client_quotas(EVERYTHING).result(TIMEOUT_S) == everything_grpc


LEVELS: list[dict[str, str | None]] = [
    {"user": "alice", "client-id": "c1"},
    {"user": "alice", "client-id": None},
    {"user": "alice"},
    {"user": None, "client-id": "c1"},
    {"user": None, "client-id": None},
    {"user": None},
    {"client-id": "c1"},
    {"client-id": None},
]
"""Kafka's precedence for user alice with client id c1, most specific first."""


def test_the_broker_resolves_each_key_at_every_precedence_level_in_kafkas_order(
    quorum: KafkaQuorum,
) -> None:
    """Levels are set from the least specific up, each a value of its own: after each, the
    broker's effective quota for (alice, c1) is that level's; then removed from the top down,
    each time the next level shows through."""
    broker = quorum.quorum.brokers[1]
    key = "request_percentage"

    def effective_is(value: float | None) -> None:
        def reached() -> bool:
            return broker.client_quotas("alice", "c1").get(key) == value

        wait_until(reached, f"the broker's {key} for (alice, c1) to be {value}", TIMEOUT_S)

    with grpc_client(quorum) as grpc:

        def alter(level: dict[str, str | None], op: QuotaOp) -> None:
            entity = ClientQuotaEntity.of(level)
            grpc.alter_client_quotas([ClientQuotaAlteration(entity, (op,))])[entity].result(
                TIMEOUT_S
            )

        effective_is(None)
        for rank in reversed(range(len(LEVELS))):
            alter(LEVELS[rank], QuotaOp(key, 100.0 + rank))
            effective_is(100.0 + rank)
        # Other users and client ids fall through to the defaults.
        assert broker.client_quotas("bob", "c1")[key] == 103.0
        assert broker.client_quotas("bob", "c2")[key] == 104.0
        assert broker.client_quotas("alice", "c2")[key] == 101.0
        for rank in range(len(LEVELS)):
            alter(LEVELS[rank], QuotaOp(key, remove=True))
            effective_is(None if rank == len(LEVELS) - 1 else 100.0 + rank + 1)

        assert broker.ip_quotas("10.9.9.9") == {}
        alter({"ip": None}, QuotaOp("connection_creation_rate", 50.0))
        wait_until(
            lambda: broker.ip_quotas("10.9.9.9") == {"connection_creation_rate": 50.0},
            "the default ip quota on the broker",
            TIMEOUT_S,
        )
        alter({"ip": "10.9.9.9"}, QuotaOp("connection_creation_rate", 5.0))
        wait_until(
            lambda: broker.ip_quotas("10.9.9.9") == {"connection_creation_rate": 5.0},
            "the ip's own quota on the broker",
            TIMEOUT_S,
        )
        assert broker.ip_quotas("10.9.9.8") == {"connection_creation_rate": 50.0}


def test_a_standby_refuses_alterations_with_not_controller_on_every_entry(
    quorum: KafkaQuorum,
) -> None:
    entries = [
        ([("user", "on-standby")], [("producer_byte_rate", 1.0, False)]),
        ([("ip", None)], [("connection_creation_rate", 1.0, False)]),
    ]
    answer = raw(
        quorum.kafka_address(quorum.follower()),
        AlterClientQuotasRequest(version=1, entries=entries, validate_only=False),
        AlterClientQuotasResponse,
        1,
    )
    assert [entry.error_code for entry in answer.entries] == [ErrorCode.NOT_CONTROLLER] * 2
    assert [[(p.entity_type, p.entity_name) for p in e.entity] for e in answer.entries] == [
        [("user", "on-standby")],
        [("ip", None)],
    ]
