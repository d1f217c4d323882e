"""How the demo fails: a live step could not do its job, or the simulated run broke a promise;
either is said in one line."""

from __future__ import annotations


class DemoFailed(Exception):
    """The simulated demo ran but did not show what it promises (a new leader, agreeing logs)."""


class StepFailed(Exception):
    """A step failed; the message says what went wrong (the runner adds the step and logs)."""


class NotAvailableYet(StepFailed):
    """A part the step needs (a module, a command) is not in this build."""

    def __init__(self, what: str, module: str) -> None:
        super().__init__(f"{what} is not available yet ({module} is missing)")
        self.module = module


def require_module(what: str, name: str) -> None:
    """Raise ``NotAvailableYet`` unless ``name`` imports."""
    import importlib

    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is not None and name.startswith(error.name):
            raise NotAvailableYet(what, name) from None
        raise
