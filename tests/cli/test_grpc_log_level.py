"""Every command quiets gRPC's core logging before gRPC is first imported, and a user's own
``GRPC_VERBOSITY`` wins: the setting lives once, in the ``raftmeta.cli`` package."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = "import os, raftmeta.cli.main; print(os.environ.get('GRPC_VERBOSITY'))"


def _verbosity_seen(environment: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=environment, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_commands_log_only_grpc_errors_by_default() -> None:
    environment = {k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"}
    assert _verbosity_seen(environment) == "ERROR"


def test_a_users_own_grpc_verbosity_is_kept() -> None:
    assert _verbosity_seen({**os.environ, "GRPC_VERBOSITY": "DEBUG"}) == "DEBUG"
