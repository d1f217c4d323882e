"""``raftmeta broker``: one embedded broker as a process, until SIGTERM or Ctrl-C.

It finds the controllers from ``--bootstrap-server`` (or the ``controller.quorum.voters`` or
``controller.quorum.bootstrap.servers`` of ``--config``); in a dynamic quorum (KIP-853) it
follows the voters the quorum's log names, as they change. It formats its data directory for
the quorum's cluster on first use, registers, follows the log and heartbeats. On SIGTERM or
SIGINT it shuts down under control (the controller moves its leaderships away first) and exits
0. It logs one line per state change (registered, unfenced, fenced, leaderships gained and
lost) and keeps ``broker.status`` in its data directory: ``<metadata offset> <image digest>``,
to compare with the controller's. It holds no data: a replica a partition reassignment adds to a
partition it leads counts as caught up once live for ``replica.catch.up.delay.ms`` (default 0),
and it then asks for that replica in the ISR, as a Kafka leader does once the follower fetched.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from raftmeta.broker.status import STATUS_FILE
from raftmeta.cli.errors import USAGE_ERROR, CommandLineError
from raftmeta.cli.serve import check_identity_file_size
from raftmeta.devkit.parent import end_with_parent

SHUTDOWN_TIMEOUT_S = 30.0


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "broker",
        help="run one embedded broker until SIGTERM or Ctrl-C",
        description="Run one broker: register with the controller quorum, follow the metadata "
        "log as an observer, heartbeat; on SIGTERM or Ctrl-C shut down under control.",
    )
    parser.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="the controllers (host:port, or id@host:port to name their node ids); "
        "default: controller.quorum.voters or controller.quorum.bootstrap.servers of --config",
    )
    parser.add_argument("--broker-id", type=int, help="this broker's id (node.id of --config)")
    parser.add_argument("--rack", help="this broker's rack (broker.rack)")
    parser.add_argument(
        "--data-dir", type=Path, help="the broker's metadata.log.dir (default: ./broker-<id>)"
    )
    parser.add_argument("--config", type=Path, help="a .properties file with broker settings")
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting that wins over --config (repeatable)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    end_with_parent()
    from raftmeta.broker.discovery import DiscoveryError, parse_servers
    from raftmeta.config.errors import ConfigError
    from raftmeta.config.node import parse_config, parse_override
    from raftmeta.config.properties import parse_properties

    try:
        properties: dict[str, str] = {}
        if args.config is not None:
            try:
                properties = parse_properties(args.config.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as error:
                raise ConfigError(
                    f"Cannot read configuration file {args.config}: {error}"
                ) from None
        for item in args.override:
            key, value = parse_override(item)
            properties[key] = value
        if args.broker_id is not None:
            properties["node.id"] = str(args.broker_id)
        if "node.id" not in properties:
            raise CommandLineError("raftmeta broker: give --broker-id", USAGE_ERROR)
        if args.rack is not None:
            properties["broker.rack"] = args.rack
        if args.data_dir is not None:
            properties["metadata.log.dir"] = str(args.data_dir)
        properties.setdefault("metadata.log.dir", f"broker-{properties['node.id'].strip()}")
        properties["process.roles"] = "broker"
        bootstrap = (
            args.bootstrap_server
            or properties.get("controller.quorum.voters", "").strip()
            or properties.get("controller.quorum.bootstrap.servers", "").strip()
        )
        if not bootstrap:
            raise CommandLineError(
                "raftmeta broker: give --bootstrap-server (or controller.quorum.voters or "
                "controller.quorum.bootstrap.servers in --config)",
                USAGE_ERROR,
            )
        try:
            parse_servers(bootstrap)
        except DiscoveryError as error:
            raise CommandLineError(f"raftmeta broker: {error}", USAGE_ERROR) from error
        # Checked now with a stand-in voter set, so a bad value fails before any network call.
        parse_config(_with_stand_in_voters(properties))
    except ConfigError as error:
        raise CommandLineError(str(error), USAGE_ERROR) from error
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
    )
    logging.getLogger("raftmeta.quorum").setLevel(logging.WARNING)
    try:
        return asyncio.run(_run(properties, bootstrap))
    except ConfigError as error:
        raise CommandLineError(str(error), USAGE_ERROR) from error


async def _run(properties: dict[str, str], bootstrap: str) -> int:
    from raftmeta.broker import Broker, BrokerFailure, BrokerSettings
    from raftmeta.broker.discovery import DiscoveryError, discover
    from raftmeta.config.node import parse_config
    from raftmeta.security.listener import client_tls
    from raftmeta.storage import MetadataDir, StorageError

    log = logging.getLogger("raftmeta.broker")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    node_id = properties["node.id"].strip()

    def retrying(problem: str, backoff_s: float) -> None:
        log.warning("broker %s: %s; retrying in %.1f s", node_id, problem, backoff_s)

    # Like a Kafka broker, it keeps looking for its controllers until stopped, saying why
    # after every round that failed.
    finding = asyncio.create_task(
        discover(bootstrap, None, tls=client_tls(properties), on_retry=retrying)
    )
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({finding, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if not finding.done():
        # Stopped before the quorum was found: nothing registered, nothing to hand over.
        finding.cancel()
        return 0
    try:
        contact = finding.result()
    except DiscoveryError as error:
        raise CommandLineError(str(error)) from error
    voters = ",".join(
        f"{node}@{address}{'?' if node in contact.unconfirmed else ''}"
        for node, address in sorted(contact.voters.items())
    )
    config = parse_config(_with_stand_in_voters(properties))
    if config.cluster_id is not None and config.cluster_id != contact.cluster_id:
        raise CommandLineError(
            f"cluster.id is {config.cluster_id} but the quorum at {bootstrap} belongs to "
            f"cluster {contact.cluster_id}"
        )
    data_dir = Path(config.metadata_log_dir)
    check_identity_file_size(data_dir)
    try:
        MetadataDir.format(data_dir, config.node_id, contact.cluster_id, ignore_formatted=True)
    except (StorageError, ValueError, OSError) as error:
        raise CommandLineError(f"cannot format {data_dir}: {error}") from error
    settings = replace(
        BrokerSettings.from_config(
            config,
            bootstrap_servers=contact.bootstrap_servers,
            status_file=data_dir / STATUS_FILE,
            unconfirmed_voters=frozenset() if contact.dynamic else contact.unconfirmed,
        ),
        # A dynamic quorum's voters are followed from its log, not fixed here (KIP-853).
        voters={} if contact.dynamic else contact.voters,
    )
    broker = Broker(settings)
    try:
        await broker.start()
    except StorageError as error:
        raise CommandLineError(str(error)) from error
    except RuntimeError as error:
        raise CommandLineError(f"cannot start broker {config.node_id}: {error}") from error
    log.info(
        "broker %d of cluster %s started; rack %s; controllers %s (?: to be confirmed)",
        config.node_id,
        contact.cluster_id,
        config.broker_rack or "none",
        voters,
    )
    failed: BrokerFailure | None = None
    try:
        await _until_stop_or_failure(broker, stop)
    except BrokerFailure as error:
        failed = error
    if failed is None:
        log.info("broker %d: controlled shutdown (signal again to skip it)", config.node_id)
        again = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, again.set)
        shutdown = asyncio.create_task(broker.controlled_shutdown(SHUTDOWN_TIMEOUT_S))
        skip = asyncio.create_task(again.wait())
        await asyncio.wait({shutdown, skip}, return_when=asyncio.FIRST_COMPLETED)
        skip.cancel()
        if not shutdown.done():
            shutdown.cancel()
            log.warning("broker %d: controlled shutdown skipped", config.node_id)
        elif not shutdown.result():
            log.warning("broker %d: the controller did not confirm the shutdown", config.node_id)
    await broker.stop()
    if failed is not None:
        raise CommandLineError(f"broker {config.node_id} failed: {failed}")
    log.info("broker %d stopped", config.node_id)
    return 0


def _with_stand_in_voters(properties: dict[str, str]) -> dict[str, str]:
    """The properties with a placeholder voter set: the real one comes from the quorum (and
    may hold guessed, repeated addresses the configuration check would refuse)."""
    stand_in = "2@127.0.0.1:1" if properties["node.id"].strip() == "1" else "1@127.0.0.1:1"
    return {**properties, "controller.quorum.voters": stand_in}


async def _until_stop_or_failure(broker: Any, stop: asyncio.Event) -> None:
    waiter = asyncio.create_task(stop.wait())
    watcher = asyncio.create_task(broker.wait_for(lambda: False, None))
    try:
        done, _ = await asyncio.wait({waiter, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if watcher in done:
            watcher.result()
    finally:
        waiter.cancel()
        watcher.cancel()
