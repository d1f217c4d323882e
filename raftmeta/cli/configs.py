"""``raftmeta configs``: describe and alter topic and broker configs and client quotas, in the
shape of Kafka's ``kafka-configs.sh``.

``--entity-type`` names what to act on: ``topics`` and ``brokers`` (configs; a broker by id,
or ``--entity-default`` for the cluster-wide defaults), ``users``, ``clients`` and ``ips``
(client quotas; ``--entity-default`` for the type's default entity, ``users`` and ``clients``
together for a user with a client id; for one named user also SCRAM credentials,
``--add-config 'SCRAM-SHA-256=[iterations=8192,password=secret]'`` and ``--delete-config
SCRAM-SHA-256``, salted by the admin client so the password never crosses the wire).
``--describe`` prints Kafka's blocks ("Dynamic configs for topic t are:", one ``name=value
sensitive=... synonyms={...}`` line each; "Quota configs for user-principal 'alice' are ...";
"SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192");
``--alter`` sets ``--add-config`` and deletes
``--delete-config`` keys, then prints "Completed updating config for topic t.". A command line
that cannot work exits 2 with one line; a refusal by the controller exits 1 with one line.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from raftmeta.cli.admin_options import add_connection_options, admin_connection, run_admin
from raftmeta.cli.config_values import (
    SCRAM_MECHANISMS,
    AddedConfig,
    ConfigValueError,
    parse_added_configs,
    parse_deleted_configs,
    plain_value,
)
from raftmeta.cli.errors import USAGE_ERROR, CommandLineError

FAILURE_PREFIX = "Error while executing config command: "
CONFIG_TYPES = ("topics", "brokers")
QUOTA_TYPES = ("users", "clients", "ips")
ENTITY_TYPES = (*CONFIG_TYPES, *QUOTA_TYPES)
NOT_SERVED = {"broker-loggers": "raftmeta keeps no broker loggers"}
QUOTA_ENTITY_TYPE = {"users": "user", "clients": "client-id", "ips": "ip"}
QUOTA_SHOWN_AS = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}
SOURCE_NAMES = {"TOPIC_CONFIG": "DYNAMIC_TOPIC_CONFIG"}
"""Kafka's printed name of a source where raftmeta's enum names it differently."""


class _EntityName(argparse.Action):
    """``--entity-name N`` and ``--entity-default`` go, in order, into one list, so each pairs
    with the ``--entity-type`` at its position (a default is ``None``)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        names = list(getattr(namespace, "entity_names", None) or [])
        names.append(None if option_string == "--entity-default" else values)
        namespace.entity_names = names


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "configs",
        help="describe or alter topic and broker configs and client quotas, as kafka-configs.sh",
        description="Describe or alter the configs of topics and brokers and the client quotas "
        "of users, client ids and ips, through the active controller, as kafka-configs.sh does.",
    )
    add_connection_options(parser, with_controller_flag=True)
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--describe", action="store_true", help="list configs or quotas")
    action.add_argument("--alter", action="store_true", help="add, change or delete configs")
    parser.add_argument(
        "--entity-type",
        action="append",
        default=[],
        metavar="TYPE",
        help=f"one of {', '.join(ENTITY_TYPES)}; users and clients may be given together",
    )
    parser.add_argument(
        "--entity-name",
        action=_EntityName,
        dest="entity_names",
        metavar="NAME",
        help="a topic name, broker id, user, client id or ip (one per --entity-type)",
    )
    parser.add_argument(
        "--entity-default",
        action=_EntityName,
        dest="entity_names",
        nargs=0,
        help="the cluster-wide broker defaults, or the default user, client id or ip",
    )
    parser.add_argument(
        "--add-config",
        action="append",
        default=[],
        metavar="K=V[,K=V]",
        help="with --alter: configs to set; a value with commas goes in brackets, K=[a,b]",
    )
    parser.add_argument(
        "--delete-config",
        action="append",
        default=[],
        metavar="K[,K]",
        help="with --alter: configs to delete",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="with --describe of topics or brokers: every config, not only the dynamic ones",
    )
    parser.set_defaults(handler=run, entity_names=None)


def _usage(message: str) -> CommandLineError:
    return CommandLineError(f"raftmeta configs: {message} (see --help)", USAGE_ERROR)


@dataclass(frozen=True, slots=True)
class Entity:
    """One ``--entity-type`` with what names it: ``name``, or ``is_default`` for
    ``--entity-default``, or neither (describing every entity of the type)."""

    kind: str
    name: str | None = None
    is_default: bool = False

    @property
    def resource_name(self) -> str:
        """A topic or broker resource's name; the cluster-wide broker default is ``""``."""
        return self.name or ""


