"""OpenRLHF: the reward-file wrapper and the forwarding reward server.

The end-to-end tests run OpenRLHF 0.11.2's own `SingleTurnAgentExecutor.execute()` in its own
virtualenv (built once per user, as `make test` does first), with only vLLM's generation
replaced by scripted token ids (vLLM needs a GPU): see tests/helpers/openrlhf_rollouts.py. Each
run scores the same rollouts with the user's reward function or server as it is and through
lowtide, so the rewards OpenRLHF gets can be compared one to one.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import torch

from lowtide.cli.openrlhf_cmd import proxy_token
from lowtide.errors import UsageError
from lowtide.openrlhf import routed
from lowtide.services import peer_venvs
from lowtide.services.credentials import read_env_file
from lowtide.services.process import free_port
from rl.masking import mask_text
from sampling.config import SamplingConfig
from sampling.records import parse_record
from sampling.sources.openrlhf.adapter import RewardRouting, RoutedRewardFunc
from sampling.sources.openrlhf.answers import (
    RewardCall,
    UnreadableAnswer,
    per_sample,
    response_from_query,
    samples_of,
)
from sampling.sources.openrlhf.proxy import Limits, RewardProxy
from sampling.transport.spool import Spool
from sampling.wiring import build_router
from tests.conftest import REPO, invoke, run_cli
from tests.helpers.listening import wait_for_http
from tests.helpers.openrlhf_reward_server import RewardServer
from tests.helpers.openrlhf_user_rewards import FAIL_MARK, RAISE_MARK, reward_func
from tests.helpers.queued import queued_records
from tests.test_sampler import FakeProducer

pytestmark = pytest.mark.unit
T = TypeVar("T")

# Variables that would point a test's routing elsewhere than its own Redis and config.
ROUTING_VARS = ("REDIS_URL", "LOWTIDE_CONFIG", "LOWTIDE_RUN_ID", "LOWTIDE_RANK")
ROLLOUTS = REPO / "tests" / "helpers" / "openrlhf_rollouts.py"
TOKEN = "test-proxy-token-0123456789abcdef"  # what requests to the proxy must carry
THRESHOLD = 0.5  # the user's function gives 0.9 (names the label) or 0.1
# Two bursts of generation (two steps); a prompt the function cannot score / the server fails.
BURSTS = [
    [{"prompt": "Name a colour.", "label": "red", "responses": [" red", " blue", " green"]},
     {"prompt": "Name a number.", "label": "two", "responses": [" two", " two"]},
     {"prompt": f"{RAISE_MARK} {FAIL_MARK} please.", "label": "x", "responses": [" x", " y"]}],
    [{"prompt": "Name a fruit.", "label": "apple", "responses": [" pear", " apple", " plum"]},
     {"prompt": "Name a colour.", "label": "red", "responses": [" blue", " red"]}],
]  # fmt: skip


def openrlhf_e2e(test: T) -> T:
    """A test that runs OpenRLHF itself: end to end, slow, five minutes at most."""
    return pytest.mark.slow(pytest.mark.timeout(300)(pytest.mark.e2e(test)))


@pytest.fixture(autouse=True)
def no_routing_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ROUTING_VARS:
        monkeypatch.delenv(name, raising=False)


# ---- pure parts: reading OpenRLHF's calls and answers ------------------------------------


@pytest.mark.parametrize(
    "query, prompt, end_tokens, expected",
    [
        ("<s>Q: hi\nA: fine</s>", "<s>Q: hi\nA:", None, " fine"),
        ("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nok<|im_end|>",
         "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", None, "ok"),
        ("<|start_header_id|>assistant<|end_header_id|>\n\n42<|eot_id|>",
         "<|start_header_id|>assistant<|end_header_id|>\n\n", None, "42"),
        ("P: x\nA: done<eos><pad><pad>", "P: x\nA:", None, " done"),
        ("P: x\nA: <|tool|> kept inside<|eos|>", "P: x\nA:", None, " <|tool|> kept inside"),
        ("P: x\nA: yes<END>", "P: x\nA:", ["<END>"], " yes"),
        ("P: x\nA: yes<|eos|>", "P: x\nA:", ["<END>"], " yes<|eos|>"),
        # OpenRLHF cut the prompt from the left to fit max_len: its end is still there.
        ("y words. Now answer: A: yes", "a very long prompt with many words. Now answer: A:",
         None, " yes"),
    ],
)  # fmt: skip
def test_the_response_is_the_query_without_its_prompt_and_end_tokens(
    query: str, prompt: str, end_tokens: list[str] | None, expected: str
) -> None:
    assert response_from_query(query, prompt, end_tokens) == expected


def test_answers_are_read_as_openrlhf_writes_them() -> None:
    assert per_sample(torch.tensor([0.25]), 1) == [0.25]  # the examples' reward_func
    assert per_sample(torch.tensor(0.5), 1) == [0.5]
    assert per_sample([[0.5]], 1) == [0.5]
    assert [math.isnan(v) for v in per_sample([0.1, "x", None], 3) or []] == [False, True, True]
    assert per_sample(0.3, 2) is None and per_sample(0.3, 2, broadcast=True) == [0.3, 0.3]
    assert per_sample([0.1], 2) is None and per_sample("0.1", 1) is None

    answer = {"rewards": [0.1, 0.9], "scores": [1, 0],
              "extra_logs": {"length": [3, 4], "note": "text", "batch_mean": 0.5}}  # fmt: skip
    call = RewardCall(["P: a", "P: bb"], ["P:", "P:"], ["x", "x"], answer)
    samples = samples_of(call, None, first_index=7)
    assert [(s.response, s.reward, s.index) for s in samples] == [(" a", 0.1, 7), (" bb", 0.9, 8)]
    assert dict(samples[1].reward_details) == {"scores": 0, "length": 4, "batch_mean": 0.5}
    assert samples[0].group_id == samples[1].group_id  # one prompt, one label: one group
    for bad in (None, {"scores": [1]}, {"rewards": [0.1]}, {"rewards": "high"}):
        with pytest.raises(UnreadableAnswer):
            samples_of(RewardCall(["q1", "q2"], ["p", "p"], [], bad), None)


def routing(producer: FakeProducer, quiet_s: float = 0.2, **kwargs: Any) -> RewardRouting:
    config = SamplingConfig(threshold=THRESHOLD, max_per_step=10_000, max_per_minute=10**6)
    router = build_router(config, producer)
    return RewardRouting(router, run_id="t", rank=3, quiet_s=quiet_s, **kwargs)


def test_the_wrapper_returns_and_raises_exactly_what_the_function_does() -> None:
    producer = FakeProducer()
    answer = {"rewards": torch.tensor([0.1])}
    error = ValueError("the user's bug")

    def user_func(queries: list[str], prompts: list[str], labels: list[str]) -> Any:
        if labels[0] == "raise":
            raise error
        if labels[0] == "none":
            return None
        return answer

    wrapped = RoutedRewardFunc(user_func, routing(producer))
    assert wrapped(["P: a"], ["P:"], ["ok"]) is answer
    assert wrapped(queries=["P: a"], prompts=["P:"], labels=["none"]) is None
    with pytest.raises(ValueError) as raised:
        wrapped(["P: b"], ["P:"], ["raise"])
    assert raised.value is error
    wrapped.close(deadline_s=2)
    # Only the answer that had a reward is routed; None is counted as unreadable, not raised.
    assert [r["response"] for r in producer.records] == [" a"]
    assert wrapped.routing.stats.unreadable == 1
    # Scoring goes on after close() (OpenRLHF never closes it): answers, and nothing piles up.
    assert wrapped(["P: c"], ["P:"], ["ok"]) is answer
    assert wrapped.routing.waiting == 0


def test_steps_are_generation_bursts_and_ids_stay_distinct() -> None:
    producer = FakeProducer()
    routes = routing(producer, quiet_s=0.3, window_s=0.15)
    low = {"rewards": [0.1]}
    for _ in range(2):
        for i in range(6):
            routes.observe(RewardCall([f"P: r{i}"], ["P:"], [""], low))
            time.sleep(0.05)  # a burst longer than window_s: several windows, one step
        time.sleep(0.6)  # the pause for the update: the next burst is the next step
    routes.close(deadline_s=2)
    records = [parse_record(record) for record in producer.records]
    assert [(r.step, r.index) for r in records] == [(s, i) for s in (1, 2) for i in range(6)]
    assert routes.stats.windows > 2  # the window closed inside the bursts too
    assert len({r.sample_id for r in records}) == 12 and {r.rank for r in records} == {3}
    assert {r.generation["step_source"] for r in records} == {"burst"}


def test_calls_from_many_threads_are_all_routed_once_and_cost_little() -> None:
    producer = FakeProducer()
    wrapped = RoutedRewardFunc(lambda q, p, labels: {"rewards": [0.0]}, routing(producer))
    threads, per_thread = 8, 400
    costs: list[float] = []

    def call_many(thread: int) -> None:
        for i in range(per_thread):
            started = time.perf_counter()
            wrapped([f"P: {thread}-{i}"], ["P:"], [""])
            costs.append(time.perf_counter() - started)

    workers = [threading.Thread(target=call_many, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wrapped.close(deadline_s=5)
    responses = Counter(record["response"] for record in producer.records)
    assert responses == Counter(f" {t}-{i}" for t in range(threads) for i in range(per_thread))
    assert len({record["sample_id"] for record in producer.records}) == threads * per_thread
    costs.sort()
    assert costs[len(costs) // 2] < 1e-3  # the median call only appends (µs); a loose bound


def test_a_config_mistake_is_one_usage_error_when_openrlhf_loads_the_file(
    tmp_path: Path,
) -> None:
    config = tmp_path / "lowtide.yaml"
    config.write_text("sampling: {treshold: 0.3}\n")
    with pytest.raises(UsageError, match=r"sampling.treshold.*did you mean threshold"):
        routed(reward_func, config=config)
    with pytest.raises(UsageError, match="takes the reward function"):
        routed("my_rewards:reward_func")  # type: ignore[arg-type]


# ---- the command line ----------------------------------------------------------------------


@pytest.mark.integration
def test_reward_file_writes_a_file_openrlhf_can_load(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    own_redis: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "my_rewards", raising=False)  # another test's
    (tmp_path / "my_rewards.py").write_text(
        "def reward_func(queries, prompts, labels):\n    return {'rewards': [0.0]}\n"
    )
    config = tmp_path / "lowtide.yaml"
    config.write_text(
        f"queue: {{redis_url: '{own_redis.url}', name: rf, spool_dir: '{tmp_path}/spool'}}\n"
    )
    out = tmp_path / "lowtide_reward.py"
    argv = ["openrlhf", "reward-file", "--func", "my_rewards:reward_func", "--out", str(out),
            "--config", str(config), "--run-id", "rf-run", "--sampling.threshold=0.5"]  # fmt: skip
    code, _, err = invoke(capsys, *argv)
    assert code == 0, err
    # As OpenRLHF loads it: by path, from another directory.
    spec = importlib.util.spec_from_file_location("reward_func", out)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.reward_func(["P: a"], ["P:"], ["x"]) == {"rewards": [0.0]}
    module.reward_func.close(deadline_s=5)
    records = queued_records(own_redis.url, "rf")
    assert [(r["run_id"], r["response"]) for r in records] == [("rf-run", " a")]

    code, _, err = invoke(capsys, *argv)
    assert code == 2 and "exists: pass --force" in err
    code, _, err = invoke(capsys, *argv[:3], "nope:reward_func", *argv[4:], "--force")
    assert code == 2 and err.count("\n") == 1 and "cannot import module 'nope'" in err


def test_reward_file_checks_the_config_without_starting_routing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing the file only reads the config: no producer (it would replay a spool into Redis)
    and no routing thread are started; a mistake in it is one line."""
    monkeypatch.delitem(sys.modules, "my_rewards", raising=False)
    (tmp_path / "my_rewards.py").write_text("def reward_func(queries, prompts, labels): ...\n")
    out = tmp_path / "lowtide_reward.py"
    argv = ["openrlhf", "reward-file", "--func", "my_rewards:reward_func", "--out", str(out)]
    code, _, err = invoke(capsys, *argv, "--sampling.treshold=0.5")
    assert code == 2 and err.count("\n") == 1 and "threshold" in err and not out.exists()
    before = {thread.name for thread in threading.enumerate()}
    code, _, err = invoke(capsys, *argv, "--sampling.threshold=0.5")
    assert code == 0, err
    started = {thread.name for thread in threading.enumerate()} - before
    assert not {"lowtide-openrlhf", "lowtide-producer"} & started


