"""A fork server that runs differential programs under one TensorFlow: `python -m
tests.differential.worker`, with the interpreter of the TensorFlow wanted.

TensorFlow is imported once (5-10 s of CPU); each program then runs in a child forked from this
process before any TensorFlow op ran, so every program starts from the same fresh state (no
global policy, no Keras session, no compat_lso.install() left behind) in about a second.

Protocol, one JSON object a line: in {"source": str, "install": bool}, out {"trace": [...]} or
{"error": "Type: message", "line": int or null, "lines": [int]} (the program's frames of the
traceback, innermost last). `install` runs `compat_lso.install()` first
(TF 2.1-2.8 programs on TF 2.15: their reference meaning, as `python -m compat_lso run` gives).
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import traceback

FILENAME = "<differential program>"
TIMEOUT = 120.0


def _child(source: str, install: bool, write: int) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    result: dict[str, object]
    try:
        if install:
            import compat_lso

            compat_lso.install()
        namespace = {"__name__": "__main__", "__file__": FILENAME}
        exec(compile(source, FILENAME, "exec"), namespace)
        result = {"trace": namespace.get("TRACE", [])}
    except BaseException as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == FILENAME]
        message = str(error).strip().splitlines()
        result = {
            "error": f"{type(error).__name__}: {message[0] if message else ''}"[:300],
            "line": frames[-1].lineno if frames else None,
            "lines": [f.lineno for f in frames],
        }
    data = json.dumps(result).encode()
    while data:
        data = data[os.write(write, data) :]
    os._exit(0)


def run_one(source: str, install: bool) -> dict[str, object]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        _child(source, install, write)
    os.close(write)
    chunks = []
    while True:
        ready, _, _ = select.select([read], [], [], TIMEOUT)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return {"error": f"Timeout: no result in {TIMEOUT:.0f} s", "line": None}
        chunk = os.read(read, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return {"error": f"Crash: the process ended with status {status}", "line": None}
    result: dict[str, object] = json.loads(b"".join(chunks))
    return result


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")
    import tensorflow

    out = sys.stdout
    out.write(json.dumps({"ready": tensorflow.__version__}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        out.write(json.dumps(run_one(request["source"], request.get("install", False))) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
