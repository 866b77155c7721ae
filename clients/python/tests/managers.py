"""Standalone Manager processes for the client tests, started from the command line PythonClientGateTest passes in
ORBITKV_MANAGER_CMD (a JSON list: java ... -m orbitkv.server/...; ``manager --standalone ...`` is appended here)."""

from __future__ import annotations

import atexit
import json
import os
import re
import socket
import subprocess
import tempfile
import threading
from typing import List, Optional

READY = re.compile(r"^orbitkv manager ready http=(\S+) ")
_STARTED: List["Manager"] = []


@atexit.register
def _kill_leftovers() -> None:
    """A Manager a failed or interrupted test left running never outlives the test process."""
    for m in _STARTED:
        if m.alive():
            m.proc.kill()


def manager_command() -> List[str]:
    raw = os.environ.get("ORBITKV_MANAGER_CMD")
    if not raw:
        raise RuntimeError("ORBITKV_MANAGER_CMD is not set: the Manager tests run through PythonClientGateTest "
                           "(scripts/test, or mvn -pl conformance -am verify -Dtest=PythonClientGateTest)")
    return json.loads(raw)


def work_dir() -> str:
    d = os.environ.get("ORBITKV_TEST_WORK") or tempfile.mkdtemp(prefix="orbitkv-pyclient-")
    os.makedirs(d, exist_ok=True)
    return d


def figure(line: str) -> None:
    """Records a measured figure; the gate prints every line of figures.txt in its output."""
    with open(os.path.join(work_dir(), "figures.txt"), "a", encoding="utf-8") as f:
        f.write("FIGURE " + line + "\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Manager:
    """One standalone Manager process: ``start()`` waits for its ready line; ``url`` is its HTTP API."""

    def __init__(self, name: str, args: List[str], port: int = 0):
        self.name = name
        self.args = args
        self.port = port
        self.proc: Optional[subprocess.Popen] = None
        self.url: Optional[str] = None
        self.dir = tempfile.mkdtemp(prefix=name + "-", dir=work_dir())

    def launch(self) -> "Manager":
        dram = tempfile.mkdtemp(prefix="dram-", dir=self.dir)
        cmd = manager_command() + ["manager", "--standalone", "--node-id", self.name, "--http-listen",
                                   f"127.0.0.1:{self.port}", "--dram-dir", dram, "--shutdown-drain-ms", "2000"] + self.args
        err = open(os.path.join(self.dir, "stderr.log"), "ab")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
        _STARTED.append(self)
        self._ready = threading.Event()
        self._lines: List[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        return self

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            if len(self._lines) < 1000:
                self._lines.append(line)
            m = READY.match(line)
            if m:
                self.url = "http://" + m.group(1)
                self.port = int(m.group(1).rsplit(":", 1)[1])
                self._ready.set()
        self._ready.set()

    def await_ready(self, bound_s: float = 90.0) -> "Manager":
        self._ready.wait(bound_s)
        if self.url is None or not self.alive():
            with open(os.path.join(self.dir, "stderr.log"), "rb") as f:
                err = f.read()[-3000:].decode("utf-8", "replace")
            raise RuntimeError(f"{self.name} printed no ready line within {bound_s} s (alive={self.alive()}): "
                               f"{''.join(self._lines)[-2000:]} {err}")
        return self

    def start(self) -> "Manager":
        return self.launch().await_ready()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait(30)

    def terminate(self) -> None:
        self.proc.terminate()

    def restart(self) -> "Manager":
        """Starts the Manager again on the same port (after it exited)."""
        if self.proc is not None:
            self.proc.wait(60)
        self.url = None
        return self.launch().await_ready()

    def signal(self, sig) -> None:
        os.kill(self.proc.pid, sig)

    def wait_exit(self, bound_s: float = 60.0) -> int:
        return self.proc.wait(bound_s)
