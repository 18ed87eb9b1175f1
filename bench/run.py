"""Benchmark of the advisor's speed targets: `python bench/run.py [--quick] [--check bench/baseline.json]`.

Builds its own inputs (scenarios, synthetic bundles made from the real captured outputs under
tests/data/audit, a 1,024-GPU cluster), measures each row (in fresh processes where the row says
so), and prints target, median, min and max. `--scaling` adds how cost grows with GPUs, rules and
bundles. `--check FILE` compares each row's ratio to a reference operation measured in the same run
against the committed baseline ratios and fails when one is more than twice as slow;
`--write-baseline FILE` records the ratios.
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCENARIO = ROOT / "tests" / "data" / "scenario-rtx-pro-60-users.yaml"
MARKER = "# ----- verbatim output follows -----"


@dataclass
class Row:
    """One measured figure."""

    name: str
    target: str
    unit: str
    samples: list[float]
    limit: float | None  # the target as a number in `unit`; None for rows without a target
    higher_is_better: bool = False
    reference: str = "cpu"  # cpu | process

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def ok(self) -> bool | None:
        if self.limit is None:
            return None
        return self.median >= self.limit if self.higher_is_better else self.median <= self.limit


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def fresh(argv: list[str], runs: int) -> tuple[list[float], int]:
    """Wall seconds of `python -m advisor ARGV` in fresh processes, and the peak RSS (KiB) seen."""
    times = []
    peak = 0
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "advisor", *argv], check=True, stdout=subprocess.DEVNULL, env=_env())
        times.append(time.perf_counter() - start)
        peak = max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return times, peak


def timed(fn: Callable[[], object], runs: int, window: float = 0.3) -> list[float]:
    """Wall seconds of `fn()` in this process after one warm-up: at least `runs` times, and for at least
    `window` seconds, so that a millisecond operation's best sample is not taken inside one burst of
    other work on the machine."""
    fn()
    out: list[float] = []
    while len(out) < runs or (sum(out) < window and len(out) < 1000):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def reference_cpu(runs: int) -> float:
    """A fixed amount of pure-Python work: the yardstick for in-process rows."""
    def work() -> int:
        return sum(i * i % 7 for i in range(300_000))

    return min(timed(work, runs))


def reference_process(runs: int) -> float:
    """A bare interpreter start with a small import: the yardstick for fresh-process rows."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import json"], check=True, env=_env())
        times.append(time.perf_counter() - start)
    return min(times)


def make_bundles(folder: Path, count: int) -> list[Path]:
    """`count` bundle folders mixing real captured outputs with varied deployment plans."""
    data = ROOT / "tests" / "data" / "audit"

    def text(name: str) -> str:
        return (data / name).read_text(encoding="utf-8").split(MARKER, 1)[1].lstrip("\n")

    machines = [
        ("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt", "L40S", "Llama 3.3 70B Instruct", "fp8", [0, 2]),
        ("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt", "RTX 3090", "Qwen3-32B", "fp8", [0, 1]),
        ("topo_12_8xH100_hgx_nv18_10nic_rail_truncated.txt", "H100 SXM", "Llama 3.1 405B", "fp8", [0, 1, 2, 3, 4, 5, 6, 7]),
        ("topo_08_8gpu_plx_pix_pxb_sys_mlx5_old_legend.txt", "RTX A6000", "Llama 3.3 70B Instruct", "fp8", [0, 4]),
    ]
    extras = ["cmdline_02_2xMI100_ubuntu_iommu_pt_only.txt", "lspci_03_amd_switch_grep_acsctl_srcvalid_plus_nccl_hang.txt",
              "log_03_vllm_watchdog_allreduce_timeout_600s.txt", "dmesg_03_ryzen_x570_amdvi_default_domain_translated.txt"]
    cache = {name: text(name) for name in [m[0] for m in machines] + extras}
    out = []
    for i in range(count):
        topo, gpu, model, precision, gpus = machines[i % len(machines)]
        folder_i = folder / f"host-{i:04d}"
        folder_i.mkdir(parents=True)
        (folder_i / "topo.txt").write_text(cache[topo], encoding="utf-8")
        (folder_i / "extra.txt").write_text(cache[extras[i % len(extras)]], encoding="utf-8")
        plan = (f"model: {model}\nprecision: {precision}\nhardware: {{gpu: {gpu}}}\n"
                f"workload: {{concurrent_conversations: {4 + i % 60}}}\ndeployment: {{tp: {len(gpus)}, gpus: {gpus}}}\n")
        (folder_i / "deployment.yaml").write_text(plan, encoding="utf-8")
        out.append(folder_i)
    return out


