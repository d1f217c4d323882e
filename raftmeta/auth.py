"""Who is calling, and may they: bearer-token principals and a pluggable authorizer.

As in Kafka, authorization is off unless ``authorizer.class.name`` names an authorizer: with
none configured every request is allowed. An authorizer is any class with
``authorize(principal, operation, resource_type, resource_name) -> bool``, built with no
arguments and, if it has one, given the node's settings through ``configure(mapping)`` and
the node's committed metadata image through ``attach_image(source)``.

The built-in :class:`StandardAuthorizer` (Kafka's KRaft authorizer) decides from the ACLs in
the metadata log, so every controller enforces the same rules: CreateAcls, DescribeAcls and
DeleteAcls change them, and a node's own configuration holds only ``super.users``, the
bootstrap principals allowed everything (the ones who create the first ACLs). The older
:class:`AclAuthorizer` reads per-node allow rules from ``raftmeta.acls``; it is kept for
existing configurations and warns that its rules are per node.

Principals are Kafka-shaped strings (``User:alice``), named in one place,
:meth:`AccessControl.principal`, for every door (Admin, BrokerLifecycle, Raft, the Kafka
listener). On a listener that requires client certificates the caller is its certificate's
principal (the subject through ``ssl.principal.mapping.rules``: ``User:controller-3000``,
``User:broker-7``, ``User:CN=admin``). A caller may instead name itself with call metadata
``authorization: Bearer <token>`` (or a SASL/PLAIN login on the Kafka listener); the tokens
file (``raftmeta.auth.tokens.file``, lines of ``token=User:name``) maps tokens to principals,
and a token wins over the certificate, as SASL over SSL does in Kafka. A call with neither is
``User:ANONYMOUS``; a token the file does not hold, a malformed header, or a certificate no
mapping rule names fails authentication with SASL_AUTHENTICATION_FAILED. Principals in
``super.users`` are allowed everything, whatever the authorizer says.

Voter changes decide who commits the log, so they need more than an open door: ALTER (or
CLUSTER_ACTION) on the CLUSTER from the authorizer, and, with no authorizer but authentication
on (client certificates required, or a tokens file), a controller's own principal
(``User:controller-<id>``) or a super user: any other certificate the CA signed, a broker's
included, changes no voter.

Operations and resource types use Kafka's names: ElectLeaders needs ALTER on CLUSTER (the
resource named ``kafka-cluster``), CreateTopics CREATE on CLUSTER or on the TOPIC, and so on.
"""

from __future__ import annotations

import enum
import hmac
import importlib
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from raftmeta.config.errors import ConfigError
from raftmeta.config.node import RaftmetaConfig
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import AclOperation, AclPermissionType, AclResourceType
from raftmeta.security.principal import (
    NodeRole,
    PeerAuthenticationError,
    PrincipalMapper,
    certificate_principal,
    node_identity,
    parse_principal,
)

log = logging.getLogger(__name__)

ANONYMOUS = "User:ANONYMOUS"
CLUSTER_NAME = "kafka-cluster"
"""The name of the one CLUSTER resource, as in Kafka."""
ACLS_KEY = "raftmeta.acls"
TOKENS_FILE_KEY = "raftmeta.auth.tokens.file"
AUTHORIZER_KEY = "authorizer.class.name"


class Operation(enum.StrEnum):
    """Kafka's ACL operations, as ACLs and authorizers name them."""

    ALL = "All"
    READ = "Read"
    WRITE = "Write"
    CREATE = "Create"
    DELETE = "Delete"
    ALTER = "Alter"
    DESCRIBE = "Describe"
    CLUSTER_ACTION = "ClusterAction"
    DESCRIBE_CONFIGS = "DescribeConfigs"
    ALTER_CONFIGS = "AlterConfigs"


class ResourceType(enum.StrEnum):
    CLUSTER = "Cluster"
    TOPIC = "Topic"


@runtime_checkable
class Authorizer(Protocol):
    def authorize(
        self, principal: str, operation: str, resource_type: str, resource_name: str
    ) -> bool: ...


