"""How a command fails: :class:`CommandLineError` and the exit statuses it carries.

Every failure a user can cause ends with one line on stderr and a non-zero exit status, never
a traceback: :data:`USAGE_ERROR` (2) for a command line or a configuration that cannot work,
:data:`FAILURE` (1) for everything else. A command raises this error; ``main`` prints it.
Kept alone so that every command module, and the demo, can raise it without importing the
dispatcher.
"""

from __future__ import annotations

USAGE_ERROR = 2
"""A bad flag, a missing or malformed file, an invalid configuration value."""
FAILURE = 1
"""The command was understood but could not do its job."""


class CommandLineError(Exception):
    """A command cannot go on; the message is the one line the user sees."""

    def __init__(self, message: str, status: int = FAILURE) -> None:
        super().__init__(message)
        self.status = status
