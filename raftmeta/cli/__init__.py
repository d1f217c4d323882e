"""The ``raftmeta`` command line: one module per command, and what only commands use.

``main`` is the dispatcher (the ``raftmeta`` console script and ``python -m raftmeta``): it
builds the parser from the command modules and turns every failure into one line and an exit
status. ``errors`` holds :class:`~raftmeta.cli.errors.CommandLineError` and the exit statuses
(2 for usage and configuration, 1 otherwise); ``parser`` the argparse subclass and the
``register(commands)`` convention each command module follows: it adds its parser and sets
``handler`` to a function of the parsed arguments returning the exit status.

Commands: ``demo``, ``storage`` (random-uuid, format), ``dump`` (log dump, snapshot dump, log
export), ``serve``, ``dev``, ``quorum`` (describe, add-controller, remove-controller), ``soak``,
``chaos``, ``topics``, ``brokers``, ``broker``, ``leader-election``, ``features``, ``acls``,
``audit``. Their helpers: ``admin_options`` and ``client_config`` (the admin commands'
connection and the one reader of ``--admin.config`` / ``--command-config`` files),
``election_request`` and ``election_report`` (leader-election's rules), ``quorum_describe``
(printing the quorum), ``quorum_membership``, ``kafka_admin``, ``text_files``. The local-cluster
supervisor, the demo's machinery and the fault campaign live in :mod:`raftmeta.devkit`, which
``dev``, ``demo`` and ``chaos`` call into.

This is the top layer: it may import any raftmeta package (devkit, server, admin, broker,
storage, config, sim) and ``analytics``; nothing in raftmeta imports it. Inside, only ``main``
imports the command modules as a set, so no module here imports the dispatcher; commands import
their heavy dependencies when they run, so ``--help`` stays fast.
"""

import os

# gRPC's core logs connection chatter (GOAWAYs, reconnects, forks) at INFO through absl; a
# command's user needs only its errors. gRPC reads this when it is first imported, and every
# command imports it lazily, after this package's import, so setting it here covers them all.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
