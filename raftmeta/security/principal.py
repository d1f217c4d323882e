"""Who a TLS peer is: its certificate's subject, mapped to a Kafka principal.

Kafka names an mTLS client by its certificate's subject distinguished name in RFC 2253 form
(``CN=broker-7,O=Acme``), rewritten by ``ssl.principal.mapping.rules``: a comma-separated list
of ``RULE:pattern/replacement/`` entries, each optionally followed by ``L`` or ``U`` (lower or
upper case the result), and ``DEFAULT`` (the name unchanged). The first rule whose pattern
matches the whole name gives the principal ``User:<result>``; when none does, the peer is not
authenticated at all (Kafka fails the connection the same way). A client without a certificate
is ``User:ANONYMOUS``.

Rules are read as Kafka reads them: ``/`` inside a pattern or replacement is written ``\\/``;
in a replacement ``$1`` or ``${name}`` insert a group and ``\\x`` is a literal ``x``. Patterns
are Python regular expressions, which agree with Java's for the constructs mapping rules use
(groups, classes, anchors, lazy quantifiers). A rule that yields an empty name is treated as not
matching, since ``User:`` would name nobody.

The subject is read from the certificate grpc hands over (``x509_pem_cert`` in the call's
``auth_context()``) with ``cryptography``, not from grpc's ``x509_subject``: grpc prints
OpenSSL's names (``emailAddress=``) and orders multi-valued parts differently from Java,
while ``cryptography``'s RFC 4514 string uses the same keywords as Java's RFC 2253 output (CN,
L, ST, O, OU, C, STREET, DC, UID). Other attributes appear as a dotted OID with the text value,
where Java would print ``#`` and the hex of the DER value.

The naming convention for the cluster's own nodes is ``User:controller-<id>`` and
``User:broker-<id>``, from certificates whose subject is ``CN=controller-<id>`` or
``CN=broker-<id>`` under :data:`NODE_PRINCIPAL_RULES`.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from cryptography import x509

from raftmeta.config.errors import ConfigError

USER_TYPE = "User"


@dataclass(frozen=True, slots=True)
class KafkaPrincipal:
    """A principal as Kafka writes it: ``<type>:<name>``, here always of type ``User``."""

    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"


ANONYMOUS = KafkaPrincipal(USER_TYPE, "ANONYMOUS")


class PeerAuthenticationError(Exception):
    """A peer presented a certificate that names no principal (no rule matched, or it could
    not be read); the call must be refused as unauthenticated."""


@dataclass(frozen=True, slots=True)
class _Group:
    number: int | str


_Part = str | _Group


@dataclass(frozen=True, slots=True)
class MappingRule:
    """One ``RULE:pattern/replacement/[LU]`` entry, or ``DEFAULT`` when ``pattern`` is None."""

    source: str
    pattern: re.Pattern[str] | None = None
    replacement: tuple[_Part, ...] = ()
    case: str = ""
    """``"L"``, ``"U"`` or ``""``."""

    def apply(self, distinguished_name: str) -> str | None:
        """The name this rule gives ``distinguished_name``, or None if it does not apply."""
        if self.pattern is None:
            return distinguished_name
        if self.pattern.fullmatch(distinguished_name) is None:
            return None
        # Like Java's replaceAll on a whole-string match, which also sees the empty match at
        # the end of an unanchored pattern such as ``.*``: mapping rules behave as in Kafka.
        result = self.pattern.sub(self._render, distinguished_name)
        if self.case == "L":
            return result.lower()
        if self.case == "U":
            return result.upper()
        return result

    def _render(self, match: re.Match[str]) -> str:
        return "".join(
            part if isinstance(part, str) else (match.group(part.number) or "")
            for part in self.replacement
        )


@dataclass(frozen=True, slots=True)
class PrincipalMapper:
    """Parsed ``ssl.principal.mapping.rules``, applied in order."""

    rules: tuple[MappingRule, ...]

    def name_for(self, distinguished_name: str) -> str:
        """The principal name for a subject; raises :class:`PeerAuthenticationError`."""
        for rule in self.rules:
            name = rule.apply(distinguished_name)
            if name:
                return name
        raise PeerAuthenticationError(
            f"no ssl.principal.mapping.rules entry applies to {distinguished_name!r}"
        )

    def principal_for(self, distinguished_name: str) -> KafkaPrincipal:
        return KafkaPrincipal(USER_TYPE, self.name_for(distinguished_name))


DEFAULT_RULES = PrincipalMapper((MappingRule("DEFAULT"),))

NODE_PRINCIPAL_RULES = r"RULE:^CN=((controller|broker)-[0-9]+)$/$1/,DEFAULT"
"""Rules under which a node certificate ``CN=controller-3000`` is ``User:controller-3000``;
any other subject keeps its whole name (``User:CN=alice,O=Acme``), so it can never pass for a
node."""

# Kafka's own grammar for the rule list: a rule is DEFAULT, a RULE whose pattern and replacement
# may hold escaped characters (``\/``), or anything else up to the next comma, kept so it can be
# reported as an error. Rules are separated by commas; empty entries are skipped.
_RULE = r"(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(?:,\s*|$)")
_RULE_PARSER = re.compile(_RULE)


def parse_mapping_rules(value: str, key: str = "ssl.principal.mapping.rules") -> PrincipalMapper:
    """Parse Kafka's ``ssl.principal.mapping.rules``; raises :class:`ConfigError` naming ``key``."""
    entries = [m.group(1) for m in _RULE_SPLITTER.finditer(value.strip()) if m.group(1)]
    if not entries:
        raise ConfigError(f"Invalid configuration {key}: no rules (use DEFAULT for the whole name)")
    return PrincipalMapper(tuple(_parse_rule(entry, key) for entry in entries))


