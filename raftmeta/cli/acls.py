"""``raftmeta acls``: add, remove and list the ACLs kept in the metadata log, in the shape of
Kafka's ``kafka-acls.sh``.

ACLs are records (``AccessControlEntryRecord``), so one ``--add`` on any node is enforced by
every controller, survives failover and is carried in snapshots. ``--add`` writes one ACL per
principal, host and operation on the one resource named; ``--remove`` deletes, and ``--list``
shows, every ACL that a filter built from the same options matches. The listing prints Kafka's
"Current ACLs for resource" blocks, so scripts written for Kafka's tool read it.

Resources are named as kafka-acls.sh names them (``--topic``, ``--group``, ``--cluster``,
``--transactional-id``, ``--delegation-token``, ``--user-principal``, each but ``--cluster``
repeatable), and ``--producer`` / ``--consumer`` expand as there: a producer may WRITE,
DESCRIBE and CREATE its topics and WRITE and DESCRIBE its transactional ids (and, with
``--idempotent``, IDEMPOTENT_WRITE on the cluster); a consumer may READ and DESCRIBE its topics
and READ its groups. ``--bootstrap-controller`` manages them through the controllers' KAFKA
listeners with Kafka's own ACL APIs.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Awaitable, Iterable, Sequence
from typing import Any

from raftmeta.cli.admin_options import add_connection_options, admin_connection, run_admin
from raftmeta.cli.errors import USAGE_ERROR, CommandLineError

FAILURE_PREFIX = "Error while executing ACL command: "
CLUSTER_RESOURCE_NAME = "kafka-cluster"
"""The one name a CLUSTER resource has, as in Kafka."""

RESOURCE_FLAGS = (
    ("--topic", "a topic (or '*' for every topic)"),
    ("--group", "a consumer group (or '*')"),
    ("--transactional-id", "a transactional id (or '*')"),
    ("--delegation-token", "a delegation token id (or '*')"),
    ("--user-principal", "a user principal, as User:name (for CreateTokens / DescribeTokens)"),
)

OPERATIONS = (
    "All",
    "Read",
    "Write",
    "Create",
    "Delete",
    "Alter",
    "Describe",
    "ClusterAction",
    "DescribeConfigs",
    "AlterConfigs",
    "IdempotentWrite",
    "CreateTokens",
    "DescribeTokens",
)


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "acls",
        help="add, remove or list ACLs (kept in the metadata log, enforced by every controller)",
        description="Add, remove or list ACLs, as Kafka's kafka-acls.sh does.",
    )
    add_connection_options(parser, with_controller_flag=True)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--add", action="store_true", help="add ACLs")
    action.add_argument("--remove", action="store_true", help="remove the ACLs that match")
    action.add_argument("--list", action="store_true", help="list the ACLs that match")
    for flag, what in RESOURCE_FLAGS:
        parser.add_argument(
            flag, action="append", default=[], metavar="NAME", help=f"{what}; repeatable"
        )
    parser.add_argument("--cluster", action="store_true", help="the cluster")
    role = parser.add_mutually_exclusive_group()
    role.add_argument(
        "--producer",
        action="store_true",
        help="the ACLs a producer needs: WRITE, DESCRIBE, CREATE on --topic, WRITE, DESCRIBE "
        "on --transactional-id",
    )
    role.add_argument(
        "--consumer",
        action="store_true",
        help="the ACLs a consumer needs: READ, DESCRIBE on --topic, READ on --group",
    )
    parser.add_argument(
        "--idempotent",
        action="store_true",
        help="with --producer: IDEMPOTENT_WRITE on the cluster too",
    )
    parser.add_argument(
        "--resource-pattern-type",
        default=None,
        type=str.upper,
        choices=("LITERAL", "PREFIXED", "MATCH", "ANY"),
        help="LITERAL (default for --add) or PREFIXED; --list and --remove also take MATCH and "
        "ANY (their default)",
    )
    parser.add_argument(
        "--allow-principal", action="append", default=[], metavar="TYPE:NAME", help="repeatable"
    )
    parser.add_argument(
        "--deny-principal", action="append", default=[], metavar="TYPE:NAME", help="repeatable"
    )
    parser.add_argument("--allow-host", action="append", default=[], metavar="HOST")
    parser.add_argument("--deny-host", action="append", default=[], metavar="HOST")
    parser.add_argument(
        "--operation",
        action="append",
        default=[],
        metavar="OPERATION",
        help=f"one of {', '.join(OPERATIONS)}; repeatable (default All)",
    )
    parser.add_argument(
        "--force", action="store_true", help="accepted for compatibility; removal never asks"
    )
    parser.set_defaults(handler=run)


def _operation(text: str) -> int:
    from raftmeta.records import AclOperation

    wanted = text.replace("-", "").replace("_", "").lower()
    for name in OPERATIONS:
        if name.lower() == wanted:
            return int(AclOperation[_upper_snake(name)])
    raise CommandLineError(
        f"--operation: {text!r} is not one of {', '.join(OPERATIONS)}", USAGE_ERROR
    )


def _upper_snake(camel: str) -> str:
    return "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(camel)).upper()


def _resources(args: argparse.Namespace) -> list[tuple[int, str]]:
    """Every resource the options name, as (Kafka resource type id, name)."""
    from raftmeta.records import AclResourceType

    named = [
        *((int(AclResourceType.TOPIC), name) for name in args.topic),
        *((int(AclResourceType.GROUP), name) for name in args.group),
        *((int(AclResourceType.TRANSACTIONAL_ID), name) for name in args.transactional_id),
        *((int(AclResourceType.DELEGATION_TOKEN), name) for name in args.delegation_token),
        *((int(AclResourceType.USER), name) for name in args.user_principal),
    ]
    if args.cluster:
        named.append((int(AclResourceType.CLUSTER), CLUSTER_RESOURCE_NAME))
    return named


def _operations_by_resource(args: argparse.Namespace) -> list[tuple[int, str, list[int]]]:
    """Each resource with the operations the options give it: ``--operation`` (default All)
    on every resource named, or the expansion of ``--producer`` / ``--consumer``."""
    from raftmeta.records import AclOperation, AclResourceType

    resources = _resources(args)
    if not (args.producer or args.consumer):
        operations = [_operation(op) for op in args.operation] or [_operation("All")]
        return [(kind, name, operations) for kind, name in resources]
    if args.operation:
        raise CommandLineError(
            "--operation cannot be given with --producer or --consumer", USAGE_ERROR
        )
    topic, group, transactional = (
        int(AclResourceType.TOPIC),
        int(AclResourceType.GROUP),
        int(AclResourceType.TRANSACTIONAL_ID),
    )
    read, write, describe, create = (
        int(AclOperation.READ),
        int(AclOperation.WRITE),
        int(AclOperation.DESCRIBE),
        int(AclOperation.CREATE),
    )
    if args.producer:
        if not args.topic and not args.transactional_id:
            raise CommandLineError("--producer needs --topic (or --transactional-id)", USAGE_ERROR)
        expanded = [
            (kind, name, [write, describe, create] if kind == topic else [write, describe])
            for kind, name in resources
            if kind in (topic, transactional)
        ]
        if args.idempotent:
            cluster = int(AclResourceType.CLUSTER)
            expanded.append((cluster, CLUSTER_RESOURCE_NAME, [int(AclOperation.IDEMPOTENT_WRITE)]))
        return expanded
    if not args.topic or not args.group:
        raise CommandLineError("--consumer needs --topic and --group", USAGE_ERROR)
    return [
        (kind, name, [read, describe] if kind == topic else [read])
        for kind, name in resources
        if kind in (topic, group)
    ]


def _check_principal(principal: str) -> str:
    kind, _, name = principal.partition(":")
    if not kind or not name:
        raise CommandLineError(
            f"{principal!r} is not a principal: write it as Type:name, e.g. User:alice",
            USAGE_ERROR,
        )
    return principal


def acls_to_add(args: argparse.Namespace) -> list[Any]:
    """One binding per resource, principal, host and operation."""
    from raftmeta.common.acls import AclBinding
    from raftmeta.records import AclPatternType, AclPermissionType

    if not _resources(args):
        raise CommandLineError(
            "--add needs a resource: --topic, --group, --cluster, --transactional-id, "
            "--delegation-token or --user-principal",
            USAGE_ERROR,
        )
    pattern = args.resource_pattern_type or "LITERAL"
    if pattern not in ("LITERAL", "PREFIXED"):
        raise CommandLineError(
            f"--add takes --resource-pattern-type LITERAL or PREFIXED, not {pattern}",
            USAGE_ERROR,
        )
    if not args.allow_principal and not args.deny_principal:
        raise CommandLineError("--add needs --allow-principal or --deny-principal", USAGE_ERROR)
    grants = [
        (AclPermissionType.ALLOW, args.allow_principal, args.allow_host or ["*"]),
        (AclPermissionType.DENY, args.deny_principal, args.deny_host or ["*"]),
    ]
    return [
        AclBinding(
            resource_type=resource_type,
            resource_name=name,
            pattern_type=int(AclPatternType[pattern]),
            principal=_check_principal(principal),
            host=host,
            operation=operation,
            permission_type=int(permission),
        )
        for resource_type, name, operations in _operations_by_resource(args)
        for permission, principals, hosts in grants
        for principal in principals
        for host in hosts
        for operation in operations
    ]


def acl_filters(args: argparse.Namespace) -> list[Any]:
    """The filters --list and --remove match with: one per resource, principal and operation
    named (any where none is)."""
    from raftmeta.common.acls import AclBindingFilter
    from raftmeta.records import AclPatternType, AclPermissionType

    pattern = int(AclPatternType[args.resource_pattern_type or "ANY"])
    targets: list[tuple[int, str | None, list[int]]]
    if args.producer or args.consumer:
        if args.list:
            raise CommandLineError(
                "--producer and --consumer go with --add or --remove", USAGE_ERROR
            )
        targets = [*_operations_by_resource(args)]
    else:
        operations = [_operation(op) for op in args.operation] or [1]
        named: list[tuple[int, str | None]] = [*_resources(args)] or [(1, None)]
        targets = [(kind, name, operations) for kind, name in named]
    entries: list[tuple[str | None, int, str | None]] = []
    for principal in args.allow_principal:
        for host in args.allow_host or [None]:
            entries.append((_check_principal(principal), int(AclPermissionType.ALLOW), host))
    for principal in args.deny_principal:
        for host in args.deny_host or [None]:
            entries.append((_check_principal(principal), int(AclPermissionType.DENY), host))
    if not entries:
        entries = [(None, int(AclPermissionType.ANY), None)]
    return [
        AclBindingFilter(
            resource_type=resource_type,
            resource_name=name,
            pattern_type=pattern,
            principal=principal,
            host=host,
            operation=operation,
            permission_type=permission,
        )
        for resource_type, name, operations in targets
        for principal, permission, host in entries
        for operation in operations
    ]


def listing(acls: Sequence[Any]) -> list[str]:
    """Kafka's layout: a block per resource pattern, one ACL entry per line."""
    from raftmeta.common.acls import enum_text, permission_text
    from raftmeta.records import AclOperation, AclPatternType, AclResourceType

    by_resource: defaultdict[tuple[int, str, int], list[Any]] = defaultdict(list)
    for acl in acls:
        by_resource[(acl.resource_type, acl.resource_name, acl.pattern_type)].append(acl)
    lines: list[str] = []
    for (resource_type, name, pattern), entries in sorted(by_resource.items()):
        lines.append(
            f"Current ACLs for resource `ResourcePattern(resourceType="
            f"{enum_text(AclResourceType, resource_type)}, name={name}, patternType="
            f"{enum_text(AclPatternType, pattern)})`: "
        )
        for acl in sorted(entries, key=lambda a: (a.principal, a.host, a.operation)):
            lines.append(
                f" \t(principal={acl.principal}, host={acl.host}, "
                f"operation={enum_text(AclOperation, acl.operation)}, "
                f"permissionType={permission_text(acl.permission_type)}) "
            )
        lines.append("")
    return lines


