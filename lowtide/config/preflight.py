"""Everything `lowtide train` refuses before its first step, found without loading a model.

`lowtide config check` prints what this finds; `train` runs the same function first and stops on
the same problems, so the two never disagree. Each section is checked by the code that uses it
(the hook runner, the reward registry, the prompt reader, the backend registry); nothing is
built here and no model or tokenizer loads: a local model directory must exist, and a hub name
is left to the download when training starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

import yaml

from annotation.config import labeling_config_file
from lowtide.config.messages import written_at
from lowtide.config.overrides import parse_overrides
from lowtide.config.run_config import RunConfig
from lowtide.config.yaml_source import Loc, read_yaml_config
from lowtide.errors import UsageError

TINY_MODEL_HINT = "`lowtide model tiny --out outputs/tiny` builds the tiny one"


@dataclass
class Preflight:
    problems: list[str] = field(default_factory=list)  # one line each, with where it was written
    checked: list[str] = field(default_factory=list)  # what passed, one line each


def require_runnable(
    config: RunConfig, config_path: Path | None, overrides: Sequence[str] = ()
) -> Preflight:
    """The check `train` runs first: UsageError listing every problem, else what was checked."""
    report = check_run_config(config, config_path, overrides)
    if report.problems:
        raise UsageError("\n".join(report.problems))
    return report


def check_run_config(
    config: RunConfig, config_path: Path | None, overrides: Sequence[str] = ()
) -> Preflight:
    """Every problem `train` would stop on before its first step; see the module docstring."""
    origin = _origin(config_path, overrides)
    report = _Report(origin)
    _check_models(config, report)
    _check_data(config, config_path, report)
    _check_rewards(config, report)
    _check_hooks(config, report)
    _check_logger(config, report)
    _check_labeling_config(config, report)
    _check_resume(config, report)
    return report.result


class _Report:
    def __init__(self, origin: dict[Loc, str]) -> None:
        self.origin = origin
        self.result = Preflight()

    def problem(self, loc: Loc, message: str) -> None:
        where = written_at(loc, self.origin)
        self.result.problems.append(f"{where}: {message}" if where else message)

    def checked(self, what: str, detail: str) -> None:
        self.result.checked.append(f"{what:<16}{detail}")


def _origin(config_path: Path | None, overrides: Sequence[str]) -> dict[Loc, str]:
    origin: dict[Loc, str] = {}
    if config_path is not None:
        _, lines = read_yaml_config(config_path)
        origin = {loc: f"{config_path}:{line}" for loc, line in lines.items()}
    for override in parse_overrides(list(overrides)):
        origin[override.path] = override.flag
    return origin


# --- models -------------------------------------------------------------------------------------


def _check_models(config: RunConfig, report: _Report) -> None:
    model, trainer = config.model, config.trainer
    refs = [("actor", model.actor)]  # the tokenizer always comes from the actor
    if trainer.kl_coef > 0 and model.reference is not None:
        refs.append(("reference", model.reference))
    if trainer.algorithm == "ppo" and model.critic is not None:
        refs.append(("critic", model.critic))
    for role, ref in refs:
        key = ("model", role, "model_name_or_path")
        name = ref.model_name_or_path
        path = Path(name).expanduser()
        if path.is_dir():
            report.checked(f"model.{role}", f"{name} (a local directory; not loaded)")
        elif path.exists():
            report.problem(key, f"{_dotted(key)}: {name} is a file; give the model directory")
        elif _looks_like_path(name):
            missing = f"{name} does not exist here (a local model directory; {TINY_MODEL_HINT})"
            report.problem(key, f"{_dotted(key)}: {missing}")
        else:
            report.checked(f"model.{role}", f"{name} (a hub name: not checked)")


def _dotted(loc: Loc) -> str:
    return ".".join(str(part) for part in loc)


def _looks_like_path(name: str) -> bool:
    """A hub name is `name` or `owner/name`; anything else, or whose first part is a local
    directory, is meant as a path."""
    if name.startswith(("/", ".", "~")) or "\\" in name or name.count("/") > 1:
        return True
    head, slash, _ = name.partition("/")
    return bool(slash) and Path(head).is_dir()


# --- data, rewards, hooks, logger ---------------------------------------------------------------


def _check_data(config: RunConfig, config_path: Path | None, report: _Report) -> None:
    from rl.data import DataError, load_prompts

    base_dir = config_path.parent if config_path else None
    try:
        prompts = load_prompts(config.data, base_dir)
    except (DataError, OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        message = " ".join(str(exc).split())
        loc: Loc = ("data", "path") if config.data.path is not None else ("data",)
        report.problem(loc, message if message.startswith("data") else f"data.path: {message}")
        return
    source = config.data.path or "data.prompts"
    count = f"{len(prompts)} prompt{'' if len(prompts) == 1 else 's'}"
    report.checked("data", f"{count} from {source}")


def _check_rewards(config: RunConfig, report: _Report) -> None:
    from rl.rewards import check_reward_specs

    problems = check_reward_specs(config.rewards)
    for index, message in problems:
        report.problem(("rewards",) if index is None else ("rewards", index), message)
    if not problems:
        kinds = ", ".join(spec.type for spec in config.rewards)
        report.checked("rewards", f"{kinds} (types, params; reward models not loaded)")


def _check_hooks(config: RunConfig, report: _Report) -> None:
    from rl.hooks import HOOKS, check_hook_specs
    from rl.hooks.registry import params_check

    problems = check_hook_specs(config.hooks)
    for index, key, message in problems:
        report.problem(("hooks", index) if key is None else ("hooks", index, key), message)
    if problems or not config.hooks:
        return
    for index, spec in enumerate(config.hooks):
        has_check = params_check(HOOKS.resolve(spec.type)) is not None
        params = "params checked" if has_check else "params checked when it is built"
        when = f", when {spec.when!r} parses" if spec.when else ""
        report.checked(f"hooks[{index}]", f"{spec.type} at {spec.stage} ({params}{when})")


def _check_logger(config: RunConfig, report: _Report) -> None:
    from rl.tracking.backends.base import backend_factory

    names = list(dict.fromkeys(["jsonl", *config.logger.name]))  # local files are always on
    failed = False
    for name in names:
        try:
            backend_factory(name)
        except ValueError as exc:
            report.problem(("logger", "name"), str(exc))
            failed = True
    if not failed:
        report.checked("logger", f"{', '.join(names)} (they start with the run)")


# --- labeling config, resume ------------------------------------------------------------------


def _check_labeling_config(config: RunConfig, report: _Report) -> None:
    """Read as the worker reads it (relative to where lowtide runs; the default, where no such
    file is here, is the form installed with lowtide). A path the config names must be here."""
    key = ("annotation", "labeling_config")
    path = labeling_config_file(config.annotation.labeling_config)
    problem = labeling_config_problem(path)
    if problem:
        report.problem(key, f"annotation.labeling_config: {problem}")
    else:
        report.checked("labeling", f"{path} (parses; every toName names a tag)")


def labeling_config_problem(path: Path) -> str | None:
    """What Label Studio would reject in the labeling config at `path`, or None: it must be XML
    with a <View> root, and each control's toName must name a tag of the config."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read {path} ({getattr(exc, 'strerror', None) or exc})"
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        line, column = exc.position
        reason = str(exc).split(":")[0]  # the rest repeats the position
        return f"{path}:{line}:{column + 1}: not valid XML: {reason}"
    if root.tag != "View":
        return f"{path}: the top element must be <View>, not <{root.tag}>"
    names = {element.get("name") for element in root.iter() if element.get("name")}
    for element in root.iter():
        for target in filter(None, (element.get("toName") or "").split(",")):
            if target.strip() not in names:
                return (
                    f"{path}: <{element.tag} name={element.get('name')!r}> has "
                    f"toName={target.strip()!r}, which names no tag (names: "
                    f"{', '.join(sorted(names))})"
                )
    return None


def _check_resume(config: RunConfig, report: _Report) -> None:
    trainer = config.trainer
    if not trainer.resume:
        return
    if config.run_id is None:
        report.problem(
            ("trainer", "resume"),
            "trainer.resume: say which run to continue (--run_id=<its id>)",
        )
        return
    from rl.checkpoint import latest_checkpoint  # torch: only for a run that resumes

    run_dir = Path(trainer.output_dir) / config.run_id
    checkpoint = latest_checkpoint(run_dir)
    if checkpoint is None:
        report.problem(("trainer", "resume"), f"trainer.resume: no checkpoint under {run_dir}")
    else:
        report.checked("resume", f"from {checkpoint}")
