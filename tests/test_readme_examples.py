"""The README's examples run as written (a user copies them)."""
import pathlib
import re

pytest_plugins = ["pytester"]

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def readme_block(heading, index=0):
    """The ``index``-th python code block under a README heading."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(heading):]
    return re.findall(r"```python\n(.*?)```", section, re.S)[index]


def test_the_simulated_deployment_example_passes_as_a_users_test(pytester):
    pytester.makepyfile(test_readme=readme_block("## Simulated deployments for your tests"))
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_transaction_example_moves_the_money(mongo_replica_set):
    """The README's with_transaction example, run as written against the simulator."""
    import textwrap
    from singlemongo import MongoClient
    code = textwrap.dedent(readme_block("- **Transactions**", 0))
    client = MongoClient(mongo_replica_set.uri)
    accounts = client.bank.accounts
    accounts.insert_many([{"_id": "a", "balance": 100}, {"_id": "b", "balance": 0}])
    exec(code, {"client": client, "accounts": accounts})
    assert {d["_id"]: d["balance"] for d in accounts.find()} == {"a": 70, "b": 30}
    client.close()


def test_the_install_as_pymongo_example_runs_mongoengine_on_singlemongo(mongo_replica_set):
    """The README's "Running PyMongo-based libraries" example, as written but for the
    connection string, in a fresh interpreter: mongoengine's client is singlemongo's."""
    import subprocess
    import sys
    code = readme_block("### Running PyMongo-based libraries").replace(
        "mongodb://a,b,c/shop?replicaSet=rs", mongo_replica_set.uri.replace("/?", "/shop?"))
    code += ("\nfrom mongoengine.connection import get_db\n"
             "print(type(get_db().client).__module__, get_db().name)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["singlemongo.client", "shop"]
