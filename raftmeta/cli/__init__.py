"""The ``raftmeta`` command line: one module per command, and what only commands use.

``main`` is the dispatcher (the ``raftmeta`` console script and ``python -m raftmeta``): it
builds the parser from the command modules and turns every failure into one line and an exit
status. ``errors`` holds :class:`~raftmeta.cli.errors.CommandLineError` and the exit statuses
(2 for usage and configuration, 1 otherwise); ``parser`` the argparse subclass and the
``register(commands)`` convention each command module follows: it adds its parser and sets
``handler`` to a function of the parsed arguments returning the exit status.

Commands: ``demo`` (a package: the whole product in one command), ``storage`` (random-uuid,
format), ``dump`` (log dump, snapshot dump), ``serve``, ``dev``, ``quorum`` (describe),
``soak``, ``topics``, ``brokers``, ``broker``, ``leader-election``, ``audit``. Their helpers:
``admin_options`` and ``client_config`` (the admin commands' connection and the one reader of
``--admin.config`` / ``--command-config`` files), ``election_request`` and ``election_report``
(leader-election's rules), ``quorum_describe`` (asking the quorum who leads), ``devcluster``
(local ``serve`` and ``broker`` processes, for ``dev``, the demo and process tests).

This is the top layer: it may import any raftmeta package (server, admin, broker, storage,
config, sim) and ``analytics``; nothing in raftmeta imports it. Inside, only ``main`` imports
the command modules as a set, so no module here imports the dispatcher; commands import their
heavy dependencies when they run, so ``--help`` stays fast.
"""

import os

# gRPC's core logs connection chatter (GOAWAYs, reconnects, forks) at INFO through absl; a
# command's user needs only its errors. gRPC reads this when it is first imported, and every
# command imports it lazily, after this package's import, so setting it here covers them all.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
