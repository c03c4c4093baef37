"""The two runs of `verify`: the old code through `run` and the working tree through `trace`.

Before: the program as it was at a git REF, checked out to a temporary worktree (`git worktree
add --detach`, removed afterwards), run by `python -m compat_lso run --audit` (TF 2.4's meaning
on today's TensorFlow); or any command (`--before CMD`). After: the working tree as it is, run
by `python -m compat_lso trace` (as `python` would, nothing installed). Both run from the user's
working directory, so paths relative to it (untracked datasets included) are the same files on
both sides; only the code differs. Both get the same environment, with the trace's variables
and the seed added. The before run's Python gets -P (no working directory put in front of
sys.path by Python itself): `run` puts the script's folder at REF there (for -m, the working
directory's twin at REF comes first on PYTHONPATH), and PYTHONPATH entries inside the repository
point into the REF's checkout, so the before run imports the old code, not the new. The after
run's path is the one `python SCRIPT` would have (the trace runner sees to it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

from compat_lso.verify import trace_file

STEPS_VARIABLE = "COMPAT_LSO_TRACE_STEPS"
TRACE_VARIABLE = "COMPAT_LSO_TRACE"
# Both runs write the program's outputs (checkpoints, logs) from the same working directory at
# once: `{side}` in the program's arguments, and this variable, are "before" or "after" in each.
SIDE_VARIABLE = "COMPAT_LSO_VERIFY_SIDE"
SIDE_PLACEHOLDER = "{side}"


class CannotRun(Exception):
    """verify cannot start (not a git repository, no such REF, ...): exit status 2."""


@dataclasses.dataclass
class Side:
    name: str  # "before" or "after"
    command: list[str]
    pythonpath: list[str]
    trace: pathlib.Path
    output: pathlib.Path  # stdout and stderr together
    root: pathlib.Path | None = None  # the REF's checkout (before side)
    description: str = ""  # the run as the user reads it
    audit_json: pathlib.Path | None = None
    process: subprocess.Popen[bytes] | None = None
    returncode: int | None = None

    def tail(self, lines: int = 15) -> str:
        try:
            text = self.output.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.rstrip().splitlines()[-lines:])


def _git(repo: pathlib.Path, *arguments: str) -> str:
    run = subprocess.run(
        ["git", "-C", str(repo), *arguments], capture_output=True, text=True, check=False
    )
    if run.returncode:
        raise subprocess.CalledProcessError(run.returncode, arguments, run.stdout, run.stderr)
    return run.stdout.strip()


def repository_root(cwd: pathlib.Path) -> pathlib.Path:
    try:
        return pathlib.Path(_git(cwd, "rev-parse", "--show-toplevel"))
    except FileNotFoundError:
        raise CannotRun(
            "git is not installed: --against needs git (or pass --before CMD)"
        ) from None
    except subprocess.CalledProcessError:
        raise CannotRun(
            f"not a git repository: {cwd}; run verify inside the repository you migrated, or "
            "pass the old code's command with --before CMD"
        ) from None


@contextlib.contextmanager
def checkout(root: pathlib.Path, ref: str, folder: pathlib.Path) -> Iterator[pathlib.Path]:
    """REF checked out (detached) in a worktree under `folder`; removed afterwards."""
    try:
        commit = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except subprocess.CalledProcessError:
        raise CannotRun(
            f"--against: no such commit in {root}: {ref!r}; pass a branch, tag or commit that "
            "exists (git log shows them)"
        ) from None
    worktree = folder / "before"
    try:  # a signal during `git worktree add` too leaves nothing registered
        try:
            _git(root, "worktree", "add", "--detach", str(worktree), commit)
        except subprocess.CalledProcessError as error:
            raise CannotRun(f"git worktree add failed: {error.stderr.strip()}") from None
        yield worktree
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            _git(root, "worktree", "remove", "--force", str(worktree))
        with contextlib.suppress(subprocess.CalledProcessError):
            _git(root, "worktree", "prune")


def for_side(arguments: list[str], name: str) -> list[str]:
    """The program's arguments with `{side}` made `name` (an output folder of its own)."""
    return [a.replace(SIDE_PLACEHOLDER, name) for a in arguments]