async def _every(futures: Iterable[Awaitable[Any]]) -> list[Any]:
    """Every future's result, in order; the first failure raised once all have settled (so
    that no failure of the others goes unread)."""
    import asyncio

    settled = await asyncio.gather(*futures, return_exceptions=True)
    failure = next((item for item in settled if isinstance(item, BaseException)), None)
    if failure is not None:
        raise failure
    return settled


def run(args: argparse.Namespace) -> int:
    if args.add:
        bindings = acls_to_add(args)
    else:
        filters = acl_filters(args)
    connection = admin_connection(args)

    async def add(client: Any) -> list[Any]:
        await _every(client.create_acls(bindings).values())
        return bindings

    async def remove(client: Any) -> list[Any]:
        removed: list[Any] = []
        for deleted in await _every(client.delete_acls(filters).values()):
            removed.extend(deleted)
        return removed

    async def show(client: Any) -> list[Any]:
        found: list[Any] = []
        for acl_filter in filters:
            found.extend(acl for acl in await client.describe_acls(acl_filter) if acl not in found)
        return found

    if args.add:
        added = run_admin(connection, add, FAILURE_PREFIX)
        print("Adding ACLs:")
        for line in listing(added):
            print(line)
    elif args.remove:
        removed = run_admin(connection, remove, FAILURE_PREFIX)
        print(f"Removed {len(removed)} ACL(s):")
        for line in listing(removed):
            print(line)
    else:
        for line in listing(run_admin(connection, show, FAILURE_PREFIX)):
            print(line)
    return 0