def _parse_rule(entry: str, key: str) -> MappingRule:
    match = _RULE_PARSER.match(entry)
    if match is None or match.end() != len(entry) or match.group(5) is not None:
        raise ConfigError(
            f"Invalid configuration {key}: {entry!r} is not DEFAULT or "
            "RULE:pattern/replacement/ with an optional L or U"
        )
    if match.group(1) is not None:
        return MappingRule(entry)
    try:
        pattern = re.compile(match.group(2))
    except re.error as error:
        raise ConfigError(
            f"Invalid configuration {key}: rule {entry!r} has a bad pattern: {error}"
        ) from None
    replacement = _parse_replacement(match.group(3), pattern, entry, key)
    return MappingRule(entry, pattern, replacement, match.group(4))


def _parse_replacement(
    text: str, pattern: re.Pattern[str], entry: str, key: str
) -> tuple[_Part, ...]:
    """Java's replacement syntax: ``$n`` (as many digits as name a group), ``${name}``, ``\\x``."""
    parts: list[_Part] = []
    literal: list[str] = []
    index = 0

    def bad(why: str) -> ConfigError:
        return ConfigError(f"Invalid configuration {key}: rule {entry!r}: {why}")

    while index < len(text):
        char = text[index]
        if char == "\\":
            if index + 1 == len(text):
                raise bad("the replacement ends with a lone backslash")
            literal.append(text[index + 1])
            index += 2
            continue
        if char != "$":
            literal.append(char)
            index += 1
            continue
        group: int | str
        if text.startswith("{", index + 1):
            end = text.find("}", index + 2)
            group = text[index + 2 : end] if end != -1 else ""
            if not group or group not in pattern.groupindex:
                raise bad(f"the replacement names no group of the pattern at {text[index:]!r}")
            index = end + 1
        else:
            digits = index + 1
            if digits == len(text) or not text[digits].isdigit():
                raise bad("a $ in the replacement must be followed by a group number or {name}")
            group = int(text[digits])
            digits += 1
            while digits < len(text) and text[digits].isdigit():
                longer = group * 10 + int(text[digits])
                if longer > pattern.groups:
                    break
                group = longer
                digits += 1
            if group > pattern.groups:
                raise bad(f"the replacement refers to group {group}, the pattern has fewer")
            index = digits
        if literal:
            parts.append("".join(literal))
            literal = []
        parts.append(_Group(group))
    if literal:
        parts.append("".join(literal))
    return tuple(parts)