def entities(args: argparse.Namespace) -> list[Entity]:
    """Each ``--entity-type`` paired with the ``--entity-name`` or ``--entity-default`` at its
    position; the combinations kafka-configs.sh refuses exit 2."""
    types: list[str] = args.entity_type
    names: list[str | None] = list(args.entity_names or [])
    if not types:
        raise _usage("--entity-type is required")
    for kind in types:
        if kind in NOT_SERVED:
            raise _usage(f"--entity-type {kind} is not served: {NOT_SERVED[kind]}")
        if kind not in ENTITY_TYPES:
            raise _usage(f"unknown --entity-type {kind!r}: use one of {', '.join(ENTITY_TYPES)}")
    if len(set(types)) != len(types):
        raise _usage("an --entity-type is given twice")
    if len(types) > 1 and set(types) != {"users", "clients"}:
        raise _usage("only users and clients may be given together")
    if len(names) > len(types):
        raise _usage("more --entity-name/--entity-default than --entity-type")
    if args.alter and len(names) != len(types):
        raise _usage("--alter needs an --entity-name or --entity-default for each --entity-type")
    paired = [
        Entity(kind, names[index], names[index] is None) if index < len(names) else Entity(kind)
        for index, kind in enumerate(types)
    ]
    for entity in paired:
        if entity.kind == "topics" and entity.is_default:
            raise _usage("--entity-default does not apply to topics")
        name = entity.name
        if (
            entity.kind == "brokers"
            and name is not None
            and not (name.isdigit() and name.isascii())
        ):
            raise _usage(
                f"the entity name for brokers must be a valid integer broker id, but it is: {name}"
            )
    return paired


def check_options(args: argparse.Namespace) -> tuple[list[AddedConfig], list[str]]:
    """What ``--alter`` sets and deletes, read before anything is sent."""
    if not args.describe and not args.alter:
        raise _usage("give one of --describe or --alter")
    if args.describe and (args.add_config or args.delete_config):
        raise _usage("--add-config and --delete-config go only with --alter")
    if args.all and (args.alter or args.entity_type[:1] not in (["topics"], ["brokers"])):
        raise _usage("--all goes only with --describe of topics or brokers")
    try:
        added = [config for text in args.add_config for config in parse_added_configs(text)]
        deleted = [key for text in args.delete_config for key in parse_deleted_configs(text)]
    except ConfigValueError as error:
        raise _usage(f"--add-config: {error}") from None
    if args.alter and not added and not deleted:
        raise _usage("--alter needs --add-config or --delete-config")
    scram_keys = [config.key for config in added if config.key in SCRAM_MECHANISMS]
    scram_keys += [key for key in deleted if key in SCRAM_MECHANISMS]
    if scram_keys:
        types, names = args.entity_type, args.entity_names or []
        if types != ["users"] or len(names) != 1 or names[0] is None:
            raise _usage(
                f"{scram_keys[0]} credentials are set for one named user only "
                "(--entity-type users --entity-name NAME)"
            )
        for config in added:
            if config.key in SCRAM_MECHANISMS:
                scram_parameters(config)  # a malformed credential fails before anything is sent
    return added, deleted


def scram_parameters(config: AddedConfig) -> tuple[int, str]:
    """The iteration count and password of ``SCRAM-SHA-256=[iterations=N,password=P]``, as
    kafka-configs.sh takes them (iterations default to 4096; the password is required)."""
    from raftmeta.security.scram import DEFAULT_ITERATIONS

    if not config.bracketed:
        raise _usage(f"{config.key} takes [iterations=N,password=P]")
    fields: dict[str, str] = {}
    for item in config.items:
        key, equals, value = item.partition("=")
        key = key.strip()
        if not equals or key not in ("iterations", "password") or key in fields:
            raise _usage(f"{config.key}: expected iterations=N and password=P, got {item!r}")
        fields[key] = value
    password = fields.get("password", "")
    if not password:
        raise _usage(f"{config.key}: password=P is required")
    iterations_text = fields.get("iterations", str(DEFAULT_ITERATIONS)).strip()
    if not iterations_text.isdigit():
        raise _usage(f"{config.key}: iterations must be a whole number, got {iterations_text!r}")
    return int(iterations_text), password


