"""Benchmark of the advisor's speed targets: `python bench/run.py [--quick] [--check bench/baseline.json]`.

Builds its own inputs (scenarios, synthetic bundles made from the real captured outputs under
tests/data/audit, a 1,024-GPU cluster), measures each row (in fresh processes where the row says
so), and prints target, median, min and max. `--scaling` adds how cost grows with GPUs, rules and
bundles. `--check FILE` compares each row's ratio to its reference operation (a fixed pure-Python loop
for in-process rows, a bare interpreter start for fresh-process rows), measured interleaved with the
row's own samples (reference, row, reference, row, ...) so that load on the machine slows both alike,
against the committed baseline ratios: it fails when a row is more than 1.5 times its baseline ratio
or could not be measured. `--write-baseline FILE` records the ratios. `--instructions` counts instead
the instructions of the cold `recommend` and of one 1,024-GPU search with valgrind: deterministic,
for comparing two versions of the code on a machine whose speed varies.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import resource
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MARKER = "# ----- verbatim output follows -----"
README_FIRST = [
    "recommend",
    "--model",
    "llama 3.3 70b",
    "--precision",
    "fp8",
    "--kv-cache-dtype",
    "fp8",
    "--gpu",
    "rtx pro 6000",
    "--gpus",
    "2",
    "--users",
    "60",
    "--context",
    "8192",
]
FACTOR = 1.5  # --check fails when a row's ratio is more than this times its baseline ratio
# the fresh processes' load cache: written by each row's warm-up run, removed at the end
CACHE = Path(tempfile.gettempdir()) / f"advisor-bench-cache-{os.getpid()}"


@dataclass
class Row:
    """One measured figure."""

    name: str
    target: str
    unit: str
    samples: list[float]
    limit: float | None  # the target as a number in `unit`; None for rows without a target
    higher_is_better: bool = False
    reference: str = "cpu"  # cpu | process | none
    refs: list[float] = field(default_factory=list)  # the reference's samples, interleaved with the row's
    error: str | None = None  # why the row could not be measured

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("nan")

    def ok(self) -> bool | None:
        if self.limit is None:
            return None
        if not self.samples:
            return False
        return self.median >= self.limit if self.higher_is_better else self.median <= self.limit


def _env(**extra: str) -> dict[str, str]:
    # Fresh processes run as an installed advisor does: bytecode cached, the load cache in place
    # (its own folder, warmed before timing; rows that need it empty say so).
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ADVISOR_CACHE_DIR": str(CACHE), **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def cpu_work() -> int:
    """A fixed amount of pure-Python work: the yardstick for in-process rows (a few milliseconds)."""
    return sum(i * i % 7 for i in range(60_000))


def process_start() -> None:
    """A bare interpreter start with a small import: the yardstick for fresh-process rows."""
    subprocess.run([sys.executable, "-c", "import json"], check=True, env=_env())


def stopwatch(fn: Callable[[], object]) -> float:
    """Wall seconds of one call."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class Yardstick:
    """A reference operation, run right before each row sample for about as long as that sample takes
    (repeated when it is shorter), so that the pair sees the same load on the machine."""

    def __init__(self, reference: Callable[[], object]) -> None:
        reference()
        self.reference = reference
        self.single = stopwatch(reference)

    def sample(self, like: float) -> float:
        """Seconds per call of the reference, over enough calls to fill about `like` seconds."""
        calls = max(1, min(400, round(like / self.single)))
        start = time.perf_counter()
        for _ in range(calls):
            self.reference()
        per_call = (time.perf_counter() - start) / calls
        self.single = min(self.single, per_call)
        return per_call


