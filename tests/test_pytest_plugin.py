"""The pytest plugin of singlemongo.testing: fixtures reach a user's own suite through the
``pytest11`` entry point, and a reset deployment is as good as a new one."""
import pytest
from singlemongo.sdam import ServerType

pytest_plugins = ["pytester"]


def test_reset_restores_a_dirtied_replica_set(mongo_replica_set, make_client):
    rs = mongo_replica_set
    client = make_client(rs)
    client.shop.orders.insert_one({"x": 1})
    rs.elect(2)
    rs.add_member()
    rs.servers[1].stop()
    rs.servers[0].latency_s = 0.5
    rs.servers[0].fail("ping", code=91, times=None)
    rs.reset()
    assert rs.store.documents("shop", "orders") == []
    assert [s.role for s in rs.servers] == ["primary", "secondary", "secondary"]
    assert all(s.running and not s.faults and s.latency_s == 0 for s in rs.servers)
    assert sum(s.connections for s in rs.servers) == 0
    fresh = make_client(rs)
    assert fresh.admin.command("ping")["ok"] == 1
    td = fresh.topology_description
    assert td.servers[rs.servers[0].address].server_type is ServerType.RS_PRIMARY


def test_fixtures_reach_a_users_suite_through_the_entry_point(pytester):
    pytester.makepyfile(test_user="""
        import freezegun

        def test_failover(mongo_replica_set, make_client):
            client = make_client(mongo_replica_set)
            client.shop.orders.insert_one({"item": "tea"})
            mongo_replica_set.elect(1)
            with freezegun.freeze_time("2030-01-01"):
                client.shop.orders.insert_one({"item": "jam"})  # rescans, finds member 1
            assert len(mongo_replica_set.store.documents("shop", "orders")) == 2

        def test_each_test_starts_clean(mongo_standalone, mongo_client):
            assert mongo_standalone.store.documents("shop", "orders") == []
            assert mongo_client.admin.command("ping")["ok"] == 1
    """)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_get_client_cache_is_cleared_between_tests(pytester):
    """Issue 21: a client cached by get_client() in one test is closed before the next, so
    tests stay independent (each gets its own, on the deployment it was given)."""
    pytester.makepyfile(test_user="""
        import singlemongo
        seen = []

        def test_first(mongo_standalone):
            seen.append(singlemongo.get_client(mongo_standalone.uri))

        def test_second(mongo_standalone):
            assert singlemongo.get_client(mongo_standalone.uri) is not seen[0]
            assert seen[0]._closed
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_the_plugin_loads_without_the_testing_extra(tmp_path):
    """Issue 21: without mongomock-ng (the testing extra) the plugin still loads, so a user's
    pytest starts; a fixture then says what to install."""
    import subprocess
    import sys
    code = (
        "import sys; sys.modules['mongomock_ng'] = None\n"
        "import pytest, singlemongo.testing.pytest_plugin as p\n"
        "gen = p._session('Standalone')\n"
        "try:\n"
        "    next(gen)\n"
        "except pytest.UsageError as exc:\n"
        "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "pip install singlemongo[testing]" in out.stdout


def test_the_run_ends_with_what_the_simulator_does_not_implement(pytester):
    """Issue 48: a command the simulator does not implement is refused as MongoDB refuses an
    unknown one (CommandNotFound, 59), and the run's summary lists each command and feature
    the tests asked for that the simulator lacks, with its count, so a user can tell a
    failure of their code from a gap of the simulator."""
    pytester.makepyfile(test_user="""
        import pytest
        from singlemongo.errors import OperationFailure

        def test_unknown_command(mongo_standalone, mongo_client):
            for _ in range(2):
                with pytest.raises(OperationFailure) as info:
                    mongo_client.admin.command("noSuchCommandInTheSimulator")
                assert info.value.code == 59 and info.value.details["codeName"] == "CommandNotFound"

        def test_nothing_missing(mongo_standalone, mongo_client):
            assert mongo_client.admin.command("ping")["ok"] == 1
    """)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "*singlemongo simulator: what the tests asked for and it does not implement*",
        "*command noSuchCommandInTheSimulator: 2 (CommandNotFound, 59)*"])


def test_under_xdist_the_controller_reports_every_workers_gaps(pytester):
    """Under pytest-xdist (how ``make test`` runs) the deployments live in the workers: each
    sends what its tests asked for and the simulator lacks, and the run's summary adds them
    up (it printed nothing at all before)."""
    pytest.importorskip("xdist")  # the test extra installs it; a user's run may not have it
    pytester.makepyfile(**{f"test_user{i}": f"""
        from singlemongo.errors import OperationFailure

        def test_unknown_command(mongo_standalone, mongo_client):
            try:
                mongo_client.admin.command("noSuchCommandOnAWorker")
            except OperationFailure as exc:
                assert exc.code == 59
    """ for i in range(2)})
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-n", "2",
                                           "--dist", "loadfile")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "*singlemongo simulator: what the tests asked for and it does not implement*",
        "*command noSuchCommandOnAWorker: 2 (CommandNotFound, 59)*"])


def test_a_run_that_meets_no_gap_prints_no_section(pytester):
    """The summary appears only when there is something to say."""
    pytester.makepyfile(test_user="""
        def test_ping(mongo_standalone, mongo_client):
            assert mongo_client.admin.command("ping")["ok"] == 1
    """)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "singlemongo simulator" not in result.stdout.str()
