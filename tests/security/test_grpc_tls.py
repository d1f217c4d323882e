"""Real grpc.aio servers on 127.0.0.1 with the credentials the settings build.

The server answers DescribeQuorum with the caller's principal in ``cluster_id``, so each test
sees both whether a connection was let in and whom the server took the caller for. A refused
TLS handshake reaches the client as UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest

from raftmeta.rpc import raft_pb2, raft_pb2_grpc
from raftmeta.security.certs import new_certificate_authority, write_private
from raftmeta.security.credentials import channel_credentials, server_credentials
from raftmeta.security.principal import PeerAuthenticationError, PrincipalMapper, context_principal
from raftmeta.security.tls import TlsSettings, parse_tls_settings
from tests.security.support import TestPki

CALL_TIMEOUT_S = 10.0


class _WhoAmI(raft_pb2_grpc.RaftServicer):
    def __init__(self, mapper: PrincipalMapper) -> None:
        self._mapper = mapper

    async def DescribeQuorum(
        self, request: raft_pb2.DescribeQuorumRequest, context: Any
    ) -> raft_pb2.DescribeQuorumResponse:
        try:
            principal = context_principal(context, self._mapper)
        except PeerAuthenticationError as error:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, str(error))
        return raft_pb2.DescribeQuorumResponse(cluster_id=str(principal))


@asynccontextmanager
async def _server(settings: TlsSettings) -> AsyncIterator[str]:
    server = grpc.aio.server()
    raft_pb2_grpc.add_RaftServicer_to_server(_WhoAmI(settings.principal_mapper), server)
    port = server.add_secure_port("127.0.0.1:0", server_credentials(settings))
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(None)


async def _who_am_i(target: str, client: Mapping[str, str] | None) -> str:
    """The principal the server names the caller, over a new channel (so a new connection);
    ``client`` None means plaintext."""
    if client is None:
        channel = grpc.aio.insecure_channel(target)
    else:
        channel = grpc.aio.secure_channel(target, channel_credentials(parse_tls_settings(client)))
    async with channel:
        stub = raft_pb2_grpc.RaftStub(channel)
        request = raft_pb2.DescribeQuorumRequest()
        response = await stub.DescribeQuorum(request, timeout=CALL_TIMEOUT_S)
        return response.cluster_id


async def _refused(target: str, client: Mapping[str, str] | None) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _who_am_i(target, client)
    code: grpc.StatusCode = raised.value.code()
    return code


@pytest.fixture
def pki(tmp_path: Path) -> TestPki:
    return TestPki.create(tmp_path / "pki")


def test_mutual_tls_lets_in_good_certificates_only(pki: TestPki, tmp_path: Path) -> None:
    stranger = TestPki.create(tmp_path / "stranger", "another CA")

    async def main() -> None:
        async with _server(parse_tls_settings(pki.properties("controller-3000"))) as target:
            assert await _who_am_i(target, pki.properties("broker-7")) == "User:broker-7"
            assert await _who_am_i(target, pki.properties("controller-3001")) == (
                "User:controller-3001"
            )
            # Plaintext, a certificate from another CA, and no certificate at all.
            assert await _refused(target, None) is grpc.StatusCode.UNAVAILABLE
            impostor = stranger.node("broker-7")
            forged = {
                **impostor.properties(),
                "ssl.truststore.location": str(pki.node("x").truststore),
            }
            assert await _refused(target, forged) is grpc.StatusCode.UNAVAILABLE
            no_certificate = {"ssl.truststore.location": str(pki.directory / "ca.pem")}
            assert await _refused(target, no_certificate) is grpc.StatusCode.UNAVAILABLE

    asyncio.run(main())


def test_the_client_checks_the_server_too(pki: TestPki, tmp_path: Path) -> None:
    stranger = TestPki.create(tmp_path / "stranger", "another CA")

    async def main() -> None:
        server = parse_tls_settings(stranger.properties("controller-3000", client_auth="none"))
        async with _server(server) as target:
            trusting_pki = pki.properties("broker-7")
            assert await _refused(target, trusting_pki) is grpc.StatusCode.UNAVAILABLE

    asyncio.run(main())


def test_without_client_auth_every_tls_caller_is_anonymous(pki: TestPki) -> None:
    async def main() -> None:
        server = parse_tls_settings(pki.properties("controller-3000", client_auth="none"))
        async with _server(server) as target:
            no_certificate = {"ssl.truststore.location": str(pki.directory / "ca.pem")}
            assert await _who_am_i(target, no_certificate) == "User:ANONYMOUS"
            # grpc does not ask for a certificate it would not require, so even one sent is
            # not seen: Kafka's "requested" is refused by the settings parser for this reason.
            assert await _who_am_i(target, pki.properties("broker-7")) == "User:ANONYMOUS"
            assert await _refused(target, None) is grpc.StatusCode.UNAVAILABLE

    asyncio.run(main())


def test_mapping_rules_name_the_caller_or_refuse_it(pki: TestPki) -> None:
    async def main() -> None:
        properties = {
            **pki.properties("controller-3000"),
            "ssl.principal.mapping.rules": "RULE:^CN=broker-([0-9]+)$/node$1/U",
        }
        async with _server(parse_tls_settings(properties)) as target:
            assert await _who_am_i(target, pki.properties("broker-7")) == "User:NODE7"
            assert await _refused(target, pki.properties("admin")) is (
                grpc.StatusCode.UNAUTHENTICATED
            )

    asyncio.run(main())


def test_inline_pem_on_both_sides(pki: TestPki) -> None:
    server_cert = pki.ca.issue("controller-3000")
    client_cert = pki.ca.issue("broker-7")
    truststore = pki.ca.certificate_pem.decode()

    def inline(chain: bytes, key: bytes) -> dict[str, str]:
        return {
            "ssl.keystore.certificate.chain": chain.decode(),
            "ssl.keystore.key": key.decode(),
            "ssl.truststore.certificates": truststore,
            "ssl.client.auth": "required",
        }

    async def main() -> None:
        server = parse_tls_settings(inline(server_cert.chain_pem, server_cert.key_pem))
        async with _server(server) as target:
            client = inline(client_cert.chain_pem, client_cert.key_pem)
            assert await _who_am_i(target, client) == "User:CN=broker-7"

    asyncio.run(main())


def test_a_renewed_certificate_serves_new_connections(pki: TestPki, tmp_path: Path) -> None:
    """The server's keystore file is replaced by one from a new CA: a new connection gets the
    new certificate (only clients trusting the new CA get in), without a restart; a renewal
    that cannot be read leaves the current certificate in place."""
    renewed_ca = TestPki.create(tmp_path / "renewed", "renewed CA")
    server_files = pki.node("controller-3000")
    old_clients = {"ssl.truststore.location": str(pki.directory / "ca.pem")}
    new_clients = {"ssl.truststore.location": str(renewed_ca.directory / "ca.pem")}

    async def main() -> None:
        settings = parse_tls_settings(server_files.properties(client_auth="none"))
        async with _server(settings) as target:
            assert await _who_am_i(target, old_clients) == "User:ANONYMOUS"
            assert await _refused(target, new_clients) is grpc.StatusCode.UNAVAILABLE

            renewed = renewed_ca.ca.issue("controller-3000")
            write_private(server_files.keystore, renewed.keystore_pem)
            assert await _who_am_i(target, new_clients) == "User:ANONYMOUS"
            assert await _refused(target, old_clients) is grpc.StatusCode.UNAVAILABLE

            # A half-written or mismatched renewal is not applied.
            other_key = new_certificate_authority().issue("x").key_pem
            write_private(server_files.keystore, other_key + renewed.chain_pem)
            assert await _who_am_i(target, new_clients) == "User:ANONYMOUS"

    asyncio.run(main())
