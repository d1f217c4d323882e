"""CPU per CreateTopics in the Admin gRPC serving layer and its client, old code beside new.

The quorum benchmarks measure a CreateTopics end to end, where the controller, placement and
Raft hide the serving layer's own cost. This one takes them away: a real ``grpc.aio`` server on
127.0.0.1 serves the real :class:`~raftmeta.server.admin_service.AdminService` (registered as
the controller node registers it, on the event loop a controller process runs on) over a
stand-in controller that answers every CreateTopics at once (one loop turn later, as a commit
would), and a client process sends CreateTopics from ``--clients`` concurrent callers,
through :class:`~raftmeta.channel.ControllerChannel` (the library's client) and
through a bare ``grpc.aio`` stub (the floor).

Server and client each run in their own process, so each one's CPU is its own: the server's is
read from /proc, the client's is the client's ``process_time``. With ``--baseline DIR`` (a
checkout of the old code, e.g. ``git archive main | tar -x -C DIR``) each round runs the old
code and the new code in turn, and the figures are medians over rounds.

    python benchmarks/admin_serve_bench.py --baseline /tmp/serve-old [--rounds 5] [--calls 300]

``--options none,no-retries,...`` runs each named set of extra gRPC options (server and client
both) beside the others. ``layers`` (printed last) times the Python of each layer alone: the
service's handler called directly and the channel's call over a stand-in stub.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script; PYTHONPATH (the code measured) goes first
    sys.path.append(str(ROOT))

from benchmarks.machine import describe_machine, load_average, process_cpu_seconds  # noqa: E402

OPTION_SETS: dict[str, tuple[tuple[str, Any], ...]] = {
    "none": (),
    "no-bdp": (("grpc.http2.bdp_probe", 0),),
    "throughput": (("grpc.optimization_target", "throughput"),),
    "no-retries": (("grpc.enable_retries", 0),),
    "no-channelz": (("grpc.enable_channelz", 0),),
    "streams-100": (("grpc.max_concurrent_streams", 100),),
    "no-retries+no-channelz": (("grpc.enable_retries", 0), ("grpc.enable_channelz", 0)),
    "no-bdp+no-channelz": (("grpc.http2.bdp_probe", 0), ("grpc.enable_channelz", 0)),
}
"""Extra gRPC options tried on both server and channel (``--options``), for the A/B of
option sets."""


# ----------------------------------------------------------------------------- server role


class _Controller:
    """Answers every CreateTopics one loop turn later, as if it had committed at once."""

    is_active = True
    leader_id = 1

    async def create_topics(
        self,
        topics: Any,
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        request: Any = None,
    ) -> list[Any]:
        from raftmeta.common.topics import CreateTopicResult

        results = [
            CreateTopicResult(
                topic.name,
                topic_id=os.urandom(16),
                num_partitions=topic.num_partitions,
                replication_factor=topic.replication_factor,
            )
            for topic in topics
        ]
        if request is not None:
            request.keep(results)  # the controller keeps the reply beside the records
        done: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(_settle, done, results)
        return await done


def _settle(done: asyncio.Future[list[Any]], results: list[Any]) -> None:
    if not done.done():  # a cancelled call leaves nobody waiting
        done.set_result(results)


class _Host:
    """The controller node as the services see it, with default (allow-all) access."""

    def __init__(self) -> None:
        from raftmeta.auth import AccessControl
        from raftmeta.quorum.identity import IdentityRule

        self.node_id = 1
        self.access = AccessControl()
        self.identity = IdentityRule()
        self.maybe_controller = _Controller()
        self.node: Any = None

    def endpoint_of(self, node_id: int | None) -> str:
        return ""


async def _serve(options: tuple[tuple[str, Any], ...]) -> None:
    import grpc

    from raftmeta.rpc import admin_pb2
    from raftmeta.rpc.options import SERVER_OPTIONS
    from raftmeta.server.admin_service import AdminService
    from raftmeta.server.service_base import add_service

    server = grpc.aio.server(options=(*SERVER_OPTIONS, ("grpc.so_reuseport", 0), *options))
    add_service(server, AdminService(_Host()), admin_pb2.DESCRIPTOR.services_by_name["Admin"])  # type: ignore[arg-type]
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    stopped = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
    print(port, flush=True)
    await stopped.wait()
    await server.stop(None)


# ----------------------------------------------------------------------------- client role


async def _send(
    target: str, how: str, clients: int, calls: int, options: tuple[tuple[str, Any], ...]
) -> dict[str, float]:
    import grpc

    from raftmeta.channel import ControllerChannel
    from raftmeta.rpc import admin_pb2 as apb
    from raftmeta.rpc import admin_pb2_grpc as apb_grpc

    def request(name: str) -> apb.CreateTopicsRequest:
        return apb.CreateTopicsRequest(
            topics=[apb.NewTopic(name=name, num_partitions=3, replication_factor=3)],
            timeout_ms=30_000,
        )

    senders: list[Any] = []
    closers: list[Any] = []
    for _ in range(clients):
        if how == "channel":
            import raftmeta.channel as cc

            if options:
                cc.CONTROLLER_CHANNEL_OPTIONS = (*cc.CONTROLLER_CHANNEL_OPTIONS, *options)
            channel = ControllerChannel([target])
            senders.append(_through_channel(channel, request))
            closers.append(channel.close)
        else:
            aio = grpc.aio.insecure_channel(target, options=options)
            senders.append(_through_stub(apb_grpc.AdminStub(aio), request))
            closers.append(aio.close)

    async def client(index: int, count: int) -> None:
        for number in range(count):
            reply = await senders[index](f"t-{index}-{number}")
            if reply.header.error_code or reply.topics[0].error_code:
                raise RuntimeError(f"CreateTopics failed: {reply}")

    await asyncio.gather(*(client(index, 5) for index in range(clients)))  # connect, warm
    cpu_began, began = time.process_time(), time.perf_counter()
    await asyncio.gather(*(client(index, calls) for index in range(clients)))
    elapsed = time.perf_counter() - began
    cpu = time.process_time() - cpu_began
    for close in closers:
        await close()
    return {"elapsed": elapsed, "cpu": cpu, "calls": clients * calls}


def _through_channel(channel: Any, request: Any) -> Any:
    async def send(name: str) -> Any:
        return await channel.call("Admin/CreateTopics", request(name))

    return send


def _through_stub(stub: Any, request: Any) -> Any:
    async def send(name: str) -> Any:
        return await stub.CreateTopics(request(name), timeout=30)

    return send


# ----------------------------------------------------------------------------- layer role


class _Context:
    """A servicer context with no metadata, as an anonymous caller's."""

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()


