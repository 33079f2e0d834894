"""The one base of the annotation package's user-facing errors: a message that says what went
wrong and what to do. Kept free of heavy imports, so a command line can catch it without
loading the Label Studio SDK first."""


class AnnotationError(RuntimeError):
    """A failure a user can fix (Label Studio unreachable, a wrong token, bad data...)."""


class LoggedFailure(RuntimeError):
    """A job's failure already logged in one line where it happened: the worker does not log it
    again (RQ would, with a traceback)."""
