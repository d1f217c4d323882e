"""`raftmeta broker` pointed at controllers it cannot reach says so at once and keeps trying.

It used to print nothing for 30 s and then give up; a Kafka broker instead keeps looking for
its controllers and logs why on each attempt. Both a refused port and a silent one (a host that
accepts but never answers, like a paused process) are named in the line, and a SIGTERM while
it is still looking stops it cleanly.
"""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

from raftmeta.devkit.parent import child_environment
from tests.admin.fake_nodes import refusing_endpoint, silent_endpoint

DEADLINE_S = 30.0
"""Generous: a Python start-up alone takes seconds on a loaded machine."""

LOOKING = "cannot find the controller quorum"


def test_the_broker_names_unreachable_controllers_and_keeps_retrying(tmp_path: Path) -> None:
    with refusing_endpoint() as refused, silent_endpoint() as silent:
        broker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "raftmeta",
                "broker",
                "--broker-id",
                "7",
                "--data-dir",
                str(tmp_path / "broker-7"),
                "--bootstrap-server",
                f"{refused},{silent}",
                "--override",
                "raftmeta.allow.unauthenticated.listeners=true",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=child_environment(),
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            assert broker.stderr is not None
            for line in broker.stderr:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        try:
            looking: list[str] = []
            while len(looking) < 2:
                line = lines.get(timeout=DEADLINE_S)
                assert line is not None, f"the broker exited ({broker.wait()}) while looking"
                assert "Traceback" not in line, line
                if LOOKING in line:
                    looking.append(line)
            first = looking[0]
            assert f"{refused}: unreachable" in first and f"{silent}: unreachable" in first
            assert "retrying in" in first
            assert broker.poll() is None, "it keeps trying rather than giving up"
            broker.send_signal(signal.SIGTERM)
            assert broker.wait(timeout=DEADLINE_S) == 0
        finally:
            if broker.poll() is None:
                broker.kill()
                broker.wait()
