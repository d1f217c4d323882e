"""Free ports on 127.0.0.1 for local clusters: the demo's, the tests' and the benchmarks'."""

from __future__ import annotations

import random
import socket

LOWEST_PORT = 20000
EPHEMERAL_START = 32000
"""Just under Linux's ephemeral range (32768 and up), where outgoing connections take their
ports: a run of ports chosen below it is never taken by a client socket."""


def bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port_run(count: int) -> int:
    """A port such that it and the next ``count - 1`` are free now.

    Chosen at random, so that parallel runs rarely collide; a collision only fails a node's
    start, which reports it in one line. Raises RuntimeError when no run is found.
    """
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(LOWEST_PORT, EPHEMERAL_START - count)
        if all(bindable(base + i) for i in range(count)):
            return base
    raise RuntimeError("found no free run of ports on 127.0.0.1")


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports the OS reports free now (any, not a run)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
