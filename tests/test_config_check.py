"""`lowtide config check` finds everything `train` refuses before its first step, without loading
a model, and `train` stops on the very same lines."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO, invoke, run_cli

pytestmark = pytest.mark.unit

REVIEW_XML = REPO / "configs" / "label_studio" / "review.xml"

SECTIONS = {
    "model": "model:\n  actor:\n    model_name_or_path: {model}\n",
    "data": "data:\n  prompts: [Name a color.]\n",
    "rewards": "rewards:\n  - {{type: keyword, params: {{words: [blue]}}}}\n",
    "annotation": "annotation:\n  labeling_config: {xml}\n",
}


def config_text(tmp_path: Path, xml: Path = REVIEW_XML, **sections: str) -> str:
    """A config that `train` accepts, with some sections replaced or added."""
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    parts = {**SECTIONS, **sections}
    return "".join(part.format(model=model, xml=xml, tmp=tmp_path) for part in parts.values())


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    return path


def line_of(text: str, marker: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if marker in line)


def error_lines(stderr: str) -> list[str]:
    return [line.removeprefix("error: ") for line in stderr.strip().splitlines()]


BAD_XML = '<View>\n  <Text name="prompt" value="$prompt">\n</View>\n'
DANGLING_XML = (
    '<View>\n  <Text name="response" value="$response"/>\n'
    '  <Rating name="quality" toName="respons"/>\n</View>\n'
)

CASES = [
    # (name, sections to replace or add, the line the error points at, fragments of the message)
    (
        "a when that calls a function",
        {"hooks": 'hooks:\n  - type: early_stop\n    stage: step_end\n    when: "f(x) > 1"\n'},
        "when:",
        ["hooks[0] (early_stop): when: unexpected '(' at column 2", "calls are not allowed"],
    ),
    (
        "an unknown hook type",
        {"hooks": "hooks:\n  - {{type: early_stp, stage: step_end}}\n"},
        "early_stp",
        ["unknown hook type 'early_stp'; did you mean 'early_stop'?"],
    ),
    (
        "a hook param the hook does not take",
        {"hooks": "hooks:\n  - {{type: early_stop, stage: step_end, params: {{reasn: x}}}}\n"},
        "reasn",
        ["hooks[0] (early_stop): unknown param 'reasn'; did you mean 'reason'?"],
    ),
    (
        "a sampler param of the wrong kind",
        {
            "hooks": "hooks:\n  - type: low_reward_sampler\n    stage: reward\n"
            "    params: {{max_text_chars: lots}}\n"
        },
        "low_reward_sampler",
        ["param 'max_text_chars' must be a positive integer, got 'lots'"],
    ),
    (
        "a hook path that does not import",
        {"hooks": "hooks:\n  - {{type: 'no_such_pkg.hooks:make', stage: reward}}\n"},
        "no_such_pkg",
        ["hooks[0] (no_such_pkg.hooks:make)", "no module named 'no_such_pkg'"],
    ),
    (
        "an unknown reward type",
        {"rewards": "rewards:\n  - {{type: keywrd}}\n"},
        "keywrd",
        ["unknown reward type 'keywrd'. Did you mean 'keyword'"],
    ),
    (
        "a reward param the rule refuses",
        {"rewards": "rewards:\n  - {{type: brevity, params: {{target: -1}}}}\n"},
        "brevity",
        ["reward 'brevity': bad params", "target must be a positive number of words"],
    ),
    (
        "a reward param the function does not take",
        {"rewards": "rewards:\n  - {{type: keyword, params: {{wrds: [blue]}}}}\n"},
        "wrds",
        ["reward 'keyword': unknown params ['wrds']", "Did you mean 'words'?"],
    ),
    (
        "a reward path that does not import",
        {"rewards": "rewards:\n  - {{type: 'no_such_pkg.rewards:score'}}\n"},
        "no_such_pkg",
        ["cannot import module 'no_such_pkg.rewards'", "no module named 'no_such_pkg'"],
    ),
    (
        "a reward model directory that does not exist",
        {"rewards": "rewards:\n  - {{type: reward_model, path: {tmp}/no-rm}}\n"},
        "reward_model",
        ["reward_model: path", "no-rm' does not exist"],
    ),
    ("no reward at all", {"rewards": "rewards: []\n"}, "rewards:", ["configure at least one"]),
    (
        "a prompt file that does not exist",
        {"data": "data:\n  path: {tmp}/prompts.jsonl\n"},
        "prompts.jsonl",
        ["data.path:", "prompts.jsonl not found"],
    ),
    (
        "a model directory that does not exist",
        {"model": "model:\n  actor:\n    model_name_or_path: {tmp}/no-model\n"},
        "no-model",
        ["model.actor.model_name_or_path:", "no-model does not exist here", "lowtide model tiny"],
    ),
    (
        "resuming a run that has no checkpoint",
        {"trainer": "trainer:\n  resume: true\n  output_dir: {tmp}/out\nrun_id: first\n"},
        "resume:",
        ["trainer.resume: no checkpoint under", "out/first"],
    ),
]


@pytest.mark.parametrize(
    ("sections", "marker", "fragments"), [case[1:] for case in CASES], ids=[c[0] for c in CASES]
)
def test_check_names_the_mistake_and_where_it_was_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    sections: dict[str, str],
    marker: str,
    fragments: list[str],
) -> None:
    text = config_text(tmp_path, **sections)
    config = write_config(tmp_path, text)
    code, _, err = invoke(capsys, "config", "check", "--config", str(config))
    assert code == 2, err
    (line,) = error_lines(err)
    assert line.startswith(f"{config}:{line_of(text, marker)}: "), line
    for fragment in fragments:
        assert fragment in line


@pytest.mark.parametrize(
    ("xml", "fragment"),
    [
        (BAD_XML, "bad.xml:3:3: not valid XML: mismatched tag"),
        (DANGLING_XML, "<Rating name='quality'> has toName='respons', which names no tag"),
    ],
    ids=["not XML", "a toName that names no tag"],
)
def test_check_reads_the_labeling_config_as_label_studio_would(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], xml: str, fragment: str
) -> None:
    (tmp_path / "bad.xml").write_text(xml)
    text = config_text(tmp_path, xml=tmp_path / "bad.xml")
    config = write_config(tmp_path, text)
    code, _, err = invoke(capsys, "config", "check", "--config", str(config))
    assert code == 2
    (line,) = error_lines(err)
    assert line.startswith(f"{config}:{line_of(text, 'labeling_config')}: ")
    assert "annotation.labeling_config:" in line and fragment in line


def several_mistakes(tmp_path: Path) -> Path:
    hooks = "hooks:\n  - {{type: early_stop, stage: step_end, when: 'reward/mean >'}}\n"
    rewards = "rewards:\n  - {{type: keywrd}}\n  - {{type: format, weight: 0.1}}\n"
    data = "data:\n  path: missing.yaml\n"
    return write_config(tmp_path, config_text(tmp_path, hooks=hooks, rewards=rewards, data=data))


def test_every_problem_is_reported_once_with_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = several_mistakes(tmp_path)
    code, _, err = invoke(capsys, "config", "check", "--config", str(config))
    assert code == 2
    lines = error_lines(err)
    assert [line.split(": ")[0] for line in lines] == [f"{config}:{n}" for n in (5, 7, 12)]
    assert "missing.yaml not found" in lines[0]
    assert "unknown reward type 'keywrd'" in lines[1]
    assert "when: unexpected end of condition" in lines[2]


@pytest.mark.integration
def test_train_stops_on_the_same_lines_before_loading_a_model(tmp_path: Path) -> None:
    config = several_mistakes(tmp_path)
    check = run_cli("config", "check", "--config", str(config), cwd=tmp_path)
    train = run_cli("train", "--config", str(config), cwd=tmp_path)
    assert check.returncode == train.returncode == 2
    assert train.stderr == check.stderr
    assert "Traceback" not in train.stderr


def test_a_flag_is_named_as_where_the_value_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, config_text(tmp_path))
    code, _, err = invoke(
        capsys, "config", "check", "--config", str(config), "--rewards.0.type=keywrd"
    )
    assert code == 2
    assert error_lines(err)[0].startswith("--rewards.0.type: unknown reward type 'keywrd'")


@pytest.mark.parametrize("name", ["quickstart.yaml", "ppo_tiny.yaml", "grpo_qwen.yaml"])
@pytest.mark.integration
def test_the_shipped_configs_pass(tmp_path: Path, name: str) -> None:
    # The tiny model's directory is built by `lowtide model tiny`; any directory stands in, since
    # the check does not load it. grpo_qwen names a hub model, which is left alone.
    flags = [] if name == "grpo_qwen.yaml" else [f"--model.actor.model_name_or_path={tmp_path}"]
    result = run_cli("config", "check", "--config", f"configs/{name}", *flags, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(f"configs/{name}: ok\n")
    if name == "grpo_qwen.yaml":
        assert "Qwen/Qwen2.5-0.5B-Instruct (a hub name: not checked)" in result.stderr
    else:
        assert "low_reward_sampler at reward (params checked)" in result.stderr
        assert "48 prompts from configs/prompts/quickstart.yaml" in result.stderr


@pytest.mark.integration
def test_check_loads_no_model(tmp_path: Path) -> None:
    """A directory that holds no loadable model passes: the check looks, it does not load (and
    torch and transformers are never imported)."""
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text('{"model_type": "no-such-architecture"}')
    config = write_config(tmp_path, config_text(tmp_path))
    probe = textwrap.dedent(
        f"""
        import sys
        from lowtide.cli.main import main
        try:
            main(["config", "check", "--config", {str(config)!r}])
        except SystemExit as exit:
            code = exit.code
        print(code, [name for name in ("torch", "transformers") if name in sys.modules])
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert result.stdout.split("\n")[-2] == "0 []", result.stderr
    assert "(a local directory; not loaded)" in result.stderr