@functools.lru_cache(maxsize=1024)
def subject_name(certificate: bytes) -> str:
    """A certificate's subject in RFC 2253/4514 form (most specific part first), from PEM (as
    grpc hands it over) or DER (as Python's ``ssl`` does)."""
    if certificate.lstrip().startswith(b"-----BEGIN"):
        loaded = x509.load_pem_x509_certificate(certificate)
    else:
        loaded = x509.load_der_x509_certificate(certificate)
    return loaded.subject.rfc4514_string()


def certificate_principal(
    certificate: bytes, mapper: PrincipalMapper = DEFAULT_RULES
) -> KafkaPrincipal:
    """The principal of a client certificate (PEM or DER) under ``mapper``; raises
    :class:`PeerAuthenticationError` when it cannot be read or no rule names it."""
    try:
        subject = subject_name(bytes(certificate))
    except ValueError as error:
        raise PeerAuthenticationError(f"unreadable peer certificate: {error}") from None
    return mapper.principal_for(subject)


def parse_principal(text: str) -> KafkaPrincipal:
    """``User:alice`` as a :class:`KafkaPrincipal` (the type is what precedes the first colon)."""
    principal_type, _, name = text.partition(":")
    return KafkaPrincipal(principal_type, name)


class HasAuthContext(Protocol):
    """What a grpc (or grpc.aio) ``ServicerContext`` offers that names the peer."""

    def auth_context(self) -> Mapping[str, Iterable[bytes]]: ...


def peer_principal(
    auth_context: Mapping[str, Iterable[bytes]], mapper: PrincipalMapper = DEFAULT_RULES
) -> KafkaPrincipal:
    """The principal of the peer described by a grpc ``auth_context()``: ``User:ANONYMOUS``
    over plaintext or without a client certificate, else its subject through ``mapper``.
    Raises :class:`PeerAuthenticationError` when the certificate names no principal."""
    certificate = next(iter(auth_context.get("x509_pem_cert", ())), None)
    if certificate is None:
        return ANONYMOUS
    return certificate_principal(bytes(certificate), mapper)


def context_principal(
    context: HasAuthContext, mapper: PrincipalMapper = DEFAULT_RULES
) -> KafkaPrincipal:
    """:func:`peer_principal` of the caller of the RPC ``context`` serves."""
    return peer_principal(context.auth_context(), mapper)


class NodeRole(enum.StrEnum):
    CONTROLLER = "controller"
    BROKER = "broker"


@dataclass(frozen=True, slots=True)
class NodeIdentity:
    """A cluster node as its principal names it (``User:broker-7``)."""

    role: NodeRole
    node_id: int

    @property
    def principal(self) -> KafkaPrincipal:
        return KafkaPrincipal(USER_TYPE, f"{self.role}-{self.node_id}")


_NODE_NAME = re.compile(r"(controller|broker)-(0|[1-9][0-9]{0,9})")


def node_identity(principal: KafkaPrincipal) -> NodeIdentity | None:
    """The node a principal names under the convention, or None for any other principal."""
    if principal.principal_type != USER_TYPE:
        return None
    match = _NODE_NAME.fullmatch(principal.name)
    if match is None or int(match.group(2)) > 2**31 - 1:
        return None
    return NodeIdentity(NodeRole(match.group(1)), int(match.group(2)))


def controller_principal(node_id: int) -> KafkaPrincipal:
    return NodeIdentity(NodeRole.CONTROLLER, node_id).principal


def broker_principal(node_id: int) -> KafkaPrincipal:
    return NodeIdentity(NodeRole.BROKER, node_id).principal
