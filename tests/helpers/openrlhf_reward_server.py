"""A user's reward server for OpenRLHF's HTTP form, answering as OpenRLHF's `serve_rm.py` does:
POST `{"query", "prompts", "labels"}` -> `{"rewards": [...], "scores": [...], "extra_logs":
{...}}`. A prompt with FAIL_MARK gets a 500, as a crashing server would give."""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.helpers.openrlhf_user_rewards import FAIL_MARK, score


class RewardServer:
    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()  # prompt -> how many requests asked about it
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"owner": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/get_reward"

    def start(self) -> RewardServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, data: dict[str, Any]) -> tuple[int, bytes]:
        with self.lock:
            self.requests.update(data["prompts"])
        if any(FAIL_MARK in prompt for prompt in data["prompts"]):
            return 500, b"Internal Server Error"
        scored = [
            score(q, p, str(label))
            for q, p, label in zip(data["query"], data["prompts"], data["labels"], strict=True)
        ]
        rewards = [reward for reward, _ in scored]
        body = {"rewards": rewards, "scores": rewards,
                "extra_logs": {"length": [length for _, length in scored]}}  # fmt: skip
        return 200, json.dumps(body).encode()


class _Handler(BaseHTTPRequestHandler):
    owner: RewardServer
    disable_nagle_algorithm = True  # as real servers (uvicorn) do

    def do_POST(self) -> None:
        data = json.loads(self.rfile.read(int(self.headers["content-length"])))
        status, body = self.owner.answer(data)
        self.send_response(status)
        self.send_header("content-type", "application/json" if status == 200 else "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass
