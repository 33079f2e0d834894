"""`lowtide openrlhf reward-file | proxy`: route the low-reward rollouts of an OpenRLHF run, from
the reward function file or the reward server its `--reward.remote_url` names."""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import secrets
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

import typer

from lowtide.cli.usage import reads
from lowtide.config import load_service_config
from lowtide.console import err
from lowtide.errors import UsageError, UserError
from lowtide.integrations import CONFIG_VAR
from lowtide.openrlhf import load_function, reward_file_text, start_routing
from lowtide.services.credentials import env_file_path

app = typer.Typer(
    help="Route low-reward rollouts of an OpenRLHF run (its --reward.remote_url).",
    no_args_is_help=True,
)
READS_ROUTING = reads("sampling", "queue")  # --config and --sampling.KEY / --queue.KEY overrides
TOKEN_VAR = "LOWTIDE_PROXY_TOKEN"
MIN_TOKEN_CHARS = 16
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~-]+")


@app.command("reward-file", cls=READS_ROUTING)
def reward_file(
    ctx: typer.Context,
    func: str = typer.Option(..., "--func", help="your reward function, MODULE:FUNCTION"),
    out: Path = typer.Option(Path("lowtide_reward.py"), "--out", help="the file to write"),
    config: Path | None = typer.Option(None, "--config", "-c", help="lowtide config file"),
    run_id: str | None = typer.Option(None, "--run-id", help="names the run in the records"),
    model_name: str = typer.Option("unknown", "--model-name", help="the policy, for reviewers"),
    force: bool = typer.Option(False, "--force", help="overwrite an existing file"),
) -> None:
    """Write a reward file for --reward.remote_url: your function, with its low-reward samples
    routed to review (overrides such as --sampling.threshold=0.1 are written into it). Checks
    that the function imports and the config is valid first."""
    if out.suffix != ".py":
        raise UsageError(f"--out {out}: OpenRLHF loads a reward file only if it ends in .py")
    if out.exists() and not force:
        raise UsageError(f"{out} exists: pass --force to overwrite it")
    sys.path.insert(0, str(out.resolve().parent))  # where the written file will look
    try:
        load_function(func)
    finally:
        sys.path.remove(str(out.resolve().parent))
    if config is not None and not config.is_file():
        raise UsageError(f"--config {config}: no such file")
    # The config as OpenRLHF will load it, checked without starting a producer (whose thread
    # would replay an earlier run's spool) or a routing thread.
    load_service_config(config or os.environ.get(CONFIG_VAR) or None, ctx.args)
    text = reward_file_text(
        func, out, config=config, overrides=ctx.args, run_id=run_id, model_name=model_name
    )
    out.write_text(text)
    err.print(f"wrote {out}: pass --reward.remote_url {out} to OpenRLHF")