# Kafka: DESCRIBE is implied by READ, WRITE, DELETE or ALTER; DESCRIBE_CONFIGS by ALTER_CONFIGS.
_IMPLIED_BY: Mapping[str, frozenset[str]] = {
    Operation.DESCRIBE: frozenset(
        {Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER}
    ),
    Operation.DESCRIBE_CONFIGS: frozenset({Operation.ALTER_CONFIGS}),
}


@dataclass(frozen=True, slots=True)
class Acl:
    """One allow rule; ``*`` as the principal's name or as the resource name matches any."""

    principal: str
    operation: str
    resource_type: str
    resource_name: str

    @classmethod
    def parse(cls, text: str) -> Acl:
        """``User:alice:Alter:Cluster:kafka-cluster`` (principal, operation, type, name)."""
        parts = [part.strip() for part in text.strip().split(":", 4)]
        if len(parts) != 5 or not all(parts):
            raise ConfigError(
                f"Invalid value '{text.strip()}' for configuration {ACLS_KEY}: expected "
                "PrincipalType:name:Operation:ResourceType:resource-name"
            )
        principal_type, name, operation, resource_type, resource_name = parts
        operations = {op.value.lower(): op.value for op in Operation}
        types = {kind.value.lower(): kind.value for kind in ResourceType}
        if operation.lower() not in operations:
            raise ConfigError(
                f"Invalid value '{text.strip()}' for configuration {ACLS_KEY}: unknown operation "
                f"{operation!r}; expected one of {', '.join(op.value for op in Operation)}"
            )
        if resource_type.lower() not in types:
            raise ConfigError(
                f"Invalid value '{text.strip()}' for configuration {ACLS_KEY}: unknown resource "
                f"type {resource_type!r}; expected Cluster or Topic"
            )
        return cls(
            f"{principal_type}:{name}",
            operations[operation.lower()],
            types[resource_type.lower()],
            resource_name,
        )

    def allows(self, principal: str, operation: str, resource_type: str, name: str) -> bool:
        if self.principal != principal:
            kind, _, who = self.principal.partition(":")
            if who != "*" or principal.partition(":")[0] != kind:
                return False
        if self.resource_type != resource_type:
            return False
        if self.resource_name not in ("*", name):
            return False
        return self.operation in (operation, Operation.ALL) or self.operation in _IMPLIED_BY.get(
            operation, frozenset()
        )


class AclAuthorizer:
    """Allows exactly what the ``raftmeta.acls`` rules (comma-separated :class:`Acl` texts)
    allow; everything else is denied, as Kafka does once an authorizer is on.

    Its rules live in one node's configuration, so two controllers can enforce different
    rules: :class:`StandardAuthorizer` reads ACLs from the metadata log instead."""

    def __init__(self, acls: Iterable[Acl] = ()) -> None:
        self.acls: tuple[Acl, ...] = tuple(acls)

    def configure(self, config: Mapping[str, str]) -> None:
        raw = config.get(ACLS_KEY, "")
        self.acls = tuple(Acl.parse(item) for item in raw.split(",") if item.strip())
        if self.acls:
            log.warning(
                "%s holds per-node rules that other controllers may not share; use "
                "authorizer.class.name=raftmeta.auth.StandardAuthorizer with CreateAcls, "
                "keeping only super.users in the node's configuration",
                ACLS_KEY,
            )

    def authorize(
        self, principal: str, operation: str, resource_type: str, resource_name: str
    ) -> bool:
        return any(
            acl.allows(principal, operation, resource_type, resource_name) for acl in self.acls
        )


ALLOW_EVERYONE_KEY = "allow.everyone.if.no.acl.found"

