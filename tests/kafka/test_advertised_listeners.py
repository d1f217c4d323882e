"""``advertised.listeners``: the KAFKA listener is bound where ``listeners`` says and is
registered, and named in Metadata, where ``advertised.listeners`` says (NAT, a proxy); the
keys are checked as Kafka checks them."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from raftmeta.config.errors import ConfigError
from raftmeta.config.node import parse_config
from tests.kafka.quorum import kafka_quorum
from tests.kafka.test_wire import read_response, request

ADVERTISED = "kafka.example.com:19092"


def test_the_kafka_listener_is_registered_and_named_where_it_is_advertised(
    tmp_path: Path,
) -> None:
    extra = {"advertised.listeners": f"KAFKA://{ADVERTISED}"}
    with kafka_quorum(tmp_path, brokers=0, extra_config=extra) as quorum:
        active = quorum.active()
        assert quorum.registered() == dict.fromkeys(quorum.quorum.controllers, ADVERTISED)
        assert active.kafka is not None
        bound = ("127.0.0.1", active.kafka.port)  # where it listens, not where it is named
        with socket.create_connection(bound, timeout=10) as sock:
            sock.sendall(request(MetadataRequest[12](topics=None), 1))
            payload = read_response(sock)
        assert payload is not None
        answer = MetadataResponse.decode(payload, version=12, header=True)
        assert answer.controller_id == active.node_id
        assert {f"{b.host}:{b.port}" for b in answer.brokers} == {ADVERTISED}


def config(**extra: str) -> dict[str, str]:
    return {
        "node.id": "1",
        "controller.quorum.voters": "1@127.0.0.1:9093",
        "metadata.log.dir": "/tmp/unused",
        "listeners": "KAFKA://0.0.0.0:9092",
        **extra,
    }


@pytest.mark.parametrize(
    ("advertised", "words"),
    [
        ("KAFKA://0.0.0.0:9092", "wildcard address"),
        ("KAFKA://:9092", "has no host"),
        ("KAFKA://public:0", "port"),
        ("KAFKA://a:1,KAFKA://b:2", "used twice"),
        ("OTHER://public:9092", "OTHER is not a listener in listeners (KAFKA)"),
    ],
)
def test_a_bad_advertised_listener_is_refused_in_one_line(advertised: str, words: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(config(**{"advertised.listeners": advertised}))
    message = str(refused.value)
    assert "advertised.listeners" in message and words in message and "\n" not in message


def test_listeners_may_share_a_port_on_different_advertised_hosts() -> None:
    parsed = parse_config(
        config(
            listeners="KAFKA://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093",
            **{"advertised.listeners": "KAFKA://a.example:443,CONTROLLER://b.example:443"},
        )
    )
    assert [(entry.name, entry.host, entry.port) for entry in parsed.advertised_listeners] == [
        ("KAFKA", "a.example", 443),
        ("CONTROLLER", "b.example", 443),
    ]
