"""The package's own import finder (singlemongo/__init__.py, ``_install_finder``): it finds
singlemongo's modules without Python's general path search, and must give exactly what
Python's finder and loader give: the same files, fresh code after an edit, the same errors."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import singlemongo

PACKAGE = pathlib.Path(singlemongo.__file__).resolve().parent


def _run(code, env=None, cwd=None):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=dict(os.environ, **(env or {})), cwd=cwd).stdout


EVERY_MODULE = """
import importlib.machinery, pathlib, sys
import singlemongo
package = pathlib.Path(singlemongo.__file__).resolve().parent
finder = next(f for f in sys.meta_path
              if getattr(f, "__qualname__", "").startswith("_install_finder"))
checked = 0
for path in package.rglob("*.py"):
    relative = path.relative_to(package.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    name = ".".join(parts)
    if name == "singlemongo":
        continue
    ours = finder.find_spec(name)
    theirs = importlib.machinery.PathFinder.find_spec(
        name, [str(package.parent.joinpath(*parts[:-1]))])
    assert (ours.origin, ours.cached, ours.submodule_search_locations) == (
        theirs.origin, theirs.cached, theirs.submodule_search_locations), name
    checked += 1
print(checked)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="platform: Linux only")
def test_the_finder_finds_every_module_where_pythons_finder_does():
    """Rule: for every module and package of the tree, the finder's spec names the file,
    package path and compiled file that Python's own path finder names (in a fresh
    interpreter: under pytest, singlemongo is loaded by pytest's own hook, and the finder
    then stays out of the way)."""
    assert int(_run(EVERY_MODULE)) > 150


def test_no_module_file_shares_its_name_with_a_package():
    """Rule: the finder tries a module file before a package directory (most names are
    modules); Python's finder prefers the package. They agree only while no name is both."""
    both = [p for p in PACKAGE.rglob("*/__init__.py") if p.parent.with_suffix(".py").exists()]
    assert both == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="platform: Linux only")
def test_a_name_the_tree_lacks_is_not_found():
    """Rule: a missing module is ModuleNotFoundError, as without the finder."""
    out = _run("import singlemongo\ntry:\n    import singlemongo.no_such_module\n"
               "except ModuleNotFoundError as exc:\n    print(exc.name)")
    assert out.strip() == "singlemongo.no_such_module"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="platform: Linux only")
def test_an_edited_module_is_compiled_again(tmp_path):
    """Rule: the compiled file is used only while its header matches the source's size and
    mtime (Python's timestamp check); after an edit the new source runs and its compiled file
    is written again."""
    copy = tmp_path / "singlemongo"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    code = "import singlemongo.sdam.address as a; print(a.DEFAULT_PORT, a.__cached__)"
    env = {"PYTHONPATH": str(tmp_path)}
    env_write = dict(env, PYTHONDONTWRITEBYTECODE="")
    first = _run(code, {**env_write}, cwd=tmp_path).split()
    assert first[0] == "27017" and pathlib.Path(first[1]).exists()
    source = copy / "sdam" / "address.py"
    text = source.read_text().replace("DEFAULT_PORT = 27017", "DEFAULT_PORT = 27018  # edited")
    source.write_text(text)
    os.utime(source, (source.stat().st_atime, source.stat().st_mtime + 5))
    assert _run(code, env_write, cwd=tmp_path).split()[0] == "27018"
    assert _run(code, env_write, cwd=tmp_path).split()[0] == "27018"  # the new pyc


def test_the_modules_keep_pythons_loader_features():
    """Rule: what tools ask of a loader still works: the source, the file, a reload."""
    out = _run("import importlib, inspect, singlemongo.sdam.address as a\n"
               "print(type(a.__spec__.loader).__mro__[1].__name__)\n"
               "print('def parse_address' in inspect.getsource(a))\n"
               "print(importlib.reload(a) is a, a.__file__.endswith('address.py'))")
    if sys.platform.startswith("linux"):
        assert out.split() == ["SourceFileLoader", "True", "True", "True"]
    else:
        assert out.split()[1:] == ["True", "True", "True"]


def test_finders_installed_before_it_still_come_first():
    """Rule: the finder goes just before Python's own finders: one a tool installed earlier
    (pytest's assertion rewriting, a drop-in mapping) still sees singlemongo's names first.
    SINGLEMONGO_PLAIN_IMPORT=1 leaves imports to Python alone."""
    code = ("import sys\nclass Tool:\n    @staticmethod\n    def find_spec(*a):\n"
            "        return None\nsys.meta_path.insert(0, Tool)\nimport singlemongo\n"
            "print([getattr(f, '__qualname__', type(f).__name__).split('.')[0] "
            "for f in sys.meta_path])")
    order = eval(_run(code))
    assert order[0] == "Tool"
    if sys.platform.startswith("linux"):
        assert order.index("_install_finder") < order.index("BuiltinImporter")
    assert "_install_finder" not in eval(_run(code, {"SINGLEMONGO_PLAIN_IMPORT": "1"}))


MODULE_ATTRIBUTES = """
import sys, singlemongo
singlemongo.MongoClient("mongodb://127.0.0.1:1/?connect=false")  # a one-off's modules
import singlemongo.engine.wave, singlemongo.sdam.address
for name in sorted(m for m in sys.modules if m.startswith("singlemongo")):
    module = sys.modules[name]
    spec = module.__spec__
    print(name, module.__name__, module.__file__, module.__cached__, module.__package__,
          getattr(module, "__path__", None), spec.name, spec.origin, spec.cached,
          spec.parent, spec.has_location, type(module.__loader__).__mro__[-2].__name__,
          module.__loader__ is spec.loader, sorted(vars(module))[:8])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="platform: Linux only")
def test_modules_carry_the_attributes_pythons_loader_gives():
    """Rule: the finder's loader makes each module with its file and compiled file set (so
    importlib asks no missing attribute); every module then carries what Python's own loader
    gives it: name, file, compiled file, package, path, spec and loader."""
    ours = _run(MODULE_ATTRIBUTES).splitlines()
    theirs = _run(MODULE_ATTRIBUTES, {"SINGLEMONGO_PLAIN_IMPORT": "1"}).splitlines()
    assert len(ours) > 30 and ours == theirs


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="platform: Linux only")
def test_a_compiled_file_it_cannot_read_leaves_the_source_to_python(tmp_path):
    """Rule: the finder reads a module's compiled file itself; when it cannot (here a
    directory stands where the file would be), Python's own loader compiles the source, as
    without the finder."""
    copy = tmp_path / "singlemongo"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    tag = sys.implementation.cache_tag
    (copy / "sdam" / "__pycache__" / f"address.{tag}.pyc").mkdir(parents=True)
    code = "import singlemongo.sdam.address as a; print(a.DEFAULT_PORT)"
    env = {"PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": ""}
    assert _run(code, env, cwd=tmp_path).split() == ["27017"]
