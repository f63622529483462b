import json
import os
import subprocess

import pytest

SOURCE_DIR = os.environ.get("LANCELET_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("LANCELET_CLI", os.path.join(SOURCE_DIR, "build", "release", "lancelet"))
ORACLE = os.path.join(SOURCE_DIR, "tests", "oracle", "oracle.mjs")


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


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def oracle():
    return run_oracle
