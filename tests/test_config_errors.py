"""Every config mistake a user can make ends in one readable line per problem and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import invoke, run_cli

pytestmark = pytest.mark.unit

VALID = """\
model:
  actor:
    model_name_or_path: outputs/tiny/policy
"""


def lowtide(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code, _, err = invoke(capsys, *argv)
    return code, err.strip().splitlines()


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


CASES = [
    # (name, YAML text or None for the valid base, extra flags, expected fragments of the one line)
    (
        "unknown top-level key",
        VALID + "trainr: {}\n",
        [],
        ["cfg.yaml:4:", "trainr: unknown key", "did you mean trainer?"],
    ),
    (
        "unknown key in a section",
        VALID + "logger:\n  log_rolout: true\n",
        [],
        ["cfg.yaml:5:", "logger.log_rolout: unknown key (did you mean log_rollout?)"],
    ),
    (
        "unknown key two levels down",
        VALID + "annotation:\n  retry:\n    maxx: 3\n",
        [],
        ["cfg.yaml:6:", "annotation.retry.maxx: unknown key (did you mean max?)"],
    ),
    (
        "unknown key in a list entry",
        VALID + "hooks:\n  - type: early_stop\n    stage: step_end\n    evry: 2\n",
        [],
        ["cfg.yaml:7:", "hooks.0.evry: unknown key (did you mean every?)"],
    ),
    (
        "unknown key in the model",
        VALID.replace("model_name_or_path", "model_name_or_pth"),
        [],
        ["model.actor.model_name_or_pth: unknown key (did you mean model_name_or_path?)"],
    ),
    (
        "wrong type",
        VALID + "trainer:\n  num_epochs: three\n",
        [],
        ["cfg.yaml:5:", "trainer.num_epochs:", "valid integer", "'three'"],
    ),
    (
        "out of range",
        VALID + "trainer:\n  num_epochs: 0\n",
        [],
        ["trainer.num_epochs:", "greater than or equal to 1"],
    ),
    (
        "not one of the choices",
        VALID + "trainer:\n  algorithm: dpo\n",
        [],
        ["trainer.algorithm:", "'grpo' or 'ppo'", "'dpo'"],
    ),
    ("bad YAML", VALID + "logger:\n  name: [wandb\n", [], ["cfg.yaml:", "bad YAML"]),
    (
        "a key set twice (YAML would keep the second unsaid)",
        VALID + "trainer:\n  seed: 1\n  seed: 2\n",
        [],
        ["cfg.yaml:6: trainer.seed: set again (first on line 5); keep one"],
    ),
    (
        "aliases that expand to billions of values",
        VALID
        + "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n"
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        [],
        ["cfg.yaml: its aliases (*name) expand to more than 1000000 values"],
    ),
    (
        "a tag that names code",
        VALID + "trainer: !!python/object/apply:os.system [echo]\n",
        [],
        ["cfg.yaml:4:", "bad YAML", "could not determine a constructor"],
    ),
    ("a section that is not a mapping", "- just\n- a list\n", [], ["top level must be a mapping"]),
    ("missing required key", "trainer: {}\n", [], ["model: required key is missing"]),
    (
        "secret in the file",
        VALID + "annotation:\n  api_key: abc\n",
        [],
        ["annotation.api_key", "set LABEL_STUDIO_API_KEY"],
    ),
    (
        "override of an unknown key",
        None,
        ["--trainer.num_epoch=2"],
        ["--trainer.num_epoch: unknown key (did you mean num_epochs?)"],
    ),
    (
        "override with a wrong type",
        None,
        ["--trainer.seed=abc"],
        ["--trainer.seed:", "valid integer"],
    ),
    (
        "override without dashes",
        None,
        ["trainer.seed=1"],
        ["overrides look like --section.key=value"],
    ),
    (
        "override that makes an unknown section below a known one",
        None,
        ["--model.policy.path=x"],
        ["--model.policy.path: model.policy: unknown key"],
    ),
    (
        "a config file given without --config",
        None,
        ["configs/run.yaml"],
        ["'configs/run.yaml': a config file goes after --config (--config configs/run.yaml)"],
    ),
    ("override without a value", None, ["--trainer.seed"], ["--trainer.seed: missing value"]),
    (
        "override with a bad key path",
        None,
        ["--trainer..seed=1"],
        ["--trainer..seed: not a valid key path"],
    ),
    (
        "override below a plain value",
        None,
        ["--trainer.seed.x=1"],
        ["--trainer.seed.x: trainer.seed is a value, not a section"],
    ),
    (
        "override of a secret",
        None,
        ["--annotation.api_key=abc"],
        ["--annotation.api_key: secrets are read from the environment"],
    ),
    (
        "override into an empty list",
        None,
        ["--hooks.3.every=2"],
        ["--hooks.3.every: hooks has no entry 3"],
    ),
    (
        "override past the end of a list",
        VALID + "hooks:\n  - {type: x, stage: reward}\n",
        ["--hooks.1.every=2"],
        ["--hooks.1.every: hooks.1 does not exist (the list has 1 entries)"],
    ),
]


@pytest.mark.parametrize(
    "yaml_text, flags, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
@pytest.mark.timeout(30)  # expanding the aliases would not end: fail instead
def test_config_mistake_gives_one_line_and_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    yaml_text: str | None,
    flags: list[str],
    expected: list[str],
) -> None:
    config = write(tmp_path / "cfg.yaml", VALID if yaml_text is None else yaml_text)
    code, lines = lowtide(capsys, "config", "check", "--config", config, *flags)
    assert code == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    for fragment in expected:
        assert fragment in lines[0]


def test_missing_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = lowtide(capsys, "config", "show", "--config", str(tmp_path / "nope.yaml"))
    assert code == 2
    assert lines == [f"error: {tmp_path / 'nope.yaml'}: config file not found"]


def test_bad_yaml_points_at_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path / "cfg.yaml", "trainer:\n  seed: 1\n   bad: indent\n")
    code, lines = lowtide(capsys, "config", "check", "--config", config)
    assert code == 2
    assert lines[0].startswith(f"error: {config}:3:")


def test_every_problem_is_listed_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(
        tmp_path / "cfg.yaml", VALID + "trainer:\n  seed: x\n  num_epochz: 1\nlogger:\n  nme: x\n"
    )
    code, lines = lowtide(capsys, "config", "check", "--config", config)
    assert code == 2
    assert len(lines) == 3
    assert any(
        "trainer.num_epochz: unknown key (did you mean num_epochs?)" in line for line in lines
    )
    assert any("logger.nme: unknown key (did you mean name?)" in line for line in lines)


def test_valid_config_checks_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # VALID passes the schema; `config check` also wants what training needs (test_config_check).
    (tmp_path / "policy").mkdir()
    model = f"model:\n  actor:\n    model_name_or_path: {tmp_path / 'policy'}\n"
    runnable = model + "data: {prompts: [hi]}\nrewards: [{type: format}]\n"
    config = write(tmp_path / "cfg.yaml", runnable)
    code, out, err = invoke(capsys, "config", "check", "--config", config)
    assert (code, out, err.splitlines()[0]) == (0, "", f"{config}: ok")


@pytest.mark.integration
def test_real_entry_point_exits_2_without_traceback(tmp_path: Path) -> None:
    config = write(tmp_path / "cfg.yaml", VALID + "logger:\n  log_rolout: true\n")
    result = run_cli("config", "check", "--config", config, cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: {config}:5: logger.log_rolout: unknown key (did you mean log_rollout?)"
    ]


SECRET_SPOTS = [
    ("queue", "redis_url", "redis://:s3cret-pw@redis.internal:6379/0", "REDIS_URL"),
    ("queue", "redis_url", "rediss://app:s3cret-pw@redis.internal:6380/0", "REDIS_URL"),
    ("queue", "redis_url", "redis://redis.internal:6379/0?password=s3cret-pw", "REDIS_URL"),
    ("annotation", "label_studio_url", "https://me:s3cret-pw@ls.internal", "LABEL_STUDIO_URL"),
    ("annotation", "label_studio_url", "https://ls.internal/?token=s3cret-pw", "LABEL_STUDIO_URL"),
    ("annotation", "api_key", "s3cret-pw", "LABEL_STUDIO_API_KEY"),
    ("logger", "wandb_api_key", "s3cret-pw", "WANDB_API_KEY"),
]


@pytest.mark.parametrize(("section", "key", "value", "variable"), SECRET_SPOTS)
@pytest.mark.parametrize("given_in", ["file", "flag"])
def test_a_secret_in_a_file_or_a_flag_exits_2_saying_use_the_environment(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    section: str,
    key: str,
    value: str,
    variable: str,
    given_in: str,
) -> None:
    """Every secret field, and every URL field whose password is a secret: a flag shows in
    `ps` and shell history, a config file gets committed. The value is never echoed."""
    text = VALID + (f"{section}:\n  {key}: '{value}'\n" if given_in == "file" else "")
    flags = [f"--{section}.{key}={value}"] if given_in == "flag" else []
    code, lines = lowtide(capsys, "config", "check", "--config", write(tmp_path / "c.yaml", text),
                          *flags)  # fmt: skip
    assert code == 2 and len(lines) == 1, lines
    assert f"set {variable}" in lines[0] and "environment only" in lines[0]
    assert "s3cret-pw" not in lines[0]
    where = f"--{section}.{key}" if given_in == "flag" else f"c.yaml:{len(VALID.splitlines()) + 2}"
    assert where in lines[0]


@pytest.mark.parametrize(
    "flag",
    [
        "--queue.redis_url=redis://redis.internal:6379/1",
        "--annotation.label_studio_url=http://ls:8080",
    ],
)
def test_a_url_without_a_password_is_fine_in_a_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    code, out, err = invoke(capsys, "config", "show", "--config", write(tmp_path / "c.yaml", VALID),
                            flag)  # fmt: skip
    assert code == 0, err
    assert flag.split("=", 1)[1] in out


@pytest.mark.parametrize(
    ("variable", "url"),
    [
        ("REDIS_URL", "redis://:s3cret-pw@redis.internal:6379/0"),
        ("REDIS_URL", "redis://redis.internal:6379/0?db=1&password=s3cret-pw"),
        ("LABEL_STUDIO_URL", "https://me:s3cret-pw@ls.internal"),
        ("LABEL_STUDIO_URL", "https://ls.internal/?api_token=s3cret-pw"),
    ],
)
def test_a_password_from_the_environment_is_masked_by_config_show(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch, variable: str, url: str
) -> None:
    monkeypatch.setenv(variable, url)
    code, out, err = invoke(capsys, "config", "show", "--config", write(tmp_path / "c.yaml", VALID))
    assert code == 0, err
    assert "s3cret-pw" not in out + err and "****" in out