@pytest.mark.integration
def test_a_fresh_interpreter_that_imports_only_rl_knows_every_builtin() -> None:
    """rl's own built-ins resolve with rl alone; sampling's hook comes with sampling (which every
    lowtide path imports), never as a name rl writes down."""
    probe = textwrap.dedent(
        """
        from rl.hooks import HOOKS

        print(HOOKS.names())
        import sampling  # provides low_reward_sampler

        hooks = HOOKS.names()
        for name in hooks:
            HOOKS.resolve(name)

        from rl.config import LoggerConfig
        from rl.rewards.registry import resolve_type, reward_types
        from rl.tracking.backends.base import backend_factory, backend_names

        for name in reward_types():
            resolve_type(name)
        for name in backend_names():
            backend_factory(name)
        logger_names = LoggerConfig(name=backend_names()).name  # each one a config accepts
        print(hooks, reward_types(), backend_names(), sorted(logger_names), sep="\\n")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert result.returncode == 0, result.stderr
    rl_hooks, hooks, rewards, backends, logger_names = result.stdout.splitlines()
    assert rl_hooks == "['checkpoint', 'early_stop']"
    assert hooks == "['checkpoint', 'early_stop', 'low_reward_sampler']"
    assert rewards == ("['brevity', 'format', 'keyword', 'keywords', 'length', 'reward_model']")
    assert backends == logger_names == "['console', 'jsonl', 'prometheus', 'tensorboard', 'wandb']"