async def _layers(calls: int) -> dict[str, float]:
    """Microseconds of Python per CreateTopics in each layer alone, without gRPC: the
    service's handler called directly, and the channel's call over a stand-in stub whose
    answer comes one loop turn later (as a real call's does), less that stub's own cost."""
    from raftmeta.channel import ControllerChannel
    from raftmeta.rpc import admin_pb2 as apb
    from raftmeta.server.admin_service import AdminService

    service = AdminService(_Host())  # type: ignore[arg-type]
    context = _Context()
    request = apb.CreateTopicsRequest(
        topics=[apb.NewTopic(name="t", num_partitions=3, replication_factor=3)],
        timeout_ms=30_000,
    )
    loop = asyncio.get_running_loop()
    answer = await service.CreateTopics(request, context)

    def stub(message: Any, timeout: float | None = None, metadata: Any = None) -> Any:
        done = loop.create_future()
        loop.call_soon(done.set_result, answer)
        return done

    channel = ControllerChannel(["127.0.0.1:1"])
    channel._stub = lambda endpoint, spec: stub  # type: ignore[method-assign]

    async def timed(one: Any) -> float:
        began = time.process_time()
        for _ in range(calls):
            await one()
        return 1e6 * (time.process_time() - began) / calls

    async def serve() -> Any:
        return await service.CreateTopics(request, context)

    async def bare() -> Any:
        return await stub(request, timeout=30)

    async def through_channel() -> Any:
        return await channel.call("Admin/CreateTopics", request)

    figures: dict[str, list[float]] = {"service": [], "bare": [], "channel": []}
    for _ in range(5):
        figures["service"].append(await timed(serve))
        figures["bare"].append(await timed(bare))
        figures["channel"].append(await timed(through_channel))
    service_us = statistics.median(figures["service"])
    bare_us = statistics.median(figures["bare"])
    channel_us = statistics.median(figures["channel"]) - bare_us
    return {"service_us": service_us, "channel_us": channel_us}


def _layer_figures(root: Path, calls: int) -> dict[str, float]:
    client = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--role", "layers", "--calls", str(calls)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        check=True,
    )
    figures: dict[str, float] = json.loads(client.stdout.strip().splitlines()[-1])
    return figures


# ----------------------------------------------------------------------------- driver


