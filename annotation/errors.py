"""The one base of the annotation package's user-facing errors: a message that says what went
wrong and what to do. Kept free of heavy imports, so a command line can catch it without
loading the Label Studio SDK first.

Their messages are masked when they are made (rl/masking.py): they reach the worker's log, the
failed-job record RQ keeps in Redis and the command line, and a URL in them may hold a password.
"""

from rl.masking import mask_text


class AnnotationError(RuntimeError):
    """A failure a user can fix (Label Studio unreachable, a wrong token, bad data...)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*_masked(args))


class LoggedFailure(RuntimeError):
    """A job's failure already logged in one line where it happened: the worker does not log it
    again (RQ would, with a traceback)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*_masked(args))


def _masked(args: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(mask_text(arg) if isinstance(arg, str) else arg for arg in args)