def measure(quick: bool) -> tuple[list[Row], dict[str, float]]:
    """Every row of the table, and the two reference timings."""
    from advisor.audit import audit_fleet
    from advisor.chat.consult import Consultation
    from advisor.core.engine import Engine
    from advisor.inputs.scenario import build

    runs = 3 if quick else 7
    refs = {"cpu": reference_cpu(runs), "process": reference_process(runs)}
    rows: list[Row] = []
    times, peak = fresh(["recommend", str(SCENARIO), "--format", "json"], runs)
    rows.append(Row("recommend --format json, fresh process", "≤ 0.30 s", "s", times, 0.30, reference="process"))
    rows.append(Row("advisor --version, fresh process", "≤ 0.10 s", "s", fresh(["--version"], runs)[0], 0.10, reference="process"))
    rows.append(Row("peak memory of recommend", "≤ 150 MB", "MB", [peak / 1024], 150, reference="none"))

    engine = Engine.load()
    cluster = build({"model": "llama-3.1-405b", "precision": "bf16",
                     "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8, "nodes": 128, "node_link_gbps": 400},
                     "workload": {"concurrent_conversations": 2000}}, engine.kb)
    rows.append(Row("layout search, 1,024 GPUs (128 × 8), every layout with figures", "≤ 0.1 s", "s",
                    timed(lambda: engine.evaluate(cluster), runs), 0.1))
    times, _ = fresh(["size", "--model", "llama 3.3 70b", "--precision", "fp8", "--users", "60", "--format", "json"], runs)
    rows.append(Row("size over the whole catalogue, fresh process", "≤ 0.5 s", "s", times, 0.5, reference="process"))

    def enter() -> None:
        c.answer("60 users")
        c.next_question()

    c = Consultation(engine)
    c.answer("llama 70b in fp8 with fp8 kv cache")
    c.answer("zwei RTX Pro 6000")
    rows.append(Row("chat: one consultation step (answer understood, re-evaluated, next question)", "≤ 0.1 s", "s",
                    timed(enter, runs), 0.1))
    rows.append(Row("chat app: Enter to answer on the terminal (pty 120 × 40)", "≤ 0.1 s", "s", chat_turns(runs), 0.1))
    rows.append(Row("chat app: start to first question, fresh process", "≤ 1.5 s", "s", chat_start(runs), 1.5, reference="process"))

    folder = Path(tempfile.mkdtemp(prefix="advisor-bench-"))
    try:
        count = 200 if quick else 1000
        bundles = make_bundles(folder, count)
        audit_fleet(engine, bundles[:5])
        rates = []
        for _ in range(1 if quick else 3):
            start = time.perf_counter()
            items = audit_fleet(engine, bundles)
            rates.append(len(items) / (time.perf_counter() - start))
        rows.append(Row(f"audit, {count} bundles in one process", "≥ 200 bundles/s", "bundles/s", rates, 200, higher_is_better=True))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows, refs


