"""``format --add-scram`` values as kafka-storage takes them."""

from __future__ import annotations

import base64

import pytest

from raftmeta.cli.scram_arguments import ScramArgumentError, parse_add_scram
from raftmeta.security.scram import (
    ScramMechanism,
    credential_from_password,
    credential_from_salted_password,
)


def test_a_password_becomes_a_salted_credential() -> None:
    name, mechanism, credential = parse_add_scram(
        "SCRAM-SHA-256=[name=alice,password=alice-secret]"
    )
    assert (name, mechanism, credential.iterations) == ("alice", ScramMechanism.SCRAM_SHA_256, 4096)
    again = credential_from_password(mechanism, "alice-secret", salt=credential.salt)
    assert again == credential


def test_a_salted_password_with_its_salt_and_iterations() -> None:
    name, mechanism, credential = parse_add_scram(
        'SCRAM-SHA-512=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="]'
    )
    assert (name, mechanism) == ("alice", ScramMechanism.SCRAM_SHA_512)
    assert credential == credential_from_salted_password(
        mechanism, base64.b64decode("N3E="), base64.b64decode("YCE="), 8192
    )


def test_a_quoted_password_may_hold_commas() -> None:
    _, mechanism, credential = parse_add_scram(
        'SCRAM-SHA-256=[name=bob,password="a,b]c",salt="N3E="]'
    )
    assert credential == credential_from_password(mechanism, "a,b]c", salt=base64.b64decode("N3E="))


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("SCRAM-SHA-1=[name=a,password=p]", "expected SCRAM-SHA-256"),
        ("SCRAM-SHA-256=name=a,password=p", "brackets"),
        ("SCRAM-SHA-256=[password=p]", "name is required"),
        ("SCRAM-SHA-256=[name=a]", "password or saltedpassword"),
        ("SCRAM-SHA-256=[name=a,password=p,iterations=100]", "Too few iterations"),
        ("SCRAM-SHA-256=[name=a,password=p,iterations=20000]", "Too many iterations"),
        ("SCRAM-SHA-256=[name=a,saltedpassword=YCE=]", "needs salt"),
        ("SCRAM-SHA-256=[name=a,password=p,salt=!!]", "salt is not base64"),
        ("SCRAM-SHA-256=[name=a,pass=p]", "unknown key"),
        ("SCRAM-SHA-256=[name=a,name=b,password=p]", "twice"),
        ('SCRAM-SHA-256=[name=a,password="p]', "closing quote"),
    ],
)
def test_malformed_values_are_refused_without_quoting_the_password(value: str, words: str) -> None:
    with pytest.raises(ScramArgumentError) as refused:
        parse_add_scram(value)
    assert words in str(refused.value)
    assert "=p" not in str(refused.value)
