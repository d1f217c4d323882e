"""``AccessControl`` names a caller from its client certificate (PEM from grpc, DER from
Python's ``ssl``) on a listener that requires one, lets a token win over it, refuses a
certificate no mapping rule names, and keeps voter changes for controllers and super users
when no authorizer decides but callers authenticate."""

from __future__ import annotations

import re
import ssl
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from raftmeta.auth import ANONYMOUS, AccessControl, Acl, AclAuthorizer
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.security.principal import NODE_PRINCIPAL_RULES, parse_mapping_rules
from tests.security.support import TestPki

NODE_RULES = parse_mapping_rules(NODE_PRINCIPAL_RULES)
CERTIFICATE = re.compile(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n?", re.S)


def certificate_pem(pki: TestPki, common_name: str) -> bytes:
    """The leaf certificate of ``common_name``'s keystore, PEM."""
    found = CERTIFICATE.search(pki.node(common_name).keystore.read_bytes())
    assert found is not None
    return found.group(0)


class CallContext:
    """A grpc call's context as the services read it: metadata and the peer's certificate."""

    def __init__(self, certificate: bytes | None, *metadata: tuple[str, str]) -> None:
        self._certificate = certificate
        self._metadata = metadata

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def auth_context(self) -> Mapping[str, Iterable[bytes]]:
        return {} if self._certificate is None else {"x509_pem_cert": [self._certificate]}


def test_the_certificate_names_the_caller_where_one_is_required(tmp_path: Path) -> None:
    pki = TestPki.create(tmp_path)
    broker = certificate_pem(pki, "broker-7")
    access = AccessControl(tokens={"alice-token": "User:alice"}, client_certificates=True)
    assert access.principal((), broker, NODE_RULES) == "User:broker-7"
    der = ssl.PEM_cert_to_DER_cert(broker.decode())
    assert access.principal((), der, NODE_RULES) == "User:broker-7"
    assert access.principal((), certificate_pem(pki, "admin"), NODE_RULES) == "User:CN=admin"
    assert access.call_principal(CallContext(broker), NODE_RULES) == "User:broker-7"
    # A token wins over the certificate, as SASL over SSL does.
    with_token = CallContext(broker, ("authorization", "Bearer alice-token"))
    assert access.call_principal(with_token, NODE_RULES) == "User:alice"
    # A listener that does not require certificates names no caller by one.
    assert access.call_principal(CallContext(broker)) == ANONYMOUS
    assert access.call_principal(CallContext(None), NODE_RULES) == ANONYMOUS


def test_a_certificate_no_rule_names_fails_authentication(tmp_path: Path) -> None:
    pki = TestPki.create(tmp_path)
    nodes_only = parse_mapping_rules(r"RULE:^CN=(broker-[0-9]+)$/$1/")
    with pytest.raises(KafkaError) as refused:
        AccessControl().principal((), certificate_pem(pki, "intruder"), nodes_only)
    assert refused.value.code is ErrorCode.SASL_AUTHENTICATION_FAILED
    assert "CN=intruder" in refused.value.message


def test_without_an_authorizer_authenticated_voter_changes_are_controllers_and_super_users() -> (
    None
):
    access = AccessControl(super_users=["User:CN=admin"], client_certificates=True)
    for operation in ("Alter", "ClusterAction"):
        assert access.may_change_voters("User:controller-3000", operation)
        assert access.may_change_voters("User:CN=admin", operation)
        assert not access.may_change_voters("User:broker-7", operation)
        assert not access.may_change_voters("User:CN=intruder", operation)
        assert not access.may_change_voters(ANONYMOUS, operation)
    tokens = AccessControl(tokens={"t": "User:alice"})
    assert not tokens.may_change_voters("User:alice", "Alter")
    assert not tokens.may_change_voters(ANONYMOUS, "Alter")
    # Nobody authenticates: every caller is anonymous, and may, as before.
    assert AccessControl().may_change_voters(ANONYMOUS, "Alter")


def test_with_an_authorizer_its_acls_decide_voter_changes_and_quorum_descriptions() -> None:
    authorizer = AclAuthorizer([Acl("User:CN=ops", "Alter", "Cluster", "kafka-cluster")])
    access = AccessControl(authorizer, ["User:controller-3000"], client_certificates=True)
    assert access.may_change_voters("User:CN=ops", "Alter")
    assert access.may_change_voters("User:controller-3000", "Alter")
    assert not access.may_change_voters("User:broker-7", "Alter")
    assert access.may_describe_quorum("User:CN=ops")  # Alter implies Describe
    assert not access.may_describe_quorum("User:CN=intruder")