@contextmanager
def serving_proxy(
    upstream: RewardServer, producer: FakeProducer, limits: Limits | None = None
) -> Iterator[RewardProxy]:
    proxy = RewardProxy(
        upstream.url, routing(producer), token=TOKEN, port=0, timeout_s=5, limits=limits
    )
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.close(deadline_s=5)


def status_of(port: int, data: bytes, timeout_s: float = 2.0) -> int:
    """Send raw bytes (a request, or its beginning) and read the status of the answer; a server
    that keeps waiting for the rest times the test out."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall(data)
        return int(sock.makefile("rb").readline().split()[1])


@pytest.mark.integration
def test_the_proxy_answers_byte_for_byte_and_routes_what_was_ok(tmp_path: Path) -> None:
    upstream = RewardServer().start()
    producer = FakeProducer()
    with serving_proxy(upstream, producer) as proxy:
        # The token as OpenRLHF's client sends it: the URL's password (HTTP Basic).
        url = f"http://lowtide:{TOKEN}@127.0.0.1:{proxy.address[1]}/get_reward"
        for prompt in ("P:", f"P {FAIL_MARK}:"):
            payload = {"query": [f"{prompt} blue"], "prompts": [prompt], "labels": ["red"]}
            direct = httpx.post(upstream.url, json=payload)
            proxied = httpx.post(url, json=payload)
            assert (proxied.status_code, proxied.content) == (direct.status_code, direct.content)
            assert proxied.headers["content-type"] == direct.headers["content-type"]
        upstream.stop()  # the user's server is gone: a failed try, as a refused connection is
        gone = httpx.post(url, json=payload)
        assert gone.status_code == 502 and "upstream unreachable" in gone.text
    assert [(r["prompt"], r["response"]) for r in producer.records] == [("P:", " blue")]


@pytest.mark.integration
def test_the_proxy_refuses_a_request_without_the_token_and_forwards_nothing() -> None:
    upstream = RewardServer().start()
    producer = FakeProducer()
    payload = {"query": ["P: blue"], "prompts": ["P:"], "labels": ["red"]}
    try:
        with serving_proxy(upstream, producer) as proxy:
            url = f"http://127.0.0.1:{proxy.address[1]}/get_reward"
            wrong = ["", f"Bearer {TOKEN[:-1]}x", "Bearer", "Basic bm90IGJhc2U2NA==", TOKEN]
            for value in wrong:
                headers = {"authorization": value} if value else {}
                assert httpx.post(url, json=payload, headers=headers).status_code == 401
            wrong_password = f"http://lowtide:{TOKEN[:-1]}x@127.0.0.1:{proxy.address[1]}/"
            assert httpx.post(wrong_password, json=payload).status_code == 401
            bearer = {"authorization": f"Bearer {TOKEN}"}
            assert httpx.post(url, json=payload, headers=bearer).status_code == 200
    finally:
        upstream.stop()
    assert sum(upstream.requests.values()) == 1  # only the request with the token went on
    assert len(producer.records) == 1


@pytest.mark.integration
def test_the_proxy_refuses_a_body_over_the_cap_before_reading_it() -> None:
    upstream = RewardServer().start()
    try:
        with serving_proxy(upstream, FakeProducer(), Limits(max_body=1000)) as proxy:
            port = proxy.address[1]
            # Announced larger than the cap: refused on the headers, the 1 GiB never sent.
            head = f"POST / HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n"
            assert status_of(port, f"{head}Content-Length: {2**30}\r\n\r\n".encode() + b"{") == 413
            # Chunked: refused at the chunk that passes the cap, the rest never sent.
            chunked = f"{head}Transfer-Encoding: chunked\r\n\r\n".encode()
            assert status_of(port, chunked + b"3e8\r\n" + b"x" * 1000 + b"\r\n1\r\n") == 413
            # Exactly the cap is fine.
            body = json.dumps({"query": ["P: a"], "prompts": ["P:"], "labels": ["a"]}).encode()
            body += b" " * (1000 - len(body))
            ok = httpx.post(f"http://lowtide:{TOKEN}@127.0.0.1:{port}/", content=body)
            assert ok.status_code == 200
    finally:
        upstream.stop()
    assert sum(upstream.requests.values()) == 1


@pytest.mark.integration
def test_the_proxy_refuses_a_negative_or_malformed_content_length() -> None:
    upstream = RewardServer().start()
    try:
        with serving_proxy(upstream, FakeProducer()) as proxy:
            head = f"POST / HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n"
            for length in ("-1", "abc", "1e3", "5, 6", "+5", "\u00b2"):
                data = f"{head}Content-Length: {length}\r\n\r\n".encode("latin-1")
                assert status_of(proxy.address[1], data) == 400, length
            both = f"{head}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
            assert status_of(proxy.address[1], both.encode()) == 400
    finally:
        upstream.stop()
    assert not upstream.requests


@pytest.mark.integration
def test_the_proxy_answers_at_once_while_200_slow_clients_hold_connections() -> None:
    upstream = RewardServer().start()
    producer = FakeProducer()
    threads_before = threading.active_count()
    slow: list[socket.socket] = []
    try:
        with serving_proxy(upstream, producer, Limits(read_timeout_s=1.5)) as proxy:
            port = proxy.address[1]
            partial_head = b"POST /get_reward HTTP/1.1\r\nHost: x\r\n"
            partial_body = (f"POST /get_reward HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n"
                            "Content-Length: 1000\r\n\r\n{\"query\": [").encode()  # fmt: skip
            for i in range(200):
                sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                sock.sendall(partial_head if i % 2 else partial_body)
                slow.append(sock)
            started = time.monotonic()
            payload = {"query": ["P: blue"], "prompts": ["P:"], "labels": ["red"]}
            url = f"http://lowtide:{TOKEN}@127.0.0.1:{port}/get_reward"
            answer = httpx.post(url, json=payload, timeout=5)
            assert answer.status_code == 200 and time.monotonic() - started < 2.0
            # No thread per connection: the slow clients hold sockets, not threads.
            assert threading.active_count() - threads_before < 20
            still_open = [sock for sock in slow if _open(sock)]
            assert len(still_open) == 200  # they were held while the request went through
            # Past the read deadline (1.5 s after each connected), the proxy drops them all.
            deadline = time.monotonic() + 3.0
            while [sock for sock in slow if _open(sock)] and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not [sock for sock in slow if _open(sock)]
    finally:
        for sock in slow:
            sock.close()
        upstream.stop()
    assert len(producer.records) == 1


def _open(sock: socket.socket) -> bool:
    """Whether the peer still holds the connection (nothing to read, no end of stream)."""
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""  # data would be an answer: not expected here
    except BlockingIOError:
        return True
    except ConnectionError:
        return False
    finally:
        sock.setblocking(True)


def test_the_proxy_token_is_generated_into_env_and_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("REDIS_URL=redis://127.0.0.1:6379/0")  # no last newline
    monkeypatch.setenv("LOWTIDE_ENV_FILE", str(env_file))
    for name in ("LOWTIDE_PROXY_TOKEN", "LOWTIDE_PROXY_TOKEN_FILE"):
        monkeypatch.setenv(name, "")  # recorded, so that what proxy_token sets is undone
        monkeypatch.delenv(name)
    token, kept = proxy_token()
    assert len(token) >= 32 and token not in kept and str(env_file) in kept
    assert env_file.stat().st_mode & 0o777 == 0o600
    assert read_env_file(env_file) == {"REDIS_URL": "redis://127.0.0.1:6379/0",
                                       "LOWTIDE_PROXY_TOKEN": token}  # fmt: skip
    assert mask_text(f"http://127.0.0.1:5001/{token}") == "http://127.0.0.1:5001/****"
    assert proxy_token() == (token, "$LOWTIDE_PROXY_TOKEN")  # the next start reads it again
    for weak in ("short", "has,comma-and-is-long-enough", "spaces are not ok in a url"):
        monkeypatch.setenv("LOWTIDE_PROXY_TOKEN", weak)
        with pytest.raises(UsageError, match="16\\+ characters"):
            proxy_token()


# ---- through OpenRLHF's own executor, in its own virtualenv --------------------------------


@pytest.fixture(scope="session")
def openrlhf_python() -> Path:
    """OpenRLHF's virtualenv (built by `make test` first; built here if missing, ~1 min)."""
    try:
        return peer_venvs.ensure(peer_venvs.OPENRLHF, REPO)
    except Exception as error:  # no network, no disk: say why, do not fail the suite
        pytest.skip(f"the OpenRLHF virtualenv cannot be built here: {error}")


