"""The examples in examples/ run as a user would run them, against a simulated replica set:
the CGI script as a web server runs it (a process per request, CGI environment), the WSGI
app through wsgiref, the CLI tool as a command, and the pytest suite with freezegun."""
import io
import json
import os
import subprocess
import sys
import wsgiref.util
from pathlib import Path


from singlemongo import MongoClient, client_cache

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def with_database(uri, name):
    head, _, query = uri.partition("/?")
    return f"{head}/{name}" + (f"?{query}" if query else "")


def run_example(*args, env=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})}, cwd=EXAMPLES.parent)


def test_cgi_script_answers_found_missing_and_bad_requests(mongo_replica_set):
    uri = with_database(mongo_replica_set.uri, "shop")
    with MongoClient(uri) as client:
        client.shop.products.insert_one({"sku": "a1", "name": "kettle", "price": 30})
    script = str(EXAMPLES / "cgi_lookup.py")
    found = run_example(script, env={"MONGODB_URI": uri, "QUERY_STRING": "sku=a1"})
    head, _, body = found.stdout.partition("\n\n")  # text mode: CRLF read as LF
    assert found.returncode == 0, found.stderr
    assert "Status: 200 OK" in head and json.loads(body) == {"sku": "a1", "name": "kettle",
                                                             "price": 30}
    missing = run_example(script, env={"MONGODB_URI": uri, "QUERY_STRING": "sku=zz"})
    assert "Status: 404 Not Found" in missing.stdout
    bad = run_example(script, env={"MONGODB_URI": uri, "QUERY_STRING": ""})
    assert "Status: 400 Bad Request" in bad.stdout


def test_wsgi_app_counts_visits_with_one_client_per_worker(mongo_replica_set, monkeypatch):
    sys.path.insert(0, str(EXAMPLES))
    try:
        import wsgi_app
    finally:
        sys.path.remove(str(EXAMPLES))
    monkeypatch.setenv("MONGODB_URI", with_database(mongo_replica_set.uri, "site"))
    answers = []
    for _ in range(3):
        environ = {"QUERY_STRING": "page=about", "wsgi.input": io.BytesIO()}
        wsgiref.util.setup_testing_defaults(environ)
        statuses = []
        body = b"".join(wsgi_app.application(environ, lambda s, h: statuses.append(s)))
        assert statuses == ["200 OK"]
        answers.append(json.loads(body)["visits"])
    assert answers == [1, 2, 3]
    assert len([k for k in client_cache._cache if k[0] == os.getpid()]) == 1
    client_cache.clear()


def test_cli_tool_adds_completes_and_lists(mongo_replica_set):
    uri = with_database(mongo_replica_set.uri, "todo")
    tool = str(EXAMPLES / "cli_tool.py")
    assert run_example(tool, uri, "add", "buy milk").returncode == 0
    assert run_example(tool, uri, "add", "write report").returncode == 0
    again = run_example(tool, uri, "add", "buy milk")
    assert again.returncode == 1 and "already on the list" in again.stderr
    assert run_example(tool, uri, "done", "buy milk").returncode == 0
    listed = run_example(tool, uri, "list")
    assert listed.stdout.splitlines() == ["[x] buy milk", "[ ] write report"]


def test_cli_tool_reports_an_unreachable_server_without_a_traceback():
    down = run_example(str(EXAMPLES / "cli_tool.py"),
                       "mongodb://127.0.0.1:9/todo?serverSelectionTimeoutMS=300", "list")
    assert down.returncode == 2 and down.stderr.startswith("error: ")
    assert "Traceback" not in down.stderr


def test_pytest_suite_with_freezegun_passes():
    result = run_example("-m", "pytest", "-q", "-p", "no:cacheprovider",
                         str(EXAMPLES / "test_with_freezegun.py"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


def test_make_demo_runs_to_the_end():
    """`make demo` (python -m singlemongo.demo) runs every step; the failed write of step 2 is
    reported as a NotPrimaryError, not a traceback."""
    result = run_example("-m", "singlemongo.demo")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "NotPrimaryError" in result.stdout and "Traceback" not in result.stderr
