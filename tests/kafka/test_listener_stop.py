"""Stopping the Kafka listener while a client connects: a connection the server accepted just
before it closed, whose task has not run yet, must not hold the stop up."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import pytest

from raftmeta.server.kafka.listener import STOP_WAIT_S, KafkaListener
from tests.support.waiting import wait_until_async


@dataclass
class Owner:
    """As much of a controller as the listener touches before a request is read."""

    node_id: int = 1
    access: object = None
    maybe_controller: object = None


def test_a_connection_that_registers_after_stop_began_closes_and_stop_returns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        listener = KafkaListener(Owner(), "127.0.0.1", 0)  # type: ignore[arg-type]
        accepted = asyncio.Event()
        released = asyncio.Event()
        serve = listener._serve

        async def serve_late(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            """The connection's task, held back until the stop has done its sweep."""
            accepted.set()
            await released.wait()
            await serve(reader, writer)

        listener._serve = serve_late  # type: ignore[method-assign]
        await listener.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        await asyncio.wait_for(accepted.wait(), STOP_WAIT_S)
        stopping = asyncio.create_task(listener.stop())
        await wait_until_async(lambda: listener._server is None, "the stop to begin", STOP_WAIT_S)
        released.set()
        # Bounded only to fail rather than hang: the stop itself gives up after STOP_WAIT_S.
        async with asyncio.timeout(3 * STOP_WAIT_S):
            await stopping
            assert await reader.read() == b"", "the late connection is closed"
        writer.close()

    with caplog.at_level(logging.WARNING, logger="raftmeta.server.kafka.listener"):
        asyncio.run(main())
    assert not [r for r in caplog.records if "still open" in r.getMessage()], (
        "the stop waited out its bound on the late connection"
    )
