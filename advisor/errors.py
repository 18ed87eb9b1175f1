"""One error family for everything a user or a rule author can get wrong, and the exit codes."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes, the same for every command."""

    OK = 0
    FINDINGS = 1  # findings at or above --fail-on
    UNUSABLE = 2  # unusable input, or a broken rule or knowledge base


class AdvisorError(Exception):
    """An error with a one-line message for people; never shown as a traceback without --debug."""

    exit_code = ExitCode.UNUSABLE

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None) -> None:
        self.message = message
        self.where = where
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The message as one line: where, what, and a hint such as the closest valid names."""
        text = f"{self.where}: {self.message}" if self.where else self.message
        return f"{text} ({self.hint})" if self.hint else text


class InputError(AdvisorError):
    """Bad user input: a scenario, a flag, a name that is not in the catalogue."""


class KnowledgeError(AdvisorError):
    """The knowledge base (knowledge/*.yaml) is broken."""


class RuleBaseError(AdvisorError):
    """The rule base (rules/*.yaml) is broken; the advisor refuses to advise on it."""


class ExpressionError(AdvisorError):
    """An expression in a rule or formula uses something outside the allowed vocabulary."""
