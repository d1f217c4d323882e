"""The SCRAM arithmetic and messages against RFC 7677's SCRAM-SHA-256 example, and the
server's refusals: every one a ScramFailure, never an exception of another kind."""

from __future__ import annotations

import base64
import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raftmeta.security.scram import (
    ScramCredential,
    ScramMechanism,
    credential_from_password,
)
from raftmeta.security.scram_exchange import ScramClient, ScramFailure, ScramServer

# RFC 7677 section 3.
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
CLIENT_FINAL = (
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
SHA256 = ScramMechanism.SCRAM_SHA_256
PENCIL = credential_from_password(SHA256, "pencil", salt=SALT, iterations=4096)


def server(credential: ScramCredential | None = PENCIL) -> ScramServer:
    return ScramServer(SHA256, lambda user, _: credential if user == "user" else None, b"k")


def rfc_server() -> ScramServer:
    return ScramServer(SHA256, lambda user, _: PENCIL, b"k", nonce=lambda: SERVER_NONCE)


def test_the_rfc_7677_exchange_from_both_ends() -> None:
    client = ScramClient(SHA256, "user", "pencil", nonce=lambda: CLIENT_NONCE)
    ours = rfc_server()
    server_first = ours.respond(client.first())
    assert server_first == (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert client.final(server_first) == CLIENT_FINAL
    assert ours.respond(CLIENT_FINAL) == SERVER_FINAL
    assert ours.username == "user"
    client.verify(SERVER_FINAL)


def test_a_client_proves_nothing_to_a_server_without_the_credential() -> None:
    client = ScramClient(SHA256, "user", "pencil", nonce=lambda: CLIENT_NONCE)
    impostor = ScramServer(
        SHA256,
        lambda user, _: credential_from_password(SHA256, "other", salt=SALT),
        b"k",
        nonce=lambda: SERVER_NONCE,
    )
    final = client.final(impostor.respond(client.first()))
    with pytest.raises(ScramFailure):
        impostor.respond(final)
    with pytest.raises(ScramFailure):
        client.verify(b"v=" + base64.b64encode(bytes(32)))


def _first_then(final: bytes, first: bytes = b"n,,n=user,r=" + CLIENT_NONCE.encode()) -> None:
    ours = rfc_server()
    ours.respond(first)
    ours.respond(final)


@pytest.mark.parametrize(
    "final",
    [
        CLIENT_FINAL.replace(b"p=dHzb", b"p=dHzc"),  # tampered proof
        CLIENT_FINAL.replace(b"c=biws", b"c=eSws"),  # another gs2 header
        CLIENT_FINAL.replace(b"hNlF$k0", b"hNlF$k1"),  # another nonce
        CLIENT_FINAL.replace(b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", b"p=AAAA"),
        CLIENT_FINAL.replace(b"p=", b"q="),
        CLIENT_FINAL + b"x",
        b"\xff\xfe",
        b"",
    ],
)
def test_a_bad_client_final_fails(final: bytes) -> None:
    with pytest.raises(ScramFailure):
        _first_then(final)


@pytest.mark.parametrize(
    "first",
    [
        b"p=tls-unique,,n=user,r=abc",  # channel binding
        b"n,,r=abc,n=user",
        b"n,,n=,r=abc",
        b"n,,n=us=er,r=abc",
        b"n,,n=user,r=",
        b"n,,n=user,r=a,b",
        b"n,a=other,n=user,r=abc",
        b"n,,n=user,r=abc,tokenauth=true",
        b"n,,n=user,r=abc,m=ext",
        b"n,n=user,r=abc",
        b"\xff",
        b"",
    ],
)
def test_a_bad_client_first_fails(first: bytes) -> None:
    with pytest.raises(ScramFailure):
        rfc_server().respond(first)


def test_an_unknown_user_gets_a_stable_decoy_salt_and_fails_only_at_the_proof() -> None:
    first = b"n,,n=nobody,r=abc"
    salts = {server().respond(first).split(b",")[1] for _ in range(3)}
    assert len(salts) == 1
    client = ScramClient(SHA256, "nobody", "pencil")
    ours = server()
    final = client.final(ours.respond(client.first()))
    with pytest.raises(ScramFailure, match="invalid credentials"):
        ours.respond(final)


def test_messages_out_of_order_or_after_the_end_fail() -> None:
    ours = rfc_server()
    with pytest.raises(ScramFailure):
        ours.final(CLIENT_FINAL)
    with pytest.raises(ScramFailure):
        ours.respond(b"n,,n=user,r=abc")  # a failed login stays failed
    done = rfc_server()
    done.respond(b"n,,n=user,r=" + CLIENT_NONCE.encode())
    done.respond(CLIENT_FINAL)
    with pytest.raises(ScramFailure):
        done.respond(CLIENT_FINAL)  # a replay on the same connection


def test_a_credential_shows_no_key_in_its_repr() -> None:
    assert repr(PENCIL) == "ScramCredential(iterations=4096)"


@settings(deadline=None, max_examples=300)
@given(first=st.binary(max_size=200), final=st.binary(max_size=300))
def test_random_messages_fail_only_as_scram_failures(first: bytes, final: bytes) -> None:
    ours = server()
    try:
        ours.respond(first)
        ours.respond(final)
    except ScramFailure:
        return
    raise AssertionError("random bytes logged in")


@settings(deadline=None, max_examples=200)
@given(
    user=st.text(min_size=1, max_size=20).filter(lambda u: "\x00" not in u),
    extra=st.text(alphabet="=,abc", max_size=8),
)
def test_random_client_firsts_with_a_real_user_shape_never_raise_otherwise(
    user: str, extra: str
) -> None:
    with contextlib.suppress(ScramFailure):  # anything else escapes and fails the test
        rfc_server().respond(f"n,,n={user},r=abc{extra}".encode())
