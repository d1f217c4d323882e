"""``python -m raftmeta`` runs the command line."""

from raftmeta.cli.main import main

raise SystemExit(main())
