"""AdminClient is AsyncAdminClient run on a thread of its own: what the core's futures hold
(values, per-item KafkaExceptions, a request-level KafkaException) reaches the caller through
``concurrent.futures`` unchanged, and the transport the config names is the one used.

A stand-in transport answers here, so no quorum is needed; the real transports are exercised
in tests/admin/test_admin_quorum.py and tests/kafka/."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence

import pytest

from raftmeta.admin import (
    AdminClient,
    AsyncAdminClient,
    ElectionType,
    ErrorCode,
    KafkaException,
    NewTopic,
    TopicPartition,
)
from raftmeta.admin.settings import AdminSettings

TAKEN = KafkaException(ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'taken' already exists.")


class ScriptedTransport:
    """Refuses topic ``taken`` and every election (as an unauthorized caller is refused)."""

    def __init__(self) -> None:
        self.closed = False

    async def create_topics(
        self, topics: Sequence[NewTopic], validate_only: bool, timeout_ms: int | None
    ) -> dict[str, KafkaException | None]:
        return {t.topic: TAKEN if t.topic == "taken" else None for t in topics}

    async def elect_leaders(
        self, election_type: int, partitions: object, timeout_ms: int | None
    ) -> dict[TopicPartition, KafkaException | None]:
        raise KafkaException(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Not authorized.")

    async def close(self) -> None:
        self.closed = True


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedTransport:
    transport = ScriptedTransport()

    def open_transport(settings: AdminSettings) -> ScriptedTransport:
        return transport

    monkeypatch.setattr("raftmeta.admin.async_client.open_transport", open_transport)
    return transport


def test_the_sync_client_surfaces_the_core_s_kafka_exceptions(
    scripted: ScriptedTransport,
) -> None:
    with AdminClient({"bootstrap.servers": "127.0.0.1:1"}) as admin:
        futures = admin.create_topics([NewTopic("taken"), NewTopic("fresh")])
        assert all(isinstance(f, concurrent.futures.Future) for f in futures.values())
        assert futures["fresh"].result(timeout=5) is None
        with pytest.raises(KafkaException) as raised:
            futures["taken"].result(timeout=5)
        assert (raised.value.code, raised.value.name, raised.value.message) == (
            ErrorCode.TOPIC_ALREADY_EXISTS,
            "TOPIC_ALREADY_EXISTS",
            "Topic 'taken' already exists.",
        )

        election = admin.elect_leaders(ElectionType.PREFERRED, None)
        for future in (election.partitions(), election.all()):
            with pytest.raises(KafkaException) as refused:
                future.result(timeout=5)
            assert refused.value.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            assert refused.value.message == "Not authorized."
    assert scripted.closed


def test_a_bad_argument_is_raised_in_the_caller_s_thread(scripted: ScriptedTransport) -> None:
    with (
        AdminClient({"bootstrap.servers": "127.0.0.1:1"}) as admin,
        pytest.raises(ValueError, match="duplicate topic 't'"),
    ):
        admin.create_topics([NewTopic("t"), NewTopic("t")])


def test_the_deprecation_warning_names_the_caller_s_line(scripted: ScriptedTransport) -> None:
    with (
        AdminClient({"bootstrap.servers": "127.0.0.1:1"}) as admin,
        pytest.warns(DeprecationWarning, match="elect_leaders") as caught,
    ):
        admin.elect_preferred_leaders(None)
    assert caught[0].filename == __file__

    async def from_the_core() -> None:
        async with AsyncAdminClient({"bootstrap.servers": "127.0.0.1:1"}) as core:
            with pytest.warns(DeprecationWarning, match="elect_leaders") as warned:
                core.elect_preferred_leaders(None)
            assert warned[0].filename == __file__

    asyncio.run(from_the_core())


def test_bootstrap_controllers_choose_the_kafka_transport() -> None:
    """Each transport refuses what it cannot carry, by name, before dialling anything: the
    Kafka one has no DescribeCluster, the gRPC one no DescribeQuorum."""
    with AdminClient({"bootstrap.controllers": "127.0.0.1:1"}) as admin:
        with pytest.raises(KafkaException) as raised:
            admin.describe_cluster().result(timeout=5)
        assert raised.value.code is ErrorCode.UNSUPPORTED_VERSION
        assert "DescribeCluster" in raised.value.message
    with AdminClient({"bootstrap.servers": "127.0.0.1:1"}) as admin:
        with pytest.raises(KafkaException) as raised:
            admin.describe_quorum().result(timeout=5)
        assert raised.value.code is ErrorCode.UNSUPPORTED_VERSION
        assert "bootstrap.controllers" in raised.value.message


@pytest.mark.parametrize(
    ("config", "complaint"),
    [
        ({"bootstrap.servers": "a:1", "bootstrap.controllers": "b:1"}, "not both"),
        ({"bootstrap.controllers": "b:1", "bearer.token": "t"}, "gRPC only"),
        ({"bootstrap.controllers": "b"}, "not host:port"),
    ],
)
def test_the_transport_keys_are_checked(config: dict[str, object], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        AdminClient(config)
