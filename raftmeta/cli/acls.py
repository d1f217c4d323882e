"""``raftmeta acls``: add, remove and list the ACLs kept in the metadata log, in the shape of
Kafka's ``kafka-acls.sh``.

ACLs are records (``AccessControlEntryRecord``), so one ``--add`` on any node is enforced by
every controller, survives failover and is carried in snapshots. ``--add`` writes one ACL per
principal, host and operation on the one resource named; ``--remove`` deletes, and ``--list``
shows, every ACL that a filter built from the same options matches. The listing prints Kafka's
"Current ACLs for resource" blocks, so scripts written for Kafka's tool read it.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from raftmeta.cli.admin_options import add_connection_options, admin_connection, run_admin
from raftmeta.cli.errors import USAGE_ERROR, CommandLineError

FAILURE_PREFIX = "Error while executing ACL command: "
CLUSTER_RESOURCE_NAME = "kafka-cluster"
"""The one name a CLUSTER resource has, as in Kafka."""

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
    add_connection_options(parser)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--add", action="store_true", help="add ACLs")
    action.add_argument("--remove", action="store_true", help="remove the ACLs that match")
    action.add_argument("--list", action="store_true", help="list the ACLs that match")
    resource = parser.add_mutually_exclusive_group()
    resource.add_argument("--topic", metavar="NAME", help="a topic (or '*' for every topic)")
    resource.add_argument("--cluster", action="store_true", help="the cluster")
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


def _resource(args: argparse.Namespace) -> tuple[int, str | None]:
    from raftmeta.records import AclResourceType

    if args.topic is not None:
        return int(AclResourceType.TOPIC), args.topic
    if args.cluster:
        return int(AclResourceType.CLUSTER), CLUSTER_RESOURCE_NAME
    return int(AclResourceType.ANY), None


def _check_principal(principal: str) -> str:
    kind, _, name = principal.partition(":")
    if not kind or not name:
        raise CommandLineError(
            f"{principal!r} is not a principal: write it as Type:name, e.g. User:alice",
            USAGE_ERROR,
        )
    return principal


def acls_to_add(args: argparse.Namespace) -> list[Any]:
    """One binding per principal, host and operation, on the one resource named."""
    from raftmeta.common.acls import AclBinding
    from raftmeta.records import AclPatternType, AclPermissionType

    resource_type, name = _resource(args)
    if name is None:
        raise CommandLineError("--add needs a resource: --topic NAME or --cluster", USAGE_ERROR)
    pattern = args.resource_pattern_type or "LITERAL"
    if pattern not in ("LITERAL", "PREFIXED"):
        raise CommandLineError(
            f"--add takes --resource-pattern-type LITERAL or PREFIXED, not {pattern}",
            USAGE_ERROR,
        )
    if not args.allow_principal and not args.deny_principal:
        raise CommandLineError("--add needs --allow-principal or --deny-principal", USAGE_ERROR)
    operations = [_operation(op) for op in args.operation] or [_operation("All")]
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
        for permission, principals, hosts in grants
        for principal in principals
        for host in hosts
        for operation in operations
    ]


def acl_filters(args: argparse.Namespace) -> list[Any]:
    """The filters --list and --remove match with: one per principal named (or one for any)."""
    from raftmeta.common.acls import AclBindingFilter
    from raftmeta.records import AclPatternType, AclPermissionType

    resource_type, name = _resource(args)
    pattern = int(AclPatternType[args.resource_pattern_type or "ANY"])
    operations = [_operation(op) for op in args.operation] or [1]
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


def run(args: argparse.Namespace) -> int:
    if args.add:
        bindings = acls_to_add(args)
    else:
        filters = acl_filters(args)
    connection = admin_connection(args)

    async def add(client: Any) -> list[Any]:
        for future in client.create_acls(bindings).values():
            await future
        return bindings

    async def remove(client: Any) -> list[Any]:
        removed: list[Any] = []
        for future in client.delete_acls(filters).values():
            removed.extend(await future)
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