def _one_run(
    root: Path, how: str, clients: int, calls: int, option_set: str
) -> tuple[float, float, float]:
    """(server CPU ms per call, client CPU ms per call, calls/s) with the code under ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    script = str(Path(__file__).resolve())
    server = subprocess.Popen(
        [sys.executable, script, "--role", "server", "--options", option_set],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        server_began = process_cpu_seconds(server.pid)
        client = subprocess.run(
            [
                sys.executable,
                script,
                "--role",
                "client",
                "--target",
                f"127.0.0.1:{port}",
                "--how",
                how,
                "--clients",
                str(clients),
                "--calls",
                str(calls),
                "--options",
                option_set,
            ],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        server_cpu = process_cpu_seconds(server.pid) - server_began
    finally:
        server.terminate()
        server.wait(10)
    figures = json.loads(client.stdout.strip().splitlines()[-1])
    n = figures["calls"]
    return 1e3 * server_cpu / n, 1e3 * figures["cpu"] / n, n / figures["elapsed"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--role", choices=("driver", "server", "client", "layers"), default="driver"
    )
    parser.add_argument("--target", default="")
    parser.add_argument("--how", choices=("channel", "stub"), default="channel")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--calls", type=int, default=300, help="per client per run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="a checkout of the old code")
    parser.add_argument(
        "--options",
        default="none",
        help=f"extra gRPC options on server and client; driver: comma-separated, of "
        f"{', '.join(OPTION_SETS)}",
    )
    args = parser.parse_args()
    if args.role == "server":
        from raftmeta.quorum.event_loop import run

        run(_serve(OPTION_SETS[args.options]))  # on the loop a controller process runs on
        return
    if args.role == "layers":
        print(json.dumps(asyncio.run(_layers(args.calls))))
        return
    if args.role == "client":
        figures = asyncio.run(
            _send(args.target, args.how, args.clients, args.calls, OPTION_SETS[args.options])
        )
        print(json.dumps(figures))
        return

    option_sets = args.options.split(",")
    unknown = [name for name in option_sets if name not in OPTION_SETS]
    if unknown:
        print(f"unknown option set(s) {', '.join(unknown)}", file=sys.stderr)
        raise SystemExit(2)
    variants: list[tuple[str, Path, str, str]] = []
    for option_set in option_sets:
        suffix = "" if option_set == "none" else f" [{option_set}]"
        if args.baseline is not None:
            variants.append((f"old channel{suffix}", args.baseline, "channel", option_set))
        variants.append((f"new channel{suffix}", ROOT, "channel", option_set))
        if args.baseline is not None:
            variants.append((f"old stub{suffix}", args.baseline, "stub", option_set))
        variants.append((f"new stub{suffix}", ROOT, "stub", option_set))
    print(f"machine: {describe_machine()}; load {load_average()}")
    print(
        f"{args.clients} clients x {args.calls} CreateTopics per run, {args.rounds} rounds, "
        "variants interleaved; medians"
    )
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name, *_ in variants}
    for _ in range(args.rounds):
        for name, root, how, option_set in variants:
            samples[name].append(_one_run(root, how, args.clients, args.calls, option_set))
    print(f"{'variant':<34} {'server ms/call':>15} {'client ms/call':>15} {'calls/s':>9}")
    medians: dict[str, tuple[float, float, float]] = {}
    for name, runs in samples.items():
        medians[name] = (
            statistics.median(run[0] for run in runs),
            statistics.median(run[1] for run in runs),
            statistics.median(run[2] for run in runs),
        )
        server, client, rate = medians[name]
        print(f"{name:<34} {server:>15.3f} {client:>15.3f} {rate:>9.0f}")
    if args.baseline is not None:
        for option_set in option_sets:
            suffix = "" if option_set == "none" else f" [{option_set}]"
            old, new = medians[f"old channel{suffix}"], medians[f"new channel{suffix}"]
            print(
                f"new/old{suffix}: server CPU {new[0] / old[0]:.2f}x, "
                f"client CPU {new[1] / old[1]:.2f}x, calls/s {new[2] / old[2]:.2f}x"
            )
    print(
        "Python per CreateTopics in each layer alone (no gRPC; the service over a stand-in "
        f"controller, the channel less a bare stand-in stub), {args.rounds} rounds, medians:"
    )
    roots = [("new", ROOT)] if args.baseline is None else [("old", args.baseline), ("new", ROOT)]
    layers: dict[str, list[dict[str, float]]] = {name: [] for name, _ in roots}
    for _ in range(args.rounds):
        for name, root in roots:
            layers[name].append(_layer_figures(root, 4 * args.calls))
    layer_medians = {
        name: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        for name, runs in layers.items()
    }
    for name, layer in layer_medians.items():
        print(
            f"{name:<4} service layer {layer['service_us']:6.1f} us/call, "
            f"ControllerChannel beyond a bare stub {layer['channel_us']:6.1f} us/call"
        )
    if args.baseline is not None:
        was, now = layer_medians["old"], layer_medians["new"]
        print(
            f"new/old: service layer {now['service_us'] / was['service_us']:.2f}x, "
            f"channel {now['channel_us'] / was['channel_us']:.2f}x"
        )
    print(f"load at end {load_average()}")


if __name__ == "__main__":
    main()
