"""The multi-replica rolling restart behind nginx (scripts/rolling_restart.py), and its nginx config."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "rolling_restart.py"
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (make system-deps)")


def load_script():
    spec = importlib.util.spec_from_file_location("rolling_restart", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script executes
    spec.loader.exec_module(module)
    return module


def test_nginx_config_balances_by_connections_and_upgrades_websockets(tmp_path):
    rr = load_script()
    nginx = rr.Nginx(NGINX or "nginx", tmp_path, 18080)
    nginx.render([18101, 18102, 18103], down={18102})
    conf = (tmp_path / "nginx.conf").read_text()
    assert "{{" not in conf
    assert "least_conn;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert "proxy_buffering off;" in conf
    assert "server 127.0.0.1:18102 max_fails=1 fail_timeout=2s down;" in conf
    assert "server 127.0.0.1:18101 max_fails=1 fail_timeout=2s;" in conf
    # nginx's idle read timeout must outlive a stream, or the balancer cuts long utterances.
    timeout = int(conf.split("proxy_read_timeout ")[1].split("s;")[0])
    assert timeout >= 600


@needs_nginx
def test_nginx_accepts_the_rendered_config(tmp_path):
    rr = load_script()
    nginx = rr.Nginx(NGINX, tmp_path, 18080)
    nginx.render([18101, 18102], down=set())
    result = subprocess.run([NGINX, "-p", str(tmp_path), "-c", str(nginx.conf), "-t"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_sonare_bench_failures_pass_only_when_they_are_refusals():
    rr = load_script()
    assert rr.bench_failures_are_refusals({"errors": ["503 the server is shutting down", "429 at capacity"]})
    assert not rr.bench_failures_are_refusals({"errors": ["ConnectionClosedError: no close frame received"]})
    assert rr.bench_failures_are_refusals({"errors": ["close 1013 server draining", "503 handshake refused"]})
    assert not rr.bench_failures_are_refusals({"errors": ["close 1006"]})
    assert rr.bench_failures_are_refusals(None)


def test_a_short_stream_is_a_truncated_one():
    rr = load_script()
    reference = rr.Attempt("completed", audio_s=2.0)
    stats = rr.LoadStats(completed=[rr.Attempt("completed", audio_s=2.0), rr.Attempt("completed", audio_s=1.5)])
    restart = rr.Restart(0, None, 2, 0, 1.0, 0, 2.0)
    args = type("Args", (), {"replicas": 1, "lb_mode": "direct", "concurrency": 1, "drain_timeout": 5})()
    summary = rr.summarise(stats, [restart], reference, 1.0, args, "tone")
    assert summary["streams_truncated"] == 1
    assert not summary["passed"]
    stats.completed.pop()
    assert rr.summarise(stats, [restart], reference, 1.0, args, "tone")["passed"]


@pytest.mark.slow
@needs_nginx
def test_rolling_restart_of_three_replicas_drops_no_stream(tmp_path):
    """The CI form (about 45 s). `direct`: nginx keeps sending new streams to a draining replica until it
    exits, so the drain, the server's refusals and nginx's retry on a closed port are all exercised."""
    out = tmp_path / "summary.json"
    command = [sys.executable, str(SCRIPT), "--replicas", "3", "--concurrency", "6", "--lb-mode", "direct"]
    command += ["--model", "tone", "--work-dir", str(tmp_path / "run"), "--json-out", str(out)]
    # A session of its own, so that a timeout takes down its replicas and nginx too, not the script alone.
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True) as script:
        try:
            _, stderr = script.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            os.killpg(script.pid, signal.SIGKILL)
            raise
    assert out.exists(), stderr[-3000:]
    summary = json.loads(out.read_text())
    assert script.returncode == 0, (summary["failures"], summary["dropped_detail"], summary["sonare_bench"])
    assert summary["streams_dropped"] == 0 and summary["streams_truncated"] == 0
    assert summary["lb_errors"] == {}
    assert summary["streams_completed"] >= 20
    assert [r["replica"] for r in summary["restarts"]] == [0, 1, 2]
    assert all(r["exit_code"] == 0 and r["unfinished_after_drain"] == 0 for r in summary["restarts"])
    # The drain was exercised: some replica had streams in flight when it got SIGTERM.
    assert max(r["streams_in_flight_at_sigterm"] for r in summary["restarts"]) > 0
    # Any refusal was a clean, retryable one.
    refusal_codes = {detail.split()[1] for detail in summary["refusals_retried"]}
    assert refusal_codes <= {"429", "503", "1013", "1012", "1001"}
    # `sonare bench` ran through the same balancer; whatever it did not complete was refused, not cut.
    bench = summary["sonare_bench"]
    assert bench["sessions"] == 40 and bench["succeeded"] > 0
    assert load_script().bench_failures_are_refusals(bench), bench["errors"]