def interleaved(
    fn: Callable[[], object], reference: Callable[[], object], runs: int, window: float = 0.0
) -> tuple[list[float], list[float]]:
    """Samples of `fn`, each right after a sample of `reference` as long as it (see Yardstick), after
    one warm-up: at least `runs` rounds, and until `fn`'s samples add up to `window` seconds (at most
    1,000 rounds), so that a millisecond operation is not measured inside one burst of other work."""
    stick = Yardstick(reference)
    last = stopwatch(fn)
    row: list[float] = []
    refs: list[float] = []
    while len(row) < runs or (sum(row) < window and len(row) < 1000):
        refs.append(stick.sample(last))
        last = stopwatch(fn)
        row.append(last)
    return row, refs


def fresh(argv: list[str], runs: int, **env: str) -> tuple[list[float], list[float], int]:
    """Wall seconds of `python -m advisor ARGV` in fresh processes, interleaved with bare interpreter
    starts, and the peak RSS (KiB) seen."""

    def run() -> None:
        subprocess.run([sys.executable, "-m", "advisor", *argv], check=True, stdout=subprocess.DEVNULL, env=_env(**env))

    times, refs = interleaved(run, process_start, runs)
    return times, refs, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def make_bundles(folder: Path, count: int) -> list[Path]:
    """`count` bundle folders mixing real captured outputs with varied deployment plans."""
    data = ROOT / "tests" / "data" / "audit"

    def text(name: str) -> str:
        return (data / name).read_text(encoding="utf-8").split(MARKER, 1)[1].lstrip("\n")

    machines = [
        ("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt", "L40S", "Llama 3.3 70B Instruct", "fp8", [0, 2]),
        ("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt", "RTX 3090", "Qwen3-32B", "fp8", [0, 1]),
        (
            "topo_12_8xH100_hgx_nv18_10nic_rail_truncated.txt",
            "H100 SXM",
            "Llama 3.1 405B",
            "fp8",
            [0, 1, 2, 3, 4, 5, 6, 7],
        ),
        ("topo_08_8gpu_plx_pix_pxb_sys_mlx5_old_legend.txt", "RTX A6000", "Llama 3.3 70B Instruct", "fp8", [0, 4]),
    ]
    extras = [
        "cmdline_02_2xMI100_ubuntu_iommu_pt_only.txt",
        "lspci_03_amd_switch_grep_acsctl_srcvalid_plus_nccl_hang.txt",
        "log_03_vllm_watchdog_allreduce_timeout_600s.txt",
        "dmesg_03_ryzen_x570_amdvi_default_domain_translated.txt",
    ]
    cache = {name: text(name) for name in [m[0] for m in machines] + extras}
    out = []
    for i in range(count):
        topo, gpu, model, precision, gpus = machines[i % len(machines)]
        folder_i = folder / f"host-{i:04d}"
        folder_i.mkdir(parents=True)
        (folder_i / "topo.txt").write_text(cache[topo], encoding="utf-8")
        (folder_i / "extra.txt").write_text(cache[extras[i % len(extras)]], encoding="utf-8")
        plan = (
            f"model: {model}\nprecision: {precision}\nhardware: {{gpu: {gpu}}}\n"
            f"workload: {{concurrent_conversations: {4 + i % 60}}}\ndeployment: {{tp: {len(gpus)}, gpus: {gpus}}}\n"
        )
        (folder_i / "deployment.yaml").write_text(plan, encoding="utf-8")
        out.append(folder_i)
    return out


