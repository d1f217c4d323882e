"""``remembered``: a mutating request's reply, kept for retries, built once."""

from __future__ import annotations

import asyncio
import uuid

from raftmeta.controller import RequestTag
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server.service_base import remembered


def test_the_kept_reply_is_the_one_answered_and_it_is_built_once() -> None:
    built: list[str] = []
    kept: list[bytes] = []

    def reply(result: str) -> apb.DeleteTopicsResponse:
        built.append(result)
        return apb.DeleteTopicsResponse(results=[apb.TopicError(name=result, error_code=0)])

    async def call(tag: RequestTag | None) -> str:
        assert tag is not None
        result = "deleted"
        kept.append(tag.keep(result))  # what the controller does while staging the request
        return result

    answer = asyncio.run(
        remembered(
            uuid.uuid4().bytes, "DeleteTopics", call, reply, apb.DeleteTopicsResponse.FromString
        )
    )
    assert [topic.name for topic in answer.results] == ["deleted"]
    assert kept == [answer.SerializeToString()]
    assert built == ["deleted"]


def test_without_an_id_nothing_is_kept_and_the_reply_is_built() -> None:
    async def call(tag: RequestTag | None) -> str:
        assert tag is None
        return "plain"

    answer = asyncio.run(
        remembered(
            b"",
            "DeleteTopics",
            call,
            lambda result: apb.DeleteTopicsResponse(results=[apb.TopicError(name=result)]),
            apb.DeleteTopicsResponse.FromString,
        )
    )
    assert [topic.name for topic in answer.results] == ["plain"]
