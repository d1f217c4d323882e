"""``raftmeta`` subcommands that each live in their own module (see ``raftmeta.cli``).

A module here defines ``register(commands)``: it adds its parser to the ``add_subparsers``
object it is given (whose parser class already turns usage errors into one line) and sets the
``handler`` default to a function taking the parsed arguments and returning the exit status.
It raises ``raftmeta.cli.CommandLineError`` for anything the user got wrong.
"""
