"""The S3 test server of the suites' S3 run: moto's server mode on 127.0.0.1.

    python s3_test_server.py start PORT STATE_DIR BUCKET   # serves, makes BUCKET, returns
    python s3_test_server.py stop STATE_DIR

start leaves the server running in the background (its pid in STATE_DIR/pid, its log in
STATE_DIR/log) once it answers, and creates BUCKET. A server left by an earlier run on
the same port is stopped first. Exit 77 when moto is not installed (the test is skipped
unless LANCELET_TEST_REQUIRE_PACKAGES=1)."""
import os
import signal
import subprocess
import sys
import time
import urllib.request


def stop(state):
    pid_file = os.path.join(state, "pid")
    try:
        pid = int(open(pid_file).read())
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            os.kill(pid, 0)
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError):
        pass
    if os.path.exists(pid_file):
        os.remove(pid_file)


def start(port, state, bucket):
    try:
        import moto.server  # noqa: F401
    except ImportError:
        print("s3_test_server: moto is not installed (./run setup puts it in .venv)", file=sys.stderr)
        sys.exit(1 if os.environ.get("LANCELET_TEST_REQUIRE_PACKAGES") == "1" else 77)
    os.makedirs(state, exist_ok=True)
    stop(state)
    log = open(os.path.join(state, "log"), "w")
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    open(os.path.join(state, "pid"), "w").write(str(server.pid))
    url = f"http://127.0.0.1:{port}/{bucket}"
    for _ in range(300):
        try:
            urllib.request.urlopen(urllib.request.Request(url, method="PUT"), timeout=1)
            print(f"s3_test_server: moto on port {port}, bucket {bucket}")
            return
        except OSError:
            if server.poll() is not None:
                sys.exit(f"s3_test_server: moto exited; see {state}/log")
            time.sleep(0.1)
    stop(state)
    sys.exit(f"s3_test_server: moto did not answer on port {port} within 30 s")


if __name__ == "__main__":
    if sys.argv[1] == "start":
        start(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        stop(sys.argv[2])