def chat_turns(runs: int) -> list[float]:
    """`advisor chat` in a pseudo-terminal of 120 x 40 (the real terminal driver, transcripts written):
    from the Enter key until the answer's text has reached the terminal. Turns alternate between
    changing the recommendation (41 -> 100 users) and changing only the facts (40 -> 41 users)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    folder = tempfile.mkdtemp(prefix="advisor-bench-chat-")
    env = {**_env(), "TERM": "xterm-256color", "ADVISOR_TRANSCRIPTS": folder}
    proc = subprocess.Popen([sys.executable, "-m", "advisor", "chat"], stdin=slave, stdout=slave, stderr=slave,
                            env=env, cwd=folder, start_new_session=True)
    os.close(slave)
    screen = Terminal(master)
    try:
        screen.wait_for("Type what the customer says")
        screen.answer("llama 70b in fp8 with fp8 kv cache", "Which GPU")
        screen.answer("two RTX PRO 6000", "Recommendation")
        # 40, 41, 100, 101, 42, 43, 102, ...: every answer's text differs from what is already on screen
        users = [(40, 41, 100, 101)[i % 4] + 2 * (i // 4) for i in range(4 * runs)]
        return [screen.answer(f"{n} users", f"users = {n}") for n in users]
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


def chat_start(runs: int) -> list[float]:
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
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=_env())
        assert proc.stdout is not None
        ready = select.select([proc.stdout], [], [], 30)[0]
        line = proc.stdout.readline() if ready else ""
        seen = time.perf_counter() - start
        if not line.startswith("first question"):
            proc.kill()
            raise RuntimeError(f"the chat app did not show its first question within 30 s: {proc.communicate()[1].strip()[-500:]}")
        proc.wait(30)
        out.append(seen)
    return out


def scaling(quick: bool) -> dict[str, list[tuple[int, float]]]:
    """How cost grows with the number of GPUs, of rules, and of bundles (three sizes each)."""
    from advisor.audit import audit_fleet
    from advisor.core.engine import Engine
    from advisor.kb.knowledge import load
    from advisor.kb.paths import rules_dir
    from advisor.inputs.scenario import build

    runs = 3 if quick else 5
    engine = Engine.load()
    out: dict[str, list[tuple[int, float]]] = {"gpus": [], "rules": [], "bundles": []}
    for nodes in (1, 16, 128):
        s = build({"model": "llama-3.1-405b", "precision": "bf16", "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8,
                   "nodes": nodes, "node_link_gbps": 400}, "workload": {"concurrent_conversations": 2000}}, engine.kb)
        out["gpus"].append((8 * nodes, statistics.median(timed(lambda s=s: engine.evaluate(s), runs))))
    scenario = build({"model": "llama 3.3 70b", "precision": "fp8", "hardware": {"gpu": "rtx pro 6000", "gpus_per_node": 8},
                      "workload": {"concurrent_conversations": 60}}, engine.kb)
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
            out["rules"].append((len(e.rules.rules), statistics.median(timed(lambda e=e: e.evaluate(scenario), runs))))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix="advisor-bench-"))
    try:
        bundles = make_bundles(folder, 1000 if not quick else 100)
        for count in ((10, 100, 1000) if not quick else (10, 50, 100)):
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
        fmt = (lambda v: f"{v:.3f}") if r.unit == "s" else (lambda v: f"{v:.0f}")
        met = {True: "yes", False: "**no**", None: "–"}[r.ok()]
        lines.append(f"| {r.name} | {r.target} | {fmt(r.median)} {r.unit} | {fmt(min(r.samples))} | {fmt(max(r.samples))} | {met} |")
    return "\n".join(lines)


def ratios(rows: list[Row], refs: dict[str, float]) -> dict[str, float]:
    """Each row's best sample over its reference operation's best (bundles/s inverted), for checks that
    hold across machines; best samples, because noise from other work only ever adds time."""
    out = {}
    for r in rows:
        if r.reference == "none" or r.median != r.median:
            continue
        best = max(r.samples) if r.higher_is_better else min(r.samples)
        value = 1 / best if r.higher_is_better else best
        out[r.name] = value / refs[r.reference]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer runs and smaller inputs (CI)")
    p.add_argument("--scaling", action="store_true", help="also measure growth with GPUs, rules and bundles")
    p.add_argument("--check", type=Path, help="fail when a row is over twice its baseline ratio")
    p.add_argument("--write-baseline", type=Path, help="record this run's ratios")
    args = p.parse_args()
    rows, refs = measure(args.quick)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; reference (best run): cpu {refs['cpu']:.4f} s, "
          f"process start {refs['process']:.4f} s")
    print(table(rows))
    if args.scaling:
        grow = scaling(args.quick)
        print("\nscaling (seconds):")
        for what, points in grow.items():
            print(f"  {what}: " + ", ".join(f"{n}: {t:.3f}" for n, t in points))
    measured = ratios(rows, refs)
    if args.write_baseline:
        args.write_baseline.write_text(json.dumps(measured, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"baseline written to {args.write_baseline}")
    if args.check:
        baseline = json.loads(args.check.read_text(encoding="utf-8"))
        slow = [f"{name}: {measured[name] / base:.1f}x the baseline ratio" if name in measured else f"{name}: not measured"
                for name, base in baseline.items() if name not in measured or measured[name] > 2 * base]
        if slow:
            print("regressions:\n  " + "\n  ".join(slow))
            return 1
        print(f"no row more than 2x its baseline ratio ({len(baseline)} rows checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