_ACL_OPERATION: Mapping[str, int] = {
    Operation.ALL: AclOperation.ALL,
    Operation.READ: AclOperation.READ,
    Operation.WRITE: AclOperation.WRITE,
    Operation.CREATE: AclOperation.CREATE,
    Operation.DELETE: AclOperation.DELETE,
    Operation.ALTER: AclOperation.ALTER,
    Operation.DESCRIBE: AclOperation.DESCRIBE,
    Operation.CLUSTER_ACTION: AclOperation.CLUSTER_ACTION,
    Operation.DESCRIBE_CONFIGS: AclOperation.DESCRIBE_CONFIGS,
    Operation.ALTER_CONFIGS: AclOperation.ALTER_CONFIGS,
}
_ACL_RESOURCE_TYPE: Mapping[str, int] = {
    ResourceType.CLUSTER: AclResourceType.CLUSTER,
    ResourceType.TOPIC: AclResourceType.TOPIC,
}
# An ALLOW for one of these operations also allows DESCRIBE (or DESCRIBE_CONFIGS), as in
# Kafka; a DENY applies to its own operation (and ALL) only.
_ALLOWED_BY: Mapping[int, frozenset[int]] = {
    AclOperation.DESCRIBE: frozenset(
        {AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER}
    ),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.ALTER_CONFIGS}),
}
_WILDCARD_HOST = "*"


class StandardAuthorizer:
    """Kafka's KRaft ``StandardAuthorizer``: decides from the ACLs in the metadata image.

    For a principal, an operation and a resource it takes every ACL that applies to the
    resource (LITERAL on its name or on ``*``, PREFIXED on a prefix of its name) whose
    principal is the caller's or ``User:*`` and whose host is ``*`` or the caller's. Any such
    DENY for the operation (or ALL) refuses; otherwise an ALLOW for the operation, for ALL, or
    for one that implies it (READ, WRITE, DELETE, ALTER imply DESCRIBE; ALTER_CONFIGS implies
    DESCRIBE_CONFIGS) allows. With no ACL on the resource at all, ``allow.everyone.if.no.acl.
    found`` decides (false by default). Until a node hands it its image every request is
    refused. A caller whose host is not known is matched only by host ``*`` ALLOWs, while
    DENYs for any host apply to it.
    """

    def __init__(self, image_source: Callable[[], MetadataImage] | None = None) -> None:
        self._image_source = image_source
        self.allow_everyone_if_no_acl_found = False

    def configure(self, config: Mapping[str, str]) -> None:
        raw = str(config.get(ALLOW_EVERYONE_KEY, "false")).strip().lower()
        if raw not in ("true", "false"):
            raise ConfigError(
                f"Invalid value '{raw}' for configuration {ALLOW_EVERYONE_KEY}: "
                "expected true or false"
            )
        self.allow_everyone_if_no_acl_found = raw == "true"

    def attach_image(self, image_source: Callable[[], MetadataImage]) -> None:
        """Decide from the image ``image_source`` returns at each call (the node's committed
        image, which every controller replays from the same log)."""
        self._image_source = image_source

    def authorize(
        self,
        principal: str,
        operation: str,
        resource_type: str,
        resource_name: str,
        host: str | None = None,
    ) -> bool:
        if self._image_source is None:
            return False
        acl_operation = _ACL_OPERATION.get(operation)
        kind = _ACL_RESOURCE_TYPE.get(resource_type)
        if acl_operation is None or kind is None:
            return False
        principal_type = principal.partition(":")[0]
        wildcard_principal = f"{principal_type}:*"
        implied_by = _ALLOWED_BY.get(acl_operation, frozenset())
        any_acl = False
        allowed = False
        for acl in self._image_source().acls.applicable(kind, resource_name):
            any_acl = True
            if acl.principal != principal and acl.principal != wildcard_principal:
                continue
            if acl.permission_type == AclPermissionType.DENY:
                if acl.host != _WILDCARD_HOST and host is not None and acl.host != host:
                    continue
                if acl.operation in (acl_operation, AclOperation.ALL):
                    return False
                continue
            if acl.host != _WILDCARD_HOST and acl.host != host:
                continue
            if (
                acl.operation == acl_operation
                or acl.operation == AclOperation.ALL
                or acl.operation in implied_by
            ):
                allowed = True
        if not any_acl:
            return self.allow_everyone_if_no_acl_found
        return allowed


