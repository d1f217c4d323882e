"""PLAIN tokens checked against the tokens file the gRPC path reads: the password is a bearer
token, the username the name of the principal it maps to."""

from __future__ import annotations

import pytest

from raftmeta.auth import AccessControl
from raftmeta.server.kafka.sasl import BAD_LOGIN, check_plain

ACCESS = AccessControl(tokens={"alice-secret": "User:alice", "svc-secret": "Service:batch"})


def test_a_matching_username_and_token_log_in_as_the_grpc_caller_would() -> None:
    login = check_plain(ACCESS, b"\x00alice\x00alice-secret")
    assert login.error is None
    assert login.principal == ACCESS.principal((("authorization", "Bearer alice-secret"),))
    assert login.principal == "User:alice"
    assert check_plain(ACCESS, b"alice\x00alice\x00alice-secret").principal == "User:alice"


@pytest.mark.parametrize(
    ("token", "words"),
    [
        (b"\x00alice\x00wrong", BAD_LOGIN),
        (b"\x00bob\x00alice-secret", BAD_LOGIN),  # alice's token is no password for bob
        (b"\x00batch\x00svc-secret", BAD_LOGIN),  # PLAIN names User principals only
        (b"bob\x00alice\x00alice-secret", "authorization id"),
        (b"alice-secret", "malformed"),
        (b"\x00\x00alice-secret", "malformed"),
        (b"\x00alice\x00", "malformed"),
        (b"\xff\x00alice\x00alice-secret", "not UTF-8"),
    ],
)
def test_bad_logins_are_refused_with_a_reason(token: bytes, words: str) -> None:
    login = check_plain(ACCESS, token)
    assert login.principal is None and login.error is not None and words in login.error


def test_without_a_tokens_file_nobody_logs_in() -> None:
    login = check_plain(AccessControl(), b"\x00alice\x00alice-secret")
    assert login.principal is None and login.error is not None and "tokens.file" in login.error