def run(args: argparse.Namespace) -> int:
    added, deleted = check_options(args)
    named = entities(args)
    first = named[0]
    connection = admin_connection(args)
    if first.kind in QUOTA_TYPES:
        with_scram = [entity.kind for entity in named] == ["users"] and not first.is_default
        if args.describe:
            return run_admin(
                connection,
                lambda client: _describe_quotas(client, named, with_scram=with_scram),
                FAILURE_PREFIX,
            )
        credentials = [config for config in added if config.key in SCRAM_MECHANISMS]
        removed_credentials = [key for key in deleted if key in SCRAM_MECHANISMS]
        values = {
            config.key: _quota_value(config)
            for config in added
            if config.key not in SCRAM_MECHANISMS
        }
        quota_deletions = [key for key in deleted if key not in SCRAM_MECHANISMS]
        return run_admin(
            connection,
            lambda client: _alter_users_and_quotas(
                client, named, values, quota_deletions, credentials, removed_credentials
            ),
            FAILURE_PREFIX,
        )
    if args.describe:
        return run_admin(
            connection, lambda client: _describe_configs(client, first, args.all), FAILURE_PREFIX
        )
    return run_admin(
        connection, lambda client: _alter_configs(client, first, added, deleted), FAILURE_PREFIX
    )


# --- topics and brokers --------------------------------------------------------------------


def _resource_type(kind: str) -> str:
    return "topic" if kind == "topics" else "broker"


def _dynamic_source(kind: str, name: str) -> str:
    """The source of the values set at this resource's own level."""
    if kind == "topics":
        return "TOPIC_CONFIG"
    return "DYNAMIC_DEFAULT_BROKER_CONFIG" if name == "" else "DYNAMIC_BROKER_CONFIG"


def _source_name(source: Any) -> str:
    if source is None:
        return "UNKNOWN"
    return str(SOURCE_NAMES.get(source.name, source.name))


def config_line(entry: Any) -> str:
    """One described config as kafka-configs.sh prints it."""
    synonyms = ", ".join(
        f"{_source_name(synonym.source)}:{synonym.name}="
        f"{'null' if synonym.value is None or entry.is_sensitive else synonym.value}"
        for synonym in entry.synonyms.values()
    )
    value = "null" if entry.is_sensitive or entry.value is None else entry.value
    return (
        f"  {entry.name}={value} sensitive={str(entry.is_sensitive).lower()} "
        f"synonyms={{{synonyms}}}"
    )


def heading(kind: str, name: str, describe_all: bool) -> str:
    if kind == "brokers" and name == "":
        return "Default configs for brokers in the cluster are:"
    return f"{'All' if describe_all else 'Dynamic'} configs for {kind[:-1]} {name} are:"


async def _describe_configs(client: Any, entity: Entity, describe_all: bool) -> int:
    from raftmeta.admin import ConfigResource

    kind = entity.kind
    if entity.name is not None or entity.is_default:
        names = [entity.resource_name]
    elif kind == "topics":
        names = sorted(await client.describe_topics())
    else:
        cluster = await client.describe_cluster()
        names = [str(broker.id) for broker in sorted(cluster.brokers, key=lambda b: b.id)]
    for resource_name in names:
        resource = ConfigResource(_resource_type(kind), resource_name)
        described = await client.describe_configs([resource])[resource]
        own = _dynamic_source(kind, resource_name)
        print(heading(kind, resource_name, describe_all))
        for entry_name in sorted(described):
            entry = described[entry_name]
            if describe_all or (entry.source is not None and entry.source.name == own):
                print(config_line(entry))
    return 0


async def _alter_configs(
    client: Any, entity: Entity, added: Sequence[AddedConfig], deleted: Sequence[str]
) -> int:
    from raftmeta.admin import AlterConfigOpType, ConfigEntry, ConfigResource, KafkaException
    from raftmeta.errors import ErrorCode

    kind, name = entity.kind, entity.resource_name
    resource = ConfigResource(_resource_type(kind), name)
    if deleted:
        described = await client.describe_configs([resource])[resource]
        own = _dynamic_source(kind, name)
        missing = [
            key
            for key in deleted
            if key not in described
            or described[key].source is None
            or described[key].source.name != own
        ]
        if missing:
            raise KafkaException(
                ErrorCode.INVALID_CONFIG, f"Invalid config(s): {','.join(missing)}"
            )
    changes = [
        ConfigEntry(config.key, plain_value(config), incremental_operation=AlterConfigOpType.SET)
        for config in added
    ]
    changes.extend(
        ConfigEntry(key, None, incremental_operation=AlterConfigOpType.DELETE) for key in deleted
    )
    change = ConfigResource(resource.restype, name, changes)
    await client.incremental_alter_configs([change])[resource]
    if kind == "brokers" and name == "":
        print("Completed updating default config for brokers in the cluster.")
    else:
        print(f"Completed updating config for {kind[:-1]} {name}.")
    return 0


# --- client quotas -------------------------------------------------------------------------


def _quota_value(config: AddedConfig) -> float:
    try:
        return float(plain_value(config))
    except ValueError:
        raise _usage(
            f"Cannot parse quota configuration value for {config.key}: {plain_value(config)}"
        ) from None


