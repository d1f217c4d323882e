"""``remembered``: a mutating request's results, kept for retries, encoded once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any

import pytest

from raftmeta.apis.retries import remembered
from raftmeta.controller import RequestTag
from raftmeta.errors import ErrorCode, KafkaError


class _Kept:
    """Keeps results as their names, joined; counts the encodings."""

    def __init__(self) -> None:
        self.encoded: list[Sequence[Any]] = []

    def encode(self, operation: str, results: Sequence[Any]) -> bytes:
        self.encoded.append(results)
        return ",".join(results).encode()

    def decode(self, operation: str, data: bytes) -> list[Any]:
        return data.decode().split(",")


def test_the_kept_outcome_is_the_answer_encoded_and_it_is_encoded_once() -> None:
    kept: list[bytes] = []
    codec = _Kept()

    async def call(tag: RequestTag | None) -> list[str]:
        assert tag is not None
        results = ["deleted"]
        kept.append(tag.keep(results))  # what the controller does while staging the request
        return results

    answer = asyncio.run(remembered(uuid.uuid4().bytes, "DeleteTopics", call, codec))
    assert answer == ["deleted"]
    assert kept == [b"deleted"]
    assert codec.encoded == [["deleted"]]


def test_without_an_id_nothing_is_kept_and_the_results_are_answered() -> None:
    codec = _Kept()

    async def call(tag: RequestTag | None) -> list[str]:
        assert tag is None
        return ["plain"]

    assert asyncio.run(remembered(b"", "DeleteTopics", call, codec)) == ["plain"]
    assert codec.encoded == []


def test_an_id_where_nothing_keeps_outcomes_is_refused() -> None:
    async def call(tag: RequestTag | None) -> list[str]:
        raise AssertionError("not called")

    with pytest.raises(KafkaError) as raised:
        asyncio.run(remembered(uuid.uuid4().bytes, "DeleteTopics", call, None))
    assert raised.value.code is ErrorCode.INVALID_REQUEST