def load_authorizer(dotted_path: str, config: Mapping[str, str]) -> Authorizer:
    """Import, build and configure the authorizer ``dotted_path`` names (``pkg.mod.Class`` or
    ``pkg.mod:Class``), or raise ``ConfigError`` with one line saying why not."""
    path = dotted_path.strip()
    where = f"{AUTHORIZER_KEY}={path!r}"
    module_name, colon, attribute = path.partition(":")
    if not colon:
        module_name, _, attribute = path.rpartition(".")
    if not module_name or not attribute:
        raise ConfigError(f"{where}: expected package.module.ClassName")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        raise ConfigError(f"{where}: cannot import {module_name}: {error}") from None
    factory = getattr(module, attribute, None)
    if factory is None:
        raise ConfigError(f"{where}: module {module_name} has no {attribute}")
    if not inspect.isclass(factory):
        raise ConfigError(f"{where} is not a class")
    if not callable(getattr(factory, "authorize", None)):
        raise ConfigError(
            f"{where}: {factory.__qualname__} is not an authorizer: it has no "
            "authorize(principal, operation, resource_type, resource_name) method"
        )
    try:
        authorizer = factory()
        configure = getattr(authorizer, "configure", None)
        if callable(configure):
            configure(config)
    except ConfigError:
        raise
    except Exception as error:
        message = str(error).replace("\n", " ")
        raise ConfigError(f"{where}: {factory.__qualname__} failed to start: {message}") from None
    assert isinstance(authorizer, Authorizer)
    return authorizer


def read_tokens(path: str) -> dict[str, str]:
    """The tokens file: ``token=User:name`` lines; blank lines and ``#`` comments skipped."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise ConfigError(f"Cannot read {TOKENS_FILE_KEY} {path}: {reason}") from None
    tokens: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        token, equals, principal = line.partition("=")
        token, principal = token.strip(), principal.strip()
        kind, colon, name = principal.partition(":")
        if not equals or not token or not colon or not kind or not name:
            raise ConfigError(
                f"{TOKENS_FILE_KEY} {path} line {number}: expected token=PrincipalType:name"
            )
        tokens[token] = principal
    return tokens


def _lookup_token(tokens: Mapping[str, str], presented: str) -> str | None:
    """The principal of ``presented``, comparing it with every known token in constant time,
    so the time taken says nothing about how much of a token an attacker guessed right."""
    wanted = presented.encode()
    found: str | None = None
    for token, principal in tokens.items():
        if hmac.compare_digest(token.encode(), wanted):
            found = principal
    return found


def call_metadata(context: object) -> tuple[tuple[str, str | bytes], ...]:
    """A gRPC call's metadata (its bearer token, say) as plain pairs; none without a context."""
    invocation_metadata = getattr(context, "invocation_metadata", None)
    metadata = invocation_metadata() if callable(invocation_metadata) else None
    return tuple((item[0], item[1]) for item in metadata or ())


