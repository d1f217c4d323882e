"""``python -m raftmeta`` runs the command line."""

from raftmeta.cli import main

raise SystemExit(main())
