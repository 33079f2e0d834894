"""The README and the docs stay true: every `lowtide` command they show exists and takes the
options shown (the commands themselves run in the other tests and in the demo), and their
reward-function, OpenRLHF and TRL examples work as written."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.conftest import invoke
from tests.helpers.docs import everything, page

pytestmark = pytest.mark.unit

DOCUMENTED = everything()  # the README and every page of docs/
PLACEHOLDERS = {"<run>": "run-1", "PATH": "x", "N": "2", "P": "9108", "MODEL": "x", "OLD": "x",
                "NEW": "x", "ISO": "all"}  # fmt: skip


def shown_commands() -> list[str]:
    """`lowtide ...` lines of the bash blocks, alternatives (`a | b`) expanded."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", DOCUMENTED, flags=re.S):
        for line in block.splitlines():
            line = re.split(r"\s+#\s", line)[0].strip()
            if "lowtide " not in line or line.startswith(("make", "pip")):
                continue
            line = line[line.index("lowtide ") :]
            base = ""
            for part in (segment.strip() for segment in line.split(" | ")):
                if part.startswith("lowtide "):
                    commands.append(part)
                    base = " ".join(part.split()[:2])
                else:  # `lowtide queue status | failed`: another subcommand of the same group
                    commands.append(f"{base} {part}")
    return commands


def argv_of(command: str) -> list[str]:
    command = re.sub(r"\[(--[a-z-]+(?: [^\]]*)?)\]", r"\1", command)  # [--flag X] -> --flag X
    command = command.replace("last|all|ISO", "all")
    words = shlex.split(command)[1:]
    argv = [PLACEHOLDERS.get(word, word) for word in words]
    # An optional flag shown bare takes its placeholder value.
    values = {"--concurrency": "2", "--metrics-port": "9108", "--since": "all", "--out": "x"}
    fixed: list[str] = []
    for index, word in enumerate(argv):
        fixed.append(word)
        following = argv[index + 1] if index + 1 < len(argv) else "--"
        if word in values and following.startswith("--"):
            fixed.append(values[word])
    return fixed


COMMANDS = shown_commands()