def rollouts(
    python: Path, tmp_path: Path, endpoints: dict[str, str], env: dict[str, str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    spec = tmp_path / "spec.json"
    out = tmp_path / "out.json"
    spec.write_text(json.dumps({"endpoints": endpoints, "bursts": BURSTS, "pause_s": 0.8}))
    environ = peer_venvs.OPENRLHF.environ(REPO)
    environ.update(env or {})
    done = subprocess.run(
        [str(python), str(ROLLOUTS), str(spec), str(out)],
        env=environ, capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return json.loads(out.read_text())


def routed_file(tmp_path: Path, redis_url: str, queue: str) -> Path:
    """The three lines a user writes (quiet_s short: the test pauses 0.8 s between bursts)."""
    config = tmp_path / "lowtide.yaml"
    config.write_text(
        f"sampling: {{policy: threshold, threshold: {THRESHOLD}}}\n"
        f"queue: {{redis_url: '{redis_url}', name: {queue}, spool_dir: '{tmp_path}/spool', "
        "max_latency_ms: 50}\n"
    )
    path = tmp_path / "lowtide_reward.py"
    path.write_text(
        "from lowtide.openrlhf import routed\n"
        "from tests.helpers.openrlhf_user_rewards import reward_func as _reward_func\n"
        f"reward_func = routed(_reward_func, config={str(config)!r}, run_id='orl', quiet_s=0.3)\n"
    )
    return path


def expected_low(outputs: list[dict[str, Any]]) -> Counter:
    """(step, prompt, response, reward) of every sample OpenRLHF got a reward below the
    threshold for; the step is the burst (BURSTS lists them in order)."""
    sizes = [sum(len(item["responses"]) for item in burst) for burst in BURSTS]
    steps = [step for step, size in enumerate(sizes, start=1) for _ in range(size)]
    keys = Counter()
    for step, output in zip(steps, outputs, strict=True):
        reward = output["reward"]
        value = reward[0] if isinstance(reward, list) else reward
        if value is not None and value < THRESHOLD:
            response = output["query"][len(output["prompt"]) :].removesuffix("<|eos|>")
            keys[(step, output["prompt"], response, value)] += 1
    return keys


def as_keys(records: list[dict[str, Any]]) -> Counter:
    return Counter((r["step"], r["prompt"], r["response"], r["reward"]) for r in records)


@openrlhf_e2e
def test_file_form_openrlhf_gets_the_same_rewards_and_low_ones_are_queued_once(
    openrlhf_python: Path, own_redis: Any, tmp_path: Path
) -> None:
    plain = tmp_path / "plain_reward.py"
    plain.write_text("from tests.helpers.openrlhf_user_rewards import reward_func  # noqa\n")
    wrapped = routed_file(tmp_path, own_redis.url, "orl-file")
    found = rollouts(openrlhf_python, tmp_path, {"plain": str(plain), "routed": str(wrapped)})

    assert found["routed"] == found["plain"]  # rewards, scores, extra_logs, even their types
    assert {o["reward_type"] for o in found["plain"]} == {"Tensor", "NoneType"}
    # The function raised for one prompt: OpenRLHF logged it and left the reward None.
    failed = [o for o in found["plain"] if RAISE_MARK in o["prompt"]]
    assert len(failed) == 2 and all(o["reward"] is None for o in failed)

    records = queued_records(own_redis.url, "orl-file")
    expected = expected_low(found["plain"])
    assert sum(expected.values()) == 5
    assert as_keys(records) == expected  # exactly the low-reward samples, once each
    assert len({r["sample_id"] for r in records}) == len(records)
    one = parse_record(records[0])
    assert one.run_id == "orl" and set(one.reward_details) == {"scores", "length"}
    assert one.selected_by.policy == "threshold"


@openrlhf_e2e
def test_http_form_openrlhf_gets_the_same_answers_and_low_ones_are_queued_once(
    openrlhf_python: Path, own_redis: Any, tmp_path: Path
) -> None:
    upstream = RewardServer().start()
    port = free_port()
    # Credentials in --upstream (the test server ignores them) must not reach the output.
    with_password = upstream.url.replace("http://", "http://user:upstream-secret@")
    proxy = subprocess.Popen(
        [sys.executable, "-m", "lowtide", "openrlhf", "proxy", "--upstream", with_password,
         "--port", str(port), "--run-id", "orl-http", f"--queue.redis_url={own_redis.url}",
         "--queue.name=orl-http", f"--queue.spool_dir={tmp_path}/spool",
         "--queue.max_latency_ms=50", f"--sampling.threshold={THRESHOLD}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "LOWTIDE_PROXY_TOKEN": TOKEN},
    )  # fmt: skip
    try:
        wait_for_port(port, proxy)
        # OpenRLHF's client sends no headers of its own: the token is the URL's password.
        found = rollouts(
            openrlhf_python, tmp_path,
            {"direct": upstream.url, "proxied": f"http://lowtide:{TOKEN}@127.0.0.1:{port}/get_reward"},
        )  # fmt: skip
    finally:
        proxy.send_signal(signal.SIGTERM)
        _, err = proxy.communicate(timeout=30)
        upstream.stop()
    assert proxy.returncode == 0, err
    assert found["proxied"] == found["direct"]
    # The server failed one prompt: OpenRLHF tried 5 times each way, then left the reward None.
    failing = next(p for p in upstream.requests if FAIL_MARK in p)
    assert upstream.requests[failing] == 2 * 2 * 5  # two samples, direct and proxied
    assert all(o["reward"] is None for o in found["direct"] if FAIL_MARK in o["prompt"])

    records = queued_records(own_redis.url, "orl-http")
    assert as_keys(records) == expected_low(found["direct"])
    assert sum(expected_low(found["direct"]).values()) == 5
    assert {r["run_id"] for r in records} == {"orl-http"}
    assert "5 routed" in err
    assert TOKEN not in err and "upstream-secret" not in err
    assert f"http://lowtide:<token>@127.0.0.1:{port}/get_reward" in err


def wait_for_port(port: int, process: subprocess.Popen, timeout_s: float = 30) -> None:
    def alive() -> None:
        assert process.poll() is None, process.communicate()[1]

    assert wait_for_http(port, timeout_s, alive), f"nothing listens on {port}"


@openrlhf_e2e
def test_redis_down_the_low_samples_are_spooled_and_replayed_once(
    openrlhf_python: Path, own_redis: Any, tmp_path: Path
) -> None:
    own_redis.kill()
    wrapped = routed_file(tmp_path, own_redis.url, "orl-down")
    plain = tmp_path / "plain_reward.py"
    plain.write_text("from tests.helpers.openrlhf_user_rewards import reward_func  # noqa\n")
    found = rollouts(openrlhf_python, tmp_path, {"plain": str(plain), "routed": str(wrapped)})
    assert found["routed"] == found["plain"]  # Redis down changes nothing OpenRLHF sees

    assert Spool(tmp_path / "spool").pending_records() == 5  # nothing lost while Redis was down
    own_redis.start()
    assert queued_records(own_redis.url, "orl-down") == []
    config = tmp_path / "lowtide.yaml"
    done = run_cli("queue", "replay", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    records = queued_records(own_redis.url, "orl-down")
    assert as_keys(records) == expected_low(found["plain"])
    assert sum(expected_low(found["plain"]).values()) == 5
    assert Spool(tmp_path / "spool").pending_records() == 0