def measure(quick: bool) -> list[Row]:
    """Every row of the table, each with its interleaved reference samples; a row that fails to measure
    is kept with its error and no samples."""
    from advisor.audit import audit_fleet
    from advisor.chat.consult import Consultation
    from advisor.core.engine import Engine
    from advisor.inputs.scenario import build

    runs = 5 if quick else 9  # rounds: the best of a few interleaved pairs stays put under load
    rows: list[Row] = []

    Samples = Callable[[], tuple[list[float], list[float]]]

    def row(name: str, target: str, unit: str, limit: float | None, measure_row: Samples, **kw: object) -> None:
        try:
            samples, refs = measure_row()
            rows.append(Row(name, target, unit, samples, limit, refs=refs, **kw))  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - a row that cannot be measured is reported, and fails --check
            rows.append(Row(name, target, unit, [], limit, error=f"{type(exc).__name__}: {exc}"[:300], **kw))  # type: ignore[arg-type]

    peak = [0]

    def recommend() -> tuple[list[float], list[float]]:
        times, refs, peak[0] = fresh([*README_FIRST, "--format", "json"], runs)
        return times, refs

    row("recommend --format json, fresh process", "≤ 0.15 s", "s", 0.15, recommend, reference="process")
    blocker = Path(tempfile.mkdtemp(prefix="advisor-bench-nocache-"))
    try:  # a cache folder under a plain file cannot be made: every run reads the YAML files
        (blocker / "file").write_text("", encoding="utf-8")
        nowhere = str(blocker / "file" / "cache")
        row(
            "recommend --format json, fresh process, no load cache",
            "≤ 0.30 s",
            "s",
            0.30,
            lambda: fresh([*README_FIRST, "--format", "json"], runs, ADVISOR_CACHE_DIR=nowhere)[:2],
            reference="process",
        )
    finally:
        shutil.rmtree(blocker, ignore_errors=True)
    row(
        "advisor --version, fresh process",
        "≤ 0.10 s",
        "s",
        0.10,
        lambda: fresh(["--version"], runs)[:2],
        reference="process",
    )
    rows.append(
        Row("peak memory of recommend", "≤ 150 MB", "MB", [peak[0] / 1024] if peak[0] else [], 150, reference="none")
    )

    engine = Engine.load()
    cluster = build(
        {
            "model": "llama-3.1-405b",
            "precision": "bf16",
            "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8, "nodes": 128, "node_link_gbps": 400},
            "workload": {"concurrent_conversations": 2000},
        },
        engine.kb,
    )
    row(
        "layout search, 1,024 GPUs (128 × 8), every layout with figures",
        "≤ 0.1 s",
        "s",
        0.1,
        lambda: interleaved(lambda: engine.evaluate(cluster), cpu_work, runs, window=0.3),
    )
    row(
        "size over the whole catalogue, fresh process",
        "≤ 0.5 s",
        "s",
        0.5,
        lambda: fresh(
            ["size", "--model", "llama 3.3 70b", "--precision", "fp8", "--users", "60", "--format", "json"], runs
        )[:2],
        reference="process",
    )

    def enter() -> None:
        c.answer("60 users")
        c.next_question()

    c = Consultation(engine)
    c.answer("llama 70b in fp8 with fp8 kv cache")
    c.answer("zwei RTX Pro 6000")
    row(
        "chat: one consultation step (answer understood, re-evaluated, next question)",
        "≤ 0.1 s",
        "s",
        0.1,
        lambda: interleaved(enter, cpu_work, runs, window=0.3),
    )
    row("chat app: Enter to answer on the terminal (pty 120 × 40)", "≤ 0.1 s", "s", 0.1, lambda: chat_turns(runs))
    row(
        "chat app: start to first question, fresh process",
        "≤ 1.5 s",
        "s",
        1.5,
        lambda: chat_start(runs),
        reference="process",
    )

    folder = Path(tempfile.mkdtemp(prefix="advisor-bench-"))
    try:
        count = 200 if quick else 1000
        bundles = make_bundles(folder, count)
        audit_fleet(engine, bundles[:5])

        def audit() -> tuple[list[float], list[float]]:
            seconds, refs = interleaved(lambda: audit_fleet(engine, bundles), cpu_work, 3)
            return [count / s for s in seconds], refs

        row(f"audit, {count} bundles in one process", "≥ 200 bundles/s", "bundles/s", 200, audit, higher_is_better=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def chat_turns(runs: int) -> tuple[list[float], list[float]]:
    """`advisor chat` in a pseudo-terminal of 120 x 40 (the real terminal driver, transcripts written):
    from the Enter key until the answer's text has reached the terminal, each turn preceded by a sample
    of the in-process reference work. Turns alternate between changing the recommendation
    (41 -> 100 users) and changing only the facts (40 -> 41 users)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    folder = tempfile.mkdtemp(prefix="advisor-bench-chat-")
    env = {**_env(), "TERM": "xterm-256color", "ADVISOR_TRANSCRIPTS": folder}
    proc = subprocess.Popen(
        [sys.executable, "-m", "advisor", "chat"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=folder,
        start_new_session=True,
    )
    os.close(slave)
    screen = Terminal(master)
    try:
        screen.wait_for("Type what the customer says")
        screen.answer("llama 70b in fp8 with fp8 kv cache", "Which GPU")
        screen.answer("two RTX PRO 6000", "Recommendation")
        # 40, 41, 100, 101, 42, 43, 102, ...: every answer's text differs from what is already on screen
        users = [(40, 41, 100, 101)[i % 4] + 2 * (i // 4) for i in range(4 * runs)]
        turns: list[float] = []
        refs: list[float] = []
        stick = Yardstick(cpu_work)
        for n in users:
            refs.append(stick.sample(turns[-1] if turns else 0.05))
            turns.append(screen.answer(f"{n} users", f"users = {n}"))
        return turns, refs
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
        shutil.rmtree(folder, ignore_errors=True)


class Terminal:
    """The far end of a pseudo-terminal: types keys and reads what the app drew, as text."""

    ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.raw = b""

    def wait_for(self, text: str, timeout: float = 30.0) -> float:
        """Read until `text` has been drawn since the last clear; the time it was seen."""
        end = time.perf_counter() + timeout
        while time.perf_counter() < end:
            if select.select([self.fd], [], [], 0.05)[0]:
                self.raw += os.read(self.fd, 1 << 16)
                if text in self.ESCAPES.sub("", self.raw.decode("utf-8", "replace")):
                    return time.perf_counter()
        raise TimeoutError(f"the chat did not show {text!r} within {timeout:.0f} s")

    def answer(self, line: str, expect: str) -> float:
        """Type `line`, let the app settle, press Enter: seconds until `expect` is drawn."""
        self.raw = b""
        os.write(self.fd, line.encode())
        self.wait_for(line[-5:])
        time.sleep(0.2)
        self.raw = b""
        start = time.perf_counter()
        os.write(self.fd, b"\r")
        return self.wait_for(expect) - start


def chat_start(runs: int) -> tuple[list[float], list[float]]:
    """Fresh process: from launch until the app, mounted headless, shows its first question."""
    script = (
        "import asyncio, sys\n"
        "from advisor.tui.app import make_app\n"
        "app = make_app()\n"
        "async def main():\n"
        "    async with app.run_test(size=(120, 40)) as pilot:\n"
        "        await pilot.pause()\n"
        "        await app.workers.wait_for_complete()\n"
        "        print('first question', flush=True)\n"
        "asyncio.run(main())\n"
    )
    out: list[float] = []
    refs: list[float] = []
    stick = Yardstick(process_start)
    for _ in range(runs):
        refs.append(stick.sample(out[-1] if out else 1.0))
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()
        )
        assert proc.stdout is not None
        ready = select.select([proc.stdout], [], [], 30)[0]
        line = proc.stdout.readline() if ready else ""
        seen = time.perf_counter() - start
        if not line.startswith("first question"):
            proc.kill()
            raise RuntimeError(
                f"the chat app did not show its first question within 30 s: {proc.communicate()[1].strip()[-500:]}"
            )
        proc.wait(30)
        out.append(seen)
    return out, refs


def scaling(quick: bool) -> dict[str, list[tuple[int, float]]]:
    """How cost grows with the number of GPUs, of rules, and of bundles (three sizes each)."""
    from advisor.audit import audit_fleet
    from advisor.core.engine import Engine
    from advisor.inputs.scenario import build
    from advisor.kb.knowledge import load
    from advisor.kb.paths import rules_dir

    runs = 3 if quick else 5
    engine = Engine.load()
    out: dict[str, list[tuple[int, float]]] = {"gpus": [], "rules": [], "bundles": []}
    for nodes in (1, 16, 128):
        s = build(
            {
                "model": "llama-3.1-405b",
                "precision": "bf16",
                "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8, "nodes": nodes, "node_link_gbps": 400},
                "workload": {"concurrent_conversations": 2000},
            },
            engine.kb,
        )

        def search(s: Any = s) -> object:
            return engine.evaluate(s)

        out["gpus"].append((8 * nodes, statistics.median(interleaved(search, cpu_work, runs)[0])))
    scenario = build(
        {
            "model": "llama 3.3 70b",
            "precision": "fp8",
            "hardware": {"gpu": "rtx pro 6000", "gpus_per_node": 8},
            "workload": {"concurrent_conversations": 60},
        },
        engine.kb,
    )
    kb = load()
    for copies in (1, 2, 4):
        folder = Path(tempfile.mkdtemp(prefix="advisor-rules-"))
        try:
            for path in rules_dir().glob("*.yaml"):
                text = path.read_text(encoding="utf-8")
                shutil.copy(path, folder / path.name)
                if path.name == "selection.yaml":
                    continue
                for k in range(1, copies):
                    renamed = text.replace("- id: ", f"- id: copy{k}-")
                    (folder / f"copy{k}-{path.name}").write_text(renamed, encoding="utf-8")
            from advisor.kb import rules as rules_mod

            e = Engine(kb, rules_mod.load(kb, folder))

            def evaluate(e: Any = e) -> object:
                return e.evaluate(scenario)

            times = interleaved(evaluate, cpu_work, runs)[0]
            out["rules"].append((len(e.rules.rules), statistics.median(times)))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix="advisor-bench-"))
    try:
        bundles = make_bundles(folder, 1000 if not quick else 100)
        for count in (10, 100, 1000) if not quick else (10, 50, 100):
            start = time.perf_counter()
            audit_fleet(engine, bundles[:count])
            out["bundles"].append((count, time.perf_counter() - start))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table."""
    lines = ["| what | target | median | min | max | met |", "|---|---|---:|---:|---:|---|"]
    for r in rows:
        if not r.samples:
            lines.append(f"| {r.name} | {r.target} | not measured: {r.error or 'no samples'} | | | **no** |")
            continue
        fmt = (lambda v: f"{v:.3f}") if r.unit == "s" else (lambda v: f"{v:.0f}")
        met = {True: "yes", False: "**no**", None: "–"}[r.ok()]
        lines.append(
            f"| {r.name} | {r.target} | {fmt(r.median)} {r.unit} | {fmt(min(r.samples))} | "
            f"{fmt(max(r.samples))} | {met} |"
        )
    return "\n".join(lines)


def ratios(rows: list[Row]) -> dict[str, float]:
    """Each measured row's ratio to its reference: the median, over the rounds, of the row's sample
    (seconds; bundles/s inverted) over the reference sample taken right before it for as long. A pair
    shares the load of its moment, so the ratio holds across machines and loads where a reference
    measured apart from the rows would not. Rows without a reference or without samples are left out."""
    out = {}
    for r in rows:
        if r.reference == "none" or not r.samples or not r.refs:
            continue
        seconds = [1 / v for v in r.samples] if r.higher_is_better else r.samples
        out[r.name] = statistics.median(v / ref for v, ref in zip(seconds, r.refs, strict=True))
    return out


def regressions(measured: dict[str, float], baseline: dict[str, float], factor: float = FACTOR) -> list[str]:
    """The baseline's rows that are more than `factor` times their baseline ratio, or were not measured."""
    slow = []
    for name, base in baseline.items():
        if name not in measured:
            slow.append(f"{name}: not measured")
        elif measured[name] > factor * base:
            slow.append(f"{name}: {measured[name] / base:.2f}x the baseline ratio (limit {factor}x)")
    return slow


SEARCH_SCRIPT = """
import sys
from advisor.core.engine import Engine
from advisor.inputs.scenario import build
engine = Engine.load()
cluster = build({"model": "llama-3.1-405b", "precision": "bf16", "hardware": {"gpu": "h100-sxm",
    "gpus_per_node": 8, "nodes": 128, "node_link_gbps": 400}, "workload": {"concurrent_conversations": 2000}},
    engine.kb)
for _ in range(int(sys.argv[1])):
    engine.evaluate(cluster)
"""


def instructions(argv: list[str]) -> float:
    """Millions of instructions a fresh `python ARGV` executes, counted by valgrind (deterministic to
    about 0.2 %, where wall time on a shared machine varies twofold within an hour)."""
    out = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", sys.executable, *argv],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if found is None:
        raise RuntimeError("valgrind printed no instruction count")
    return int(found.group(1).replace(",", "")) / 1e6


def count_instructions() -> int:
    """Print the instruction counts of a bare interpreter start, the cold README `recommend` (bytecode
    and load cache warm) and one 1,024-GPU layout search (in one process: three searches less one)."""
    if shutil.which("valgrind") is None:
        print("--instructions needs valgrind")
        return 1
    recommend = ["-m", "advisor", *README_FIRST, "--format", "json"]
    subprocess.run([sys.executable, *recommend], check=True, stdout=subprocess.DEVNULL, env=_env())
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(SEARCH_SCRIPT)
    try:
        # warm-up: bytecode of every module the search imports written, so neither count compiles any
        subprocess.run([sys.executable, f.name, "1"], check=True, env=_env())
        rows = [
            ("bare interpreter start (-c pass)", instructions(["-c", "pass"])),
            ("recommend --format json, fresh process", instructions(recommend)),
            (
                "layout search, 1,024 GPUs, one search",
                (instructions([f.name, "3"]) - instructions([f.name, "1"])) / 2,
            ),
        ]
    finally:
        os.unlink(f.name)
        shutil.rmtree(CACHE, ignore_errors=True)
    print("| what | million instructions |\n|---|---:|")
    for name, count in rows:
        print(f"| {name} | {count:.1f} |")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer runs and smaller inputs (CI)")
    p.add_argument("--scaling", action="store_true", help="also measure growth with GPUs, rules and bundles")
    p.add_argument("--check", type=Path, help=f"fail when a row is over {FACTOR}x its baseline ratio or unmeasured")
    p.add_argument("--write-baseline", type=Path, help="record this run's ratios")
    p.add_argument("--instructions", action="store_true", help="only count instructions with valgrind")
    args = p.parse_args()
    if args.instructions:
        return count_instructions()
    try:
        rows = measure(args.quick)
        print(
            f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; rows interleaved with their "
            "reference (cpu: a fixed pure-Python loop; process: a bare interpreter start)"
        )
        print(table(rows))
        if args.scaling:
            grow = scaling(args.quick)
            print("\nscaling (seconds):")
            for what, points in grow.items():
                print(f"  {what}: " + ", ".join(f"{n}: {t:.3f}" for n, t in points))
    finally:
        shutil.rmtree(CACHE, ignore_errors=True)
    measured = ratios(rows)
    failed = [r for r in rows if not r.samples]
    if args.write_baseline:
        if failed:
            print("not writing a baseline: " + ", ".join(r.name for r in failed) + " could not be measured")
            return 1
        args.write_baseline.write_text(json.dumps(measured, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"baseline written to {args.write_baseline}")
    if args.check:
        baseline = json.loads(args.check.read_text(encoding="utf-8"))
        slow = regressions(measured, baseline)
        slow += [f"{r.name}: not measured ({r.error})" for r in failed if r.name not in baseline]
        if slow:
            print("regressions:\n  " + "\n  ".join(slow))
            return 1
        print(f"no row more than {FACTOR}x its baseline ratio ({len(baseline)} rows checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
