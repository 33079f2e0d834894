"""Errors a user can cause. The CLI prints their message on one line and exits with their code."""

from __future__ import annotations


class UserError(Exception):
    """Something the user can fix: the message says what and how. Exit code 1 by default."""

    exit_code = 1


class UsageError(UserError):
    """A bad config, flag or argument: exit code 2, like a command-line usage error."""

    exit_code = 2
