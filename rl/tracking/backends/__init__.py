"""One module per logging backend; `rl.plugins.BUILTIN_LOGGER_BACKENDS` names them for configs."""
