"""The KAFKA listener's admission and request-bytes accounting on their own, and the codes the
listener sends being in raftmeta's error-code table."""

from __future__ import annotations

import asyncio

import pytest

from raftmeta.config.node import parse_config
from raftmeta.errors import ErrorCode
from raftmeta.server.kafka import limits, sasl
from raftmeta.server.kafka.limits import Admission, ListenerLimits, RequestBytes


def test_max_connections_and_max_connections_per_ip_refuse_and_release() -> None:
    admission = Admission(ListenerLimits(max_connections=3, max_connections_per_ip=2), 1)
    assert admission.admit("10.0.0.1") is None
    assert admission.admit("10.0.0.1") is None
    refused = admission.admit("10.0.0.1")
    assert refused is not None and "max.connections.per.ip" in refused
    assert admission.admit("10.0.0.2") is None
    refused = admission.admit("10.0.0.3")
    assert refused is not None and "max.connections (3)" in refused
    admission.release("10.0.0.1")
    assert admission.admit("10.0.0.1") is None
    assert admission.total == 3


def test_descriptors_near_the_limit_refuse_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "descriptor_limit", lambda: 1024)
    monkeypatch.setattr(limits, "open_descriptors", lambda: 1024 - 128)
    refused = Admission(ListenerLimits(), 1).admit("10.0.0.1")
    assert refused is not None and "open-file limit" in refused
    monkeypatch.setattr(limits, "open_descriptors", lambda: 1024 - 129)
    assert Admission(ListenerLimits(), 1).admit("10.0.0.1") is None


def test_request_bytes_wait_while_the_limit_is_reached() -> None:
    async def scenario() -> None:
        held = RequestBytes(10)
        await held.take(25)  # one frame may pass the limit
        waiting = asyncio.create_task(held.take(1))
        await asyncio.sleep(0)  # let it reach its wait
        assert not waiting.done()
        await held.give_back(25)
        await asyncio.wait_for(waiting, 5.0)
        assert held.held == 1

    asyncio.run(scenario())


def test_no_limit_takes_nothing() -> None:
    async def scenario() -> None:
        unbounded = RequestBytes(-1)
        await unbounded.take(2**30)
        assert unbounded.held == 0

    asyncio.run(scenario())


def test_the_limit_keys_have_kafkas_defaults() -> None:
    config = parse_config(
        {"node.id": 1, "controller.quorum.voters": "1@127.0.0.1:9093", "metadata.log.dir": "/x"}
    )
    assert config.max_connections == config.max_connections_per_ip == 2**31 - 1
    assert config.connections_max_idle_ms == 600_000
    assert config.queued_max_request_bytes == -1
    assert config.sasl_server_max_receive_size == 524_288


def test_the_sasl_codes_sent_are_in_the_error_code_table() -> None:
    assert ErrorCode(sasl.ILLEGAL_SASL_STATE).name == "ILLEGAL_SASL_STATE"
    assert ErrorCode(sasl.UNSUPPORTED_SASL_MECHANISM).name == "UNSUPPORTED_SASL_MECHANISM"
