"""A package a user can install (issue 49): the wheel built from the checkout carries complete
metadata, installs into a fresh virtual environment, and runs a one-off and the CLI there
against a simulated deployment. ``make dist`` builds the sdist too and runs ``twine check``.

No network: the wheel is built without build isolation (the test venv's setuptools), installed
without its dependencies, and the fresh environment reaches ``bson`` and ``dnspython`` through
a path entry to this environment's site-packages, placed after its own, so the installed
wheel's ``singlemongo`` is the one imported (the test checks where it came from).
"""
import email
import pathlib
import site
import subprocess
import sys
import venv
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "--quiet", "--wheel-dir", str(out),
                           str(ROOT)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("singlemongo-*.whl")
    return path


def metadata(wheel):
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name))


def test_the_wheels_metadata_is_complete(wheel):
    import singlemongo
    meta = metadata(wheel)
    assert meta["Name"] == "singlemongo" and meta["Version"] == singlemongo.__version__
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().strip() == (ROOT / "README.md").read_text().strip()
    classifiers = meta.get_all("Classifier")
    for version in ("3.10", "3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers
    assert "Typing :: Typed" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Documentation", "Source", "Changelog", "Issues"} <= set(urls)
    requires = meta.get_all("Requires-Dist")
    assert any(r.startswith("pymongo") for r in requires)
    assert any(r.startswith("dnspython") for r in requires)


def test_the_wheel_holds_the_package_and_not_the_tests(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "singlemongo/py.typed" in names and "singlemongo/testing/__main__.py" in names
    assert not [n for n in names if n.startswith(("tests/", "docs/", "bench/"))]


def test_the_wheel_installs_and_runs_a_one_off_in_a_fresh_venv(wheel, tmp_path,
                                                               mongo_standalone):
    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--no-deps", "--no-index", "--quiet", str(wheel)],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    fresh_site = subprocess.run([str(python), "-c",
                                 "import site; print(site.getsitepackages()[0])"],
                                capture_output=True, text=True, check=True).stdout.strip()
    # bson and dnspython from this environment, after the fresh one's own packages.
    (pathlib.Path(fresh_site) / "zz_dependencies.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n")
    script = ("import singlemongo, sys\n"
              "client = singlemongo.MongoClient(sys.argv[1])\n"
              "client.shop.orders.insert_one({'_id': 1, 'item': 'tea'})\n"
              "print(client.shop.orders.find_one()['item'], singlemongo.__file__)\n"
              "client.close()\n")
    # Run from elsewhere: ``-c`` puts the working directory (here, a checkout) first on the path.
    run = subprocess.run([str(python), "-c", script, mongo_standalone.uri],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    item, origin = run.stdout.split()
    assert item == "tea" and origin.startswith(fresh_site)
    cli = subprocess.run([str(env_dir / "bin" / "singlemongo"), "--uri", mongo_standalone.uri,
                          "count", "shop.orders"], capture_output=True, text=True, timeout=60,
                         cwd=tmp_path)
    assert (cli.returncode, cli.stdout.strip()) == (0, "1"), cli.stderr
