"""`lowtide openrlhf reward-file | proxy`: route the low-reward rollouts of an OpenRLHF run, from
the reward function file or the reward server its `--reward.remote_url` names."""

from __future__ import annotations

import logging
import os
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

app = typer.Typer(
    help="Route low-reward rollouts of an OpenRLHF run (its --reward.remote_url).",
    no_args_is_help=True,
)
READS_ROUTING = reads("sampling", "queue")  # --config and --sampling.KEY / --queue.KEY overrides


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
) -> None:
    """Forward OpenRLHF's reward requests to your reward server, answer with its reply as it is,
    and route the low-reward samples. Point --reward.remote_url at http://HOST:PORT/get_reward.
    Ctrl-C or SIGTERM: stop, route what is waiting, exit."""
    from lowtide.openrlhf_proxy import RewardProxy  # http.server, only for this command

    if not upstream.startswith(("http://", "https://")):
        raise UsageError(f"--upstream {upstream}: give an http:// or https:// URL")
    routing = start_routing(config=config, overrides=ctx.args, run_id=run_id, model_name=model_name)
    try:
        server = RewardProxy(upstream, routing, host=host, port=port, timeout_s=timeout)
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
    err.print(
        f"forwarding http://{host}:{server.address[1]} -> {upstream}; "
        f"routing as run {routing.run_id} (Ctrl-C stops)"
    )
    try:
        server.serve_forever()
    finally:
        server.close()
        stats = routing.stats
        err.print(
            f"stopped: {server.stats.requests} request(s), {server.stats.upstream_errors} not OK "
            f"upstream; {stats.samples} sample(s) read, {stats.submitted} routed"
        )
