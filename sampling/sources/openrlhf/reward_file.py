"""The reward file `lowtide openrlhf reward-file` writes for `--reward.remote_url`: three lines
that wrap the user's own reward function with `lowtide.openrlhf.routed`."""

from __future__ import annotations

import json
from pathlib import Path


def reward_file_text(
    func_spec: str,
    out: Path,
    *,
    config: Path | None,
    overrides: list[str] | None = None,
    run_id: str | None = None,
    model_name: str = "unknown",
) -> str:
    """The source of a reward file for `--reward.remote_url`. OpenRLHF loads it by path, so it
    puts its own directory on `sys.path` (for the user's module) and names the config relative
    to itself."""
    module_name, _, attribute = func_spec.partition(":")
    arguments = [f"config={_path_expression(config, out)}"] if config is not None else []
    if overrides:
        arguments.append(f"overrides={json.dumps(list(overrides))}")
    if run_id:
        arguments.append(f"run_id={json.dumps(run_id)}")
    if model_name != "unknown":
        arguments.append(f"model_name={json.dumps(model_name)}")
    call = ", ".join(["_reward_func", *arguments])
    return (
        f'"""OpenRLHF reward file (--reward.remote_url {out.name}): {func_spec}, with its\n'
        "low-reward samples routed to review by lowtide.\n"
        'Written by `lowtide openrlhf reward-file`."""\n'
        "\n"
        "import sys\n"
        "from pathlib import Path\n"
        "\n"
        "_HERE = Path(__file__).resolve().parent\n"
        "sys.path.insert(0, str(_HERE))  # OpenRLHF loads this file by path\n"
        "\n"
        "from lowtide.openrlhf import routed  # noqa: E402\n"
        f"from {module_name} import {attribute} as _reward_func  # noqa: E402\n"
        "\n"
        f"reward_func = routed({call})\n"
    )


def _path_expression(config: Path, out: Path) -> str:
    try:
        relative = config.resolve().relative_to(out.resolve().parent)
    except ValueError:
        return json.dumps(str(config.resolve()))
    return f"_HERE / {json.dumps(relative.as_posix())}"