def test_the_readme_shows_the_commands_of_every_part() -> None:
    groups = {" ".join(command.split()[1:3]) for command in COMMANDS}
    for expected in ("queue status", "rm train", "rm compare", "export --config", "worker --burst"):
        assert expected in groups, expected
    assert len(COMMANDS) >= 30


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_shown_exists_with_its_options(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = invoke(capsys, *argv_of(command), "--help")
    assert code == 0, f"{command}: {err}"
    assert "Usage" in out


def misspelled(argv: list[str]) -> tuple[list[str], str | None]:
    """argv with its first option misspelled (a letter dropped) and that option's real name;
    a command shown without options gets an option it does not have."""
    for index, word in enumerate(argv):
        if word.startswith("--") and "." not in word:
            name, sep, value = word.partition("=")
            typo = name[:-2] + name[-1]
            return [*argv[:index], f"{typo}{sep}{value}", *argv[index + 1 :]], name
    return [*argv, "--no-such-flag", "4"], None


@pytest.mark.parametrize("command", COMMANDS)
def test_a_misspelled_option_fails_even_before_help(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check above would pass a renamed option if a command let unknown ones through."""
    argv, meant = misspelled(argv_of(command))
    code, out, err = invoke(capsys, *argv, "--help")
    lines = err.strip().splitlines()
    assert (code, out, len(lines)) == (2, "", 1), f"{command}: {code} {err}"
    assert lines[0].startswith("error: ") and "no such option" in lines[0], lines[0]
    if meant is not None:
        assert f"did you mean {meant}?" in lines[0], lines[0]


def test_the_reward_function_example_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rl.config import RewardSpec
    from rl.rewards import RewardBatch
    from rl.rewards.combine import RewardSet

    extending = page("extending.md")
    code = re.search(r"```python\n(# my_rewards.py.*?)```", extending, flags=re.S)
    assert code is not None
    (tmp_path / "my_rewards.py").write_text(code[1])
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("my_rewards", None)
    spec = re.search(
        r'- \{type: "my_rewards:polite", weight: 1.0, params: \{bonus: 0.5\}\}', extending
    )
    assert spec is not None
    rewards = RewardSet.from_specs(
        [RewardSpec(type="my_rewards:polite", weight=1.0, params={"bonus": 0.5})]
    )
    scored = rewards.score(RewardBatch(["Say hi."] * 2, ["Hi, please.", "Hi."], [False, False]))
    assert scored.total == [0.5, 0.0]
    assert scored.details[0]["polite/length"] == len("Hi, please.")


@pytest.mark.e2e
def test_the_openrlhf_reward_file_example_works(
    workdir: Path, own_redis, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The OpenRLHF section's command and its three lines, as shown, in a directory with a
    reward function and a config; the files load as OpenRLHF loads them (by path)."""
    import importlib.util

    section = page("integrations/openrlhf.md")
    command = re.search(r"^(lowtide openrlhf reward-file .*)$", section, flags=re.M)
    lines = re.search(r"```python\n(from lowtide.openrlhf import routed\n.*?)```", section, re.S)
    assert command is not None and lines is not None
    (workdir / "my_rewards.py").write_text(
        "def reward_func(queries, prompts, labels):\n    return {'rewards': [0.0]}\n"
    )
    (workdir / "lowtide.yaml").write_text(
        f"queue: {{redis_url: '{own_redis.url}', name: readme, spool_dir: spool}}\n"
    )
    monkeypatch.delenv("LOWTIDE_CONFIG", raising=False)
    monkeypatch.delitem(sys.modules, "my_rewards", raising=False)  # the other example's
    code, _, err = invoke(capsys, *shlex.split(command[1])[1:])
    assert code == 0, err
    (workdir / "by_hand.py").write_text(lines[1])
    monkeypatch.syspath_prepend(str(workdir))  # what the hand-written file relies on
    for name in ("lowtide_reward.py", "by_hand.py"):
        spec = importlib.util.spec_from_file_location("reward_func", workdir / name)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert module.reward_func([f"P: {name}"], ["P:"], [""]) == {"rewards": [0.0]}
        module.reward_func.close(deadline_s=5)
    import redis
    from rq import Queue
    from rq.serializers import JSONSerializer

    connection = redis.Redis.from_url(own_redis.url)
    queue = Queue("readme", connection=connection, serializer=JSONSerializer)
    routed = [r for job in queue.get_jobs() for r in job.args[0]]
    assert sorted((r["run_id"], r["response"]) for r in routed) == [
        ("grpo-7", " by_hand.py"), ("grpo-7", " lowtide_reward.py")
    ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.e2e
def test_the_trl_example_runs_as_shown(
    workdir: Path, own_redis, tiny_models, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The TRL section's script and config, as shown, beside the tiny model where
    `lowtide model tiny` puts it: a real GRPO run whose low-reward samples reach the queue."""
    import os
    import subprocess

    import redis
    from rq import Queue
    from rq.serializers import JSONSerializer

    section = page("integrations/trl.md")
    script = re.search(r"```python\n(# train_grpo.py\n.*?)```", section, flags=re.S)
    config = re.search(r"```yaml\n(.*?)```", section, flags=re.S)
    assert script is not None and config is not None
    (workdir / "train_grpo.py").write_text(script[1])
    (workdir / "lowtide.yaml").write_text(config[1])
    (workdir / "outputs").mkdir()
    (workdir / "outputs" / "tiny").symlink_to(tiny_models.policy.parent)
    monkeypatch.delenv("LOWTIDE_CONFIG", raising=False)
    env = {**os.environ, "REDIS_URL": own_redis.url, "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "train_grpo.py"], cwd=workdir, env=env,
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    queue = Queue("lowtide-annotate", connection=redis.Redis.from_url(own_redis.url),
                  serializer=JSONSerializer)  # fmt: skip
    records = [r for job in queue.get_jobs() for r in job.args[0]]
    assert records and all(r["reward"] < 0.2 for r in records)  # the config's threshold
    assert {r["step"] for r in records} <= set(range(1, 11))
    assert all(r["prompt"].startswith("user: ") for r in records)
    assert all(set(r["reward_details"]) == {"cool_color", "brevity"} for r in records)