@app.command("proxy", cls=READS_ROUTING)
def proxy(
    ctx: typer.Context,
    upstream: str = typer.Option(..., "--upstream", help="your reward server's URL"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on"),
    port: int = typer.Option(5001, "--port", min=1, max=65535, help="port to listen on"),
    config: Path | None = typer.Option(None, "--config", "-c", help="lowtide config file"),
    run_id: str | None = typer.Option(None, "--run-id", help="names the run in the records"),
    model_name: str = typer.Option("unknown", "--model-name", help="the policy, for reviewers"),
    timeout: float = typer.Option(180.0, "--timeout", min=1, help="seconds to wait upstream"),
    max_body_mb: int = typer.Option(16, "--max-body-mb", min=1, help="largest request, MiB"),
) -> None:
    """Forward OpenRLHF's reward requests to your reward server, answer with its reply as it is,
    and route the low-reward samples. Requests must carry the token ($LOWTIDE_PROXY_TOKEN, else
    one generated into .env): point --reward.remote_url at http://lowtide:TOKEN@HOST:PORT/get_reward.
    Ctrl-C or SIGTERM: stop, route what is waiting, exit."""
    from sampling.sources.openrlhf.proxy import Limits, RewardProxy  # asyncio, only here

    if not upstream.startswith(("http://", "https://")):
        raise UsageError(f"--upstream {upstream}: give an http:// or https:// URL")
    token, kept = proxy_token()
    routing = start_routing(config=config, overrides=ctx.args, run_id=run_id, model_name=model_name)
    limits = Limits(max_body=max_body_mb * 1024 * 1024)
    try:
        server = RewardProxy(
            upstream, routing, token=token, host=host, port=port, timeout_s=timeout, limits=limits
        )
    except OSError as error:
        routing.close(deadline_s=0.5)
        raise UserError(
            f"cannot listen on {host}:{port} ({error.strerror}): pass another --port"
        ) from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    def stop(signum: int, _frame: FrameType | None) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()  # not on the serving thread

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    bound = server.address[1]
    err.print(
        f"forwarding http://{host}:{bound} -> {upstream}; "
        f"routing as run {routing.run_id} (Ctrl-C stops)",
        markup=False,
    )
    # The token itself is never printed: the line says where it is kept.
    err.print(
        f"requests must carry the token ({kept}); OpenRLHF sends it as the URL's password: "
        f"--reward.remote_url http://lowtide:<token>@{_reachable_as(host)}:{bound}/get_reward",
        markup=False,
    )
    if not _is_loopback(host):
        err.print(
            f"note: --host {host} listens beyond this machine; plain HTTP carries the token and "
            "the samples unencrypted: keep it to a network you trust",
            markup=False,
        )
    try:
        server.serve_forever()
    finally:
        server.close()
        stats = routing.stats
        err.print(
            f"stopped: {server.stats.requests} request(s), {server.stats.upstream_errors} not OK "
            f"upstream, {server.stats.refused} refused; {stats.samples} sample(s) read, "
            f"{stats.submitted} routed"
        )


def proxy_token() -> tuple[str, str]:
    """The token the proxy wants, and where it is kept (for the user, without the value):
    $LOWTIDE_PROXY_TOKEN (a `.env` the CLI loaded counts), the file $LOWTIDE_PROXY_TOKEN_FILE
    names, else a new one appended to `.env`, which the next start reads again."""
    value = os.environ.get(TOKEN_VAR)
    if value:
        return _checked_token(value, f"${TOKEN_VAR}"), f"${TOKEN_VAR}"
    path = os.environ.get(f"{TOKEN_VAR}_FILE")
    if path:
        try:
            value = Path(path).read_text(encoding="utf-8").strip()
        except OSError as error:
            raise UsageError(
                f"{TOKEN_VAR}_FILE={path}: cannot read it ({error.strerror})"
            ) from None
        return _checked_token(value, f"{TOKEN_VAR}_FILE={path}"), f"the file {path}"
    token = secrets.token_urlsafe(32)
    env_file = env_file_path()
    _save_token(env_file, token)
    os.environ[TOKEN_VAR] = token  # from now on every output masks it
    return token, f"new, saved as {TOKEN_VAR} in {env_file}, mode 600"


def _checked_token(value: str, source: str) -> str:
    # URL-safe only: OpenRLHF takes the token inside --reward.remote_url, which it splits at
    # commas; at least 16 characters, so that guessing is hopeless.
    if len(value) < MIN_TOKEN_CHARS or not _TOKEN_CHARS.fullmatch(value):
        raise UsageError(
            f"{source}: the token needs {MIN_TOKEN_CHARS}+ characters of A-Z a-z 0-9 - _ . ~ "
            f"(unset it and a new one is generated into .env)"
        )
    return value


def _save_token(path: Path, token: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = path.read_text() if path.exists() else ""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a") as handle:
        if existing and not existing.endswith("\n"):  # a hand-edited .env may lack it
            handle.write("\n")
        handle.write("# generated by `lowtide openrlhf proxy`: its requests must carry it\n")
        handle.write(f"{TOKEN_VAR}={token}\n")
    os.chmod(path, 0o600)  # an existing .env too: it holds a secret now


def _reachable_as(host: str) -> str:
    return "<this-host>" if host in ("0.0.0.0", "::", "") else host  # every address: name one


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
