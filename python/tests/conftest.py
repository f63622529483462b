import importlib
import json
import os
import subprocess

import pytest

# The memory: run (ctest memory:python_api): every test's datasets live in this process's
# memory:// store, so the same answers prove the package reaches them through the store
# alone. Tests that hand a dataset to another process (the CLI, the reference, spawned
# DataLoader workers) are skipped there, naming why.
IN_MEMORY = os.environ.get("LANCELET_TEST_STORE") == "memory"
ANOTHER_PROCESS = "a memory:// dataset lives in one process, and {} runs in another"

SOURCE_DIR = os.environ.get("LANCELET_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("LANCELET_CLI", os.path.join(SOURCE_DIR, "build", "release", "lancelet"))
ORACLE = os.path.join(SOURCE_DIR, "tests", "oracle", "oracle.mjs")


# Set in CI and by ./run test: a test needing pyarrow, polars, DuckDB, pandas or pylance
# fails when the package is missing instead of being skipped.
REQUIRE_PACKAGES = os.environ.get("LANCELET_TEST_REQUIRE_PACKAGES") == "1"


def need(name):
    """The module `name` (e.g. "pyarrow"); the test is skipped without it, or fails when
    LANCELET_TEST_REQUIRE_PACKAGES=1."""
    if REQUIRE_PACKAGES:
        return importlib.import_module(name)
    return pytest.importorskip(name)


def run_cli(*args):
    """The lancelet CLI's stdout; fails the test on a non-zero exit."""
    done = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_oracle(*args):
    """The reference's (lance 12.0.0 through @lancedb/lancedb) stdout."""
    env = dict(os.environ, LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES="1")
    env.pop("LD_PRELOAD", None)  # the sanitizer runtime is for our module, not for node
    done = subprocess.run(["node", ORACLE, *map(str, args)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class MemoryPath:
    """A directory of the memory:// store in the place of pytest's tmp_path: joined with
    `/`, given to lancelet as its URI (str)."""

    def __init__(self, uri):
        self.uri = uri

    def __truediv__(self, name):
        return MemoryPath(f"{self.uri}/{name}")

    def __str__(self):
        return self.uri

    def __repr__(self):
        return f"MemoryPath({self.uri!r})"


@pytest.fixture
def tmp_path(tmp_path):
    """pytest's own tmp_path, or in the memory: run the same name under memory://, whose
    local directory must then stay empty: a file there was written behind the store's back."""
    if not IN_MEMORY:
        yield tmp_path
        return
    yield MemoryPath("memory://" + str(tmp_path))
    written = sorted(str(p) for p in tmp_path.rglob("*"))
    assert not written, f"the memory run wrote {written[0]} to the local file system"


@pytest.fixture
def cli():
    if IN_MEMORY:
        pytest.skip(ANOTHER_PROCESS.format("the lancelet CLI"))
    return run_cli


@pytest.fixture
def oracle():
    if IN_MEMORY:
        pytest.skip(ANOTHER_PROCESS.format("the reference (node)"))
    return run_oracle


def skip_if_workers_spawn():
    """In the memory: run, skips a test whose DataLoader workers are spawned (sanitized
    runs start them so): each unpickles the dataset in a new process."""
    if IN_MEMORY and os.environ.get("LANCELET_SANITIZED"):
        pytest.skip(ANOTHER_PROCESS.format("a spawned DataLoader worker"))