class AccessControl:
    """Authentication (certificate or token → principal) and authorization for one node's
    services."""

    def __init__(
        self,
        authorizer: Authorizer | None = None,
        super_users: Iterable[str] = (),
        tokens: Mapping[str, str] | None = None,
        *,
        client_certificates: bool = False,
    ) -> None:
        self.authorizer = authorizer
        self.super_users = frozenset(user.strip() for user in super_users if user.strip())
        self.tokens = dict(tokens) if tokens is not None else None
        """``None``: no tokens file, so tokens are not checked."""
        self.client_certificates = client_certificates
        """Whether the node's controller listener requires client certificates."""

    @property
    def authenticates(self) -> bool:
        """Whether callers prove who they are: client certificates required, or tokens."""
        return self.client_certificates or self.tokens is not None

    def attach_image(self, image_source: Callable[[], MetadataImage]) -> None:
        """Hand the node's committed image to an authorizer that decides from it."""
        attach = getattr(self.authorizer, "attach_image", None)
        if callable(attach):
            attach(image_source)

    @classmethod
    def from_config(
        cls, config: RaftmetaConfig, *, client_certificates: bool = False
    ) -> AccessControl:
        authorizer = None
        if config.authorizer_class_name:
            authorizer = load_authorizer(config.authorizer_class_name, config.originals)
        tokens_file = config.raftmeta_auth_tokens_file
        tokens = read_tokens(tokens_file) if tokens_file else None
        return cls(authorizer, config.super_users, tokens, client_certificates=client_certificates)

    def call_principal(self, context: object, mapper: PrincipalMapper | None = None) -> str:
        """The principal of a gRPC call: :meth:`principal` of its metadata and, with
        ``mapper`` (a listener that requires client certificates), of its certificate."""
        certificate = None if mapper is None else grpc_certificate(context)
        metadata = call_metadata(context) if self.tokens is not None else ()
        return self.principal(metadata, certificate, mapper)

    def principal(
        self,
        metadata: Iterable[tuple[str, str | bytes]] | None,
        certificate: bytes | None = None,
        mapper: PrincipalMapper | None = None,
    ) -> str:
        """The caller's principal, computed here for every door; SASL_AUTHENTICATION_FAILED
        for a token that is not known, a malformed ``authorization`` header, or a
        certificate that ``mapper`` names no principal for.

        ``certificate`` is the caller's TLS client certificate (PEM or DER) on a listener that
        requires one, ``mapper`` that listener's ``ssl.principal.mapping.rules``: a call that
        presents no token is the certificate's principal (as Kafka names an SSL listener's
        client), one that presents a token is the token's (as SASL over SSL does). Without
        either the caller is ``User:ANONYMOUS``."""
        named = ANONYMOUS
        if certificate is not None and mapper is not None:
            try:
                named = str(certificate_principal(certificate, mapper))
            except PeerAuthenticationError as error:
                raise KafkaError(
                    ErrorCode.SASL_AUTHENTICATION_FAILED, f"Authentication failed: {error}"
                ) from None
        header: str | None = None
        for key, value in metadata or ():
            if key.lower() == "authorization":
                header = value.decode() if isinstance(value, bytes) else value
        if header is None or self.tokens is None:
            return named
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise KafkaError(
                ErrorCode.SASL_AUTHENTICATION_FAILED,
                "Authentication failed: expected 'authorization: Bearer <token>'",
            )
        principal = _lookup_token(self.tokens, token.strip())
        if principal is None:
            raise KafkaError(
                ErrorCode.SASL_AUTHENTICATION_FAILED, "Authentication failed: unknown token"
            )
        return principal

    def caller_principal(self, context: object, mapper: PrincipalMapper | None) -> str:
        """:meth:`call_principal`, as the Raft runtime asks for it (it names no access of its
        own): how the Raft service learns who asks for a voter change."""
        return self.call_principal(context, mapper)

    def may_change_voters(self, principal: str, operation: str) -> bool:
        """Whether ``principal`` may perform ``operation`` (Kafka's name: ``Alter`` or
        ``ClusterAction``) on the CLUSTER as a voter change: the authorizer's decision, as for
        the Admin service's cluster-wide calls, and, with no authorizer but authentication
        on, only a controller or a super user (see the module docstring)."""
        if not self.allowed(principal, Operation(operation), ResourceType.CLUSTER, CLUSTER_NAME):
            return False
        if self.authorizer is not None or not self.authenticates:
            return True
        return principal in self.super_users or is_controller(principal)

    def may_describe_quorum(self, principal: str) -> bool:
        """Whether ``principal`` may describe the quorum on the Raft service: DESCRIBE on the
        CLUSTER, as on the Admin service."""
        return self.allowed(principal, Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)

    def allowed(
        self, principal: str, operation: str, resource_type: str, resource_name: str
    ) -> bool:
        if self.authorizer is None or principal in self.super_users:
            return True
        try:
            return bool(
                self.authorizer.authorize(principal, operation, resource_type, resource_name)
            )
        except Exception:
            log.exception("the authorizer failed; denying %s %s", principal, operation)
            return False


def is_controller(principal: str) -> bool:
    """Whether ``principal`` names a controller (``User:controller-<id>``)."""
    identity = node_identity(parse_principal(principal))
    return identity is not None and identity.role is NodeRole.CONTROLLER


def grpc_certificate(context: object) -> bytes | None:
    """The client certificate (PEM) of the gRPC call ``context``, if it presented one."""
    auth_context = getattr(context, "auth_context", None)
    if not callable(auth_context):
        return None
    found = next(iter(auth_context().get("x509_pem_cert", ())), None)
    return None if found is None else bytes(found)