def python_command(
    runner: list[str], program: list[str], safe_path: bool, python: str = sys.executable
) -> list[str]:
    """`python [-P] -m compat_lso RUNNER PROGRAM`; -P for the before run (see above)."""
    return [python, *(["-P"] if safe_path else []), "-m", "compat_lso", *runner, *program]


# How the docs make an environment with the old TensorFlow (docs/verify.md; one command).
OLD_TENSORFLOW = "uv venv .venv-tf215 -p 3.11 && uv pip install -p .venv-tf215 tensorflow==2.15.1"
_PROBE = """
import importlib.metadata as m, importlib.util as u, sys
print(*sys.version_info[:2])
version = ""
if u.find_spec("tensorflow"):
    for name in ("tensorflow", "tensorflow-cpu", "tf-nightly"):
        try:
            version = m.version(name)
            break
        except m.PackageNotFoundError:
            version = "(version unknown)"
print(version)
"""


@dataclasses.dataclass(frozen=True)
class OtherPython:
    """--before-python: the interpreter, its TensorFlow, and the folder that puts this
    compat_lso first on its path (both sides trace with the same code, whatever it has)."""

    path: str
    tensorflow: str  # "TensorFlow 2.15.1"
    home: str


def other_python(path: str, folder: pathlib.Path) -> OtherPython:
    """Check `path` runs Python 3.11+ with TensorFlow; a folder under `folder` holding a link to
    this compat_lso (not its site-packages: the other environment keeps its own TensorFlow)."""
    fix = f"pass an environment's Python with TensorFlow (e.g. {OLD_TENSORFLOW})"
    try:
        probe = subprocess.run(
            [path, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CannotRun(f"--before-python {path}: cannot run it: {error}; {fix}") from None
    lines = probe.stdout.split("\n")
    if probe.returncode or len(lines) < 2:
        tail = probe.stderr.strip().splitlines()[-1:] or ["no output"]
        raise CannotRun(f"--before-python {path}: not a Python that runs ({tail[0]}); {fix}")
    version = tuple(int(n) for n in lines[0].split())
    if version < (3, 11):
        raise CannotRun(
            f"--before-python {path} is Python {'.'.join(map(str, version))}: compat_lso "
            f"needs 3.11 or newer there too; {fix}"
        )
    if not lines[1].strip():
        raise CannotRun(f"--before-python {path} has no TensorFlow installed; {fix}")
    home = folder / "compat_lso_home"
    home.mkdir()
    package = pathlib.Path(__file__).resolve().parents[1]
    try:
        (home / package.name).symlink_to(package, target_is_directory=True)
    except OSError:  # no symbolic links here (Windows without the privilege): a copy
        shutil.copytree(package, home / package.name)
    return OtherPython(path, f"TensorFlow {lines[1].strip()}", str(home))


def _compat_lso_home(cwd: pathlib.Path) -> list[str]:
    """The working directory, last on the children's path, where compat_lso is imported from
    there (an uninstalled checkout of compat-lso): -P leaves it off the before run's path."""
    home = pathlib.Path(__file__).resolve().parents[2]
    return [str(home)] if home == cwd.resolve() else []


def user_pythonpath(cwd: pathlib.Path) -> list[str]:
    entries = [e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e]
    return [str(cwd / e) if not os.path.isabs(e) else e for e in entries]


def map_into(path: str, root: pathlib.Path, worktree: pathlib.Path) -> str:
    """`path` inside the repository `root` -> the same path in `worktree`; else as it is."""
    try:
        relative = pathlib.Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return path
    return str(worktree / relative)


def environment(side: Side, cwd: pathlib.Path, steps: int, seed: int | None) -> dict[str, str]:
    from compat_lso.verify.seed import SEED_VARIABLE

    env = dict(os.environ)
    env[TRACE_VARIABLE] = str(side.trace)
    env[STEPS_VARIABLE] = str(steps)
    env[SIDE_VARIABLE] = side.name
    env.pop(SEED_VARIABLE, None)
    if seed is not None:
        env[SEED_VARIABLE] = str(seed)
    path = [*side.pythonpath, *_compat_lso_home(cwd)]
    if path:
        env["PYTHONPATH"] = os.pathsep.join(path)
    else:
        env.pop("PYTHONPATH", None)
    return env


def start(sides: list[Side], cwd: pathlib.Path, steps: int, seed: int | None) -> None:
    for side in sides:
        with side.output.open("wb") as output:
            try:
                side.process = subprocess.Popen(
                    side.command,
                    cwd=cwd,
                    env=environment(side, cwd, steps, seed),
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    # A group of its own: ended with whatever it started (stop()); and Ctrl-C on
                    # a terminal reaches verify alone, which ends both runs and cleans up.
                    start_new_session=True,
                )
            except OSError as error:
                stop(sides)
                raise CannotRun(
                    f"the {side.name} run's command could not start: {shown(side.command)}: "
                    f"{error.strerror or error}; check the command (--before CMD is split as a "
                    "shell would, without running a shell)"
                ) from None


PROGRESS_EVERY_S = 5.0  # piped: a line when the steps moved, at most this often
STILL_RUNNING_S = 30.0  # piped: a line this often when they did not (a slow step)


def wait(sides: list[Side], steps: int, progress: bool) -> None:
    """Until both processes end. While they run: a progress bar on a terminal (stderr); else
    (a CI log, `| tee`) a line on stderr when the steps moved (at most every PROGRESS_EVERY_S)
    or every STILL_RUNNING_S."""
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=2 * steps, desc="verify", unit="step", file=sys.stderr, leave=False)
    started = last_line = time.monotonic()
    shown: list[int] | None = None
    try:
        while any(s.process is not None and s.process.poll() is None for s in sides):
            counts = [_progress(s, steps) for s in sides]
            text = "  ".join(f"{s.name} {n}/{steps}" for s, n in zip(sides, counts, strict=True))
            now = time.monotonic()
            if bar is not None:
                bar.set_postfix_str(text)
                bar.update(sum(counts) - bar.n)
            elif (counts != shown and now - last_line >= PROGRESS_EVERY_S) or (
                now - last_line >= STILL_RUNNING_S
            ):
                print(f"verify: {text} steps ({now - started:.0f} s)", file=sys.stderr, flush=True)
                shown, last_line = counts, now
            time.sleep(0.2)
    finally:
        stop(sides)
        if bar is not None:
            bar.close()
    counts = [_progress(s, steps) for s in sides]
    if bar is None and shown is not None and counts != shown:
        # The last line says where the runs ended (not the count of 5 s in), before the verdict.
        text = "  ".join(f"{s.name} {n}/{steps}" for s, n in zip(sides, counts, strict=True))
        elapsed = time.monotonic() - started
        print(f"verify: {text} steps ({elapsed:.0f} s), both runs ended", file=sys.stderr)
        sys.stderr.flush()


def stop(sides: list[Side]) -> None:
    """End the runs still going (and what they started), and collect their exit statuses."""
    for side in sides:
        process = side.process
        if process is None or side.returncode is not None:
            continue  # never started, or already collected (its id may be another's now)
        if process.returncode is None:  # still running (poll() collects an ended one)
            # Its whole group: what the run started ends with it.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        side.returncode = process.wait()


def _progress(side: Side, steps: int) -> int:
    counts = trace_file.count_steps(side.trace)
    return min(steps, min(counts.values(), default=0))


def folder() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="compat-lso-verify-")


def shown(command: list[str]) -> str:
    return shlex.join(command)
