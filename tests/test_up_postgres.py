"""`lowtide up --postgres`: the local Label Studio on PostgreSQL, its database made if missing;
the flags, the one-line errors, and a real start on the machine's PostgreSQL."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
import pytest

from lowtide.errors import UsageError, UserError
from lowtide.services import labelstudio
from lowtide.services.credentials import read_env_file
from lowtide.services.postgres import (
    DEFAULT_DATABASE,
    PostgresDatabase,
    drop_database,
    ensure_database,
)
from lowtide.services.process import free_port, is_running
from tests.conftest import REPO, SECRET_VARS, invoke, run_cli
from tests.helpers import postgres

pytestmark = pytest.mark.unit


def test_a_database_is_reached_where_libpq_would_and_named_safely(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("PGHOST", "PGPORT"):
        monkeypatch.delenv(name, raising=False)
    database = PostgresDatabase.named(DEFAULT_DATABASE)
    env = database.label_studio_env()
    assert (env["DJANGO_DB"], env["POSTGRE_NAME"], env["POSTGRE_USER"]) == (
        "default", DEFAULT_DATABASE, DEFAULT_DATABASE
    )  # fmt: skip
    assert (env["POSTGRE_HOST"], env["POSTGRE_PORT"]) == ("127.0.0.1", "5432")
    assert len(env["POSTGRE_PASSWORD"]) >= 20 and env["POSTGRE_PASSWORD"] not in repr(database)
    assert PostgresDatabase.named("x").password != PostgresDatabase.named("x").password

    monkeypatch.setenv("PGHOST", "/var/run/postgresql")  # a socket: this machine, over TCP
    monkeypatch.setenv("PGPORT", "5433")
    assert PostgresDatabase.named("x").where == "127.0.0.1:5433"
    monkeypatch.setenv("PGHOST", "db.internal")
    assert PostgresDatabase.named("x").where == "db.internal:5433"
    monkeypatch.setenv("PGPORT", "five")
    with pytest.raises(UsageError, match="PGPORT='five' is not a port number"):
        PostgresDatabase.named("x")


@pytest.mark.parametrize("name", ["Review", "lowtide-ls", "1st", "x" * 64, "a;drop"])
def test_a_name_that_would_need_quoting_is_refused(name: str) -> None:
    with pytest.raises(UsageError, match="lower-case letters, digits and underscores"):
        PostgresDatabase.named(name)


def test_up_refuses_a_bad_database_name_before_starting_anything(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, stderr = invoke(capsys, "up", "--postgres", "--postgres-database", "Review DB")
    assert code == 2 and "PostgreSQL database name 'Review DB'" in stderr
    assert not (workdir / ".lowtide" / "services.json").exists()


@pytest.mark.integration
def test_up_without_a_reachable_postgres_says_so_in_one_line(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGHOST", "127.0.0.1")
    monkeypatch.setenv("PGPORT", str(free_port()))  # nothing listens there
    code, _, stderr = invoke(capsys, "up", "--only", "label-studio", "--postgres")
    assert code == 1
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "PostgreSQL is not reachable at 127.0.0.1:" in lines[0]
    assert "sudo service postgresql start" in lines[0] and "PGHOST and PGPORT" in lines[0]
    assert not (workdir / ".lowtide" / "services.json").exists()  # nothing was started


@pytest.mark.integration
def test_the_make_target_names_what_to_do(tmp_path: Path) -> None:
    import subprocess
    import sys

    port = free_port()
    result = subprocess.run(
        [sys.executable, "-m", "tests.helpers.postgres"], cwd=REPO,
        env={"PATH": str(tmp_path), "PGHOST": "127.0.0.1", "PGPORT": str(port)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stdout.startswith(f"PostgreSQL is not reachable at 127.0.0.1:{port} (")
    assert result.stdout.strip().endswith(postgres.INSTALL_HINT)


def test_a_missing_postgres_skips_outside_ci_and_fails_in_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(postgres, "problem", lambda: "PostgreSQL is not reachable; install it")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="install it"):
        postgres.require()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="install it"):
        postgres.require()


@pytest.mark.e2e
@pytest.mark.labelstudio
@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_up_postgres_starts_label_studio_on_a_database_it_creates(tmp_path: Path) -> None:
    postgres.require()
    name = f"lowtide_test_up_{uuid.uuid4().hex[:8]}"
    port = free_port()
    env = {
        "LOWTIDE_STATE_DIR": str(tmp_path / ".lowtide"),
        "LOWTIDE_ENV_FILE": str(tmp_path / ".env"),
        "LABEL_STUDIO_URL": "",
        **{secret: "" for secret in SECRET_VARS},  # generated into .env, not inherited
    }
    flags = ["--only", "label-studio", "--label-studio-port", str(port)]
    try:
        up = run_cli("up", *flags, "--postgres", "--postgres-database", name, cwd=tmp_path, env=env)
        assert up.returncode == 0, up.stderr
        assert f"on PostgreSQL database {name}" in up.stderr
        assert not list((tmp_path / ".lowtide").rglob("*.sqlite3"))  # nothing went to SQLite
        # The account `up` makes for a first start: in .env, which only its owner can read,
        # and named where it was printed, the password and the token never printed.
        secrets = read_env_file(tmp_path / ".env")
        token = secrets["LABEL_STUDIO_API_KEY"]
        assert len(token) >= 20 and secrets["LABEL_STUDIO_USERNAME"]
        assert (tmp_path / ".env").stat().st_mode & 0o077 == 0
        printed = up.stdout + up.stderr
        assert secrets["LABEL_STUDIO_USERNAME"] in printed and str(tmp_path / ".env") in printed
        assert token not in printed and secrets["LABEL_STUDIO_PASSWORD"] not in printed
        projects = httpx.get(
            f"http://127.0.0.1:{port}/api/projects",
            headers={"Authorization": f"Token {token}"},
            timeout=30,
        )
        assert projects.status_code == 200, projects.text

        again = run_cli("up", *flags, "--postgres", "--postgres-database", name, cwd=tmp_path,
                        env=env)  # fmt: skip
        assert again.returncode == 0 and "already running" in again.stderr
        on_sqlite = run_cli("up", *flags, cwd=tmp_path, env=env)
        assert on_sqlite.returncode == 1
        assert f"already runs at http://127.0.0.1:{port} on PostgreSQL database {name}" in (
            on_sqlite.stderr
        )
        assert "`lowtide down`" in on_sqlite.stderr
    finally:
        state = tmp_path / ".lowtide" / "services.json"
        services = json.loads(state.read_text()) if state.exists() else {}
        down = run_cli("down", cwd=tmp_path, env=env)
        drop_database(PostgresDatabase.named(name), labelstudio.python())
    assert down.returncode == 0, down.stderr
    assert services["label-studio"]["database"] == name
    assert not is_running(services["label-studio"]["pid"])


@pytest.mark.integration
@pytest.mark.postgres
def test_a_role_that_may_not_create_databases_gets_the_line_that_fixes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    postgres.require()
    labelstudio.ensure_installed(REPO)
    tag = uuid.uuid4().hex[:8]
    plain = PostgresDatabase.named(f"lowtide_test_plain_{tag}")  # its role: LOGIN, nothing more
    wanted = PostgresDatabase.named(f"lowtide_test_wanted_{tag}")
    ensure_database(plain, labelstudio.python())
    try:
        monkeypatch.setenv("PGHOST", plain.host)
        monkeypatch.setenv("PGUSER", plain.role)
        monkeypatch.setenv("PGPASSWORD", plain.password)
        with pytest.raises(UserError) as refused:
            ensure_database(wanted, labelstudio.python())
        message = str(refused.value)
        assert f"refused to create Label Studio's database {wanted.name}" in message
        assert "permission denied" in message and "createuser --createdb --createrole" in message
        assert plain.password not in message and "\n" not in message

        monkeypatch.setenv("PGUSER", f"lowtide_test_nobody_{tag}")
        with pytest.raises(UserError, match="cannot log in to manage") as no_login:
            ensure_database(wanted, labelstudio.python())
        assert "createuser --createdb --createrole" in str(no_login.value)
    finally:
        monkeypatch.undo()
        drop_database(plain, labelstudio.python())