def quota_line(entity: Any, values: dict[str, float]) -> str:
    """One entity's quotas as kafka-configs.sh prints them."""
    named = entity.as_dict()
    parts = []
    for entity_type in ("user", "client-id", "ip"):
        if entity_type in named:
            shown = QUOTA_SHOWN_AS[entity_type]
            name = named[entity_type]
            parts.append(f"the default {shown}" if name is None else f"{shown} '{name}'")
    entries = ", ".join(f"{key}={value}" for key, value in sorted(values.items()))
    return f"Quota configs for {', '.join(parts)} are {entries}"


async def _describe_quotas(client: Any, named: list[Entity], *, with_scram: bool) -> int:
    """Kafka's tool asks for exactly the named types (a strict filter): each by name, as the
    default entity, or any entity of the type when neither is given."""
    from raftmeta.admin import ClientQuotaFilter, QuotaFilterComponent, QuotaMatchType

    components = []
    for entity in named:
        entity_type = QUOTA_ENTITY_TYPE[entity.kind]
        if entity.name is not None:
            components.append(QuotaFilterComponent(entity_type, QuotaMatchType.EXACT, entity.name))
        elif entity.is_default:
            components.append(QuotaFilterComponent(entity_type, QuotaMatchType.DEFAULT))
        else:
            components.append(QuotaFilterComponent(entity_type, QuotaMatchType.SPECIFIED))
    described = await client.describe_client_quotas(ClientQuotaFilter(tuple(components), True))
    for entity in sorted(described, key=_entity_order):
        print(quota_line(entity, described[entity]))
    if with_scram:
        await _describe_credentials(client, named[0].name)
    return 0


async def _describe_credentials(client: Any, user: str | None) -> None:
    """Kafka's "SCRAM credential configs for user-principal 'alice' are
    SCRAM-SHA-256=iterations=8192" lines: mechanisms and iteration counts, never a key."""
    from raftmeta.errors import ErrorCode, KafkaError

    if user is None:
        found = await client.describe_user_scram_credentials()
    else:
        try:
            found = {user: await client.describe_user_scram_credentials([user])[user]}
        except KafkaError as error:
            if error.code is not ErrorCode.RESOURCE_NOT_FOUND:
                raise
            return  # a user with quotas but no credential: nothing to show
    for name in sorted(found):
        infos = ", ".join(
            f"{info.mechanism.mechanism_name}=iterations={info.iterations}"
            for info in found[name].scram_credential_infos
        )
        print(f"SCRAM credential configs for user-principal '{name}' are {infos}")


async def _alter_users_and_quotas(
    client: Any,
    named: list[Entity],
    values: dict[str, float],
    quota_deletions: Sequence[str],
    credentials: Sequence[AddedConfig],
    removed_credentials: Sequence[str],
) -> int:
    """Quotas first, then SCRAM credentials (one user's, as Kafka's tool allows both in one
    command); one completion line as Kafka prints it."""
    from raftmeta.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    if values or quota_deletions:
        await _alter_quotas(client, named, values, quota_deletions, announce=False)
    if credentials or removed_credentials:
        user = named[0].name
        assert user is not None  # check_options allows credentials for a named user only
        alterations: list[UserScramCredentialUpsertion | UserScramCredentialDeletion] = []
        for config in credentials:
            iterations, password = scram_parameters(config)
            mechanism = ScramMechanism[config.key.replace("-", "_")]
            info = ScramCredentialInfo(mechanism, iterations)
            alterations.append(UserScramCredentialUpsertion(user, info, password))
        alterations.extend(
            UserScramCredentialDeletion(user, ScramMechanism[key.replace("-", "_")])
            for key in removed_credentials
        )
        await client.alter_user_scram_credentials(alterations)[user]
    _announce(named)
    return 0


def _announce(named: list[Entity]) -> None:
    kind, name = named[0].kind, named[0].name
    if name is None:
        print(f"Completed updating default config for {kind} in the cluster.")
    else:
        print(f"Completed updating config for {kind[:-1]} {name}.")


def _entity_order(entity: Any) -> tuple[tuple[str, bool, str], ...]:
    return tuple((kind, name is not None, name or "") for kind, name in entity.parts)


async def _alter_quotas(
    client: Any,
    named: list[Entity],
    values: dict[str, float],
    deleted: Sequence[str],
    *,
    announce: bool = True,
) -> int:
    from raftmeta.admin import ClientQuotaAlteration, ClientQuotaEntity, QuotaOp

    entity = ClientQuotaEntity.of((QUOTA_ENTITY_TYPE[part.kind], part.name) for part in named)
    ops = [QuotaOp(key, value) for key, value in values.items()]
    ops.extend(QuotaOp(key, remove=True) for key in deleted)
    alteration = ClientQuotaAlteration(entity, tuple(ops))
    await client.alter_client_quotas([alteration])[entity]
    if announce:
        _announce(named)
    return 0
