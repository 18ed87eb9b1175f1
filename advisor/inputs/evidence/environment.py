"""An environment file on its own (docker --env-file, a systemd EnvironmentFile, `env | grep NCCL`, a
.env of a compose stack): the NCCL, CUDA and engine variables a serving process runs with; and the
variables a job launcher passes on its own command line (mpirun -x NAME=VALUE, srun --export, torchrun
or any command after NAME=VALUE prefixes).

A line is NAME=VALUE (optionally `export NAME=VALUE`, a value in quotes); a file is one where the settings
of knowledge/environment.yaml (a documented variable, or one under its prefixes) make up most of its
lines. The last assignment of a name wins, as in a shell. Guarantees: only names the environment table
knows become facts, each with its line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.launch import ENV_FACTS, env_facts
from advisor.inputs.evidence.reader import Contribution, Reader, fact
from advisor.kb.paths import knowledge_dir
from advisor.yamlio import load_file_cached

ASSIGNMENT = re.compile(r"[ \t]{0,16}(?:export[ \t]{1,8})?([A-Za-z_][A-Za-z0-9_]{0,127})=([^\n]{0,4096})")
LOADERS = ("LD_PRELOAD", "LD_LIBRARY_PATH")  # how a custom NCCL build is put in front of the engine's own
SHARE = 0.5  # settings must make up at least half of the lines that are not blank or comments


@cache
def _table() -> tuple[tuple[str, ...], frozenset[str]]:
    data = load_file_cached(knowledge_dir() / "environment.yaml") or {}
    documented = frozenset(n for names in (data.get("documented") or {}).values() for n in names)
    return tuple(data.get("prefixes") or ()), documented


def is_setting(name: str) -> bool:
    """Whether the environment table counts `name` as a setting of the serving stack."""
    prefixes, documented = _table()
    return name in documented or name.startswith(prefixes) or name in LOADERS


def _assignments(text: str) -> Iterator[tuple[int, str, str, str]]:
    for no, line in enumerate(text.split("\n"), 1):
        m = ASSIGNMENT.fullmatch(line.rstrip())
        if m:
            yield no, m.group(1), m.group(2).strip().strip("\"'"), line


def looks_like_env(text: str) -> bool:
    """Text whose lines are mostly NAME=VALUE settings of the serving stack."""
    if "=" not in text:
        return False
    lines = [x for x in text.split("\n") if x.strip() and not x.lstrip().startswith("#")]
    settings = sum(1 for _no, name, _v, _l in _assignments(text) if is_setting(name))
    return settings >= 1 and settings >= SHARE * len(lines)


def parse_env(text: str, file: str) -> Parsed:
    """Every setting of the file with its line; the last assignment of a name wins."""
    out = Parsed("environment", file)
    env: dict[str, str] = {}
    for no, name, value, line in _assignments(clean(text)):
        if is_setting(name):
            env[name] = value
            out.at(f"env:0:{name}", no, line)
    if not env:
        out.notes.append("no NAME=VALUE settings of NCCL, CUDA or the engines found")
    out.data = {"env": env}
    return out


def facts_of_env(parsed: Parsed) -> Iterator[Contribution]:
    """What the settings say: NCCL's P2P and SHM switches and level, a custom NCCL library."""
    yield from env_facts(parsed.data.get("env") or {}, parsed.evidence, None)


ENVIRONMENT = Reader("environment", looks_like_env, parse_env, facts_of_env, yields=ENV_FACTS)


LAUNCHER = re.compile(r"\b(mpirun|mpiexec|srun|torchrun|deepspeed|horovodrun|python3?|[a-z_]{2,40}_perf)\b")
PASSED = re.compile(
    r"(?:^|[ \t,])(?:-x[ \t]{1,4}|--export=(?:ALL,)?|--env[ \t=]{1,4}|-e[ \t]{1,4})?"
    r"([A-Z_][A-Z0-9_]{1,127})=([^ \t\n\"',]{0,400})"
)


# Open MPI's and MPICH's host list: -H/--host/-host a[:slots],b[:slots] (a host without slots gets one)
HOSTS = re.compile(r"(?:^|[ \t])(?:-H|--hosts|--host|-hosts|-host)[ \t=]{1,4}([^ \t\n]{1,2000})")
MPI = re.compile(r"\b(?:mpirun|mpiexec|horovodrun)\b")
NP = re.compile(r"(?:^|[ \t])(?:-np|-n|-c|--np|--n)[ \t=]{1,4}([0-9]{1,6})\b")


def looks_like_launcher(text: str) -> bool:
    """A job launcher's command line that passes settings of the serving stack (mpirun -x NCCL_...=), or
    an MPI launch with its host list."""
    return any(_launcher_lines(text)) or any(_host_lists(text))


def _host_lists(text: str) -> Iterator[tuple[int, str, dict[str, int]]]:
    """Each MPI launch line's hosts with their slots (a host named twice adds its slots)."""
    if not any(word in text for word in ("mpirun", "mpiexec", "horovodrun")):
        return
    for no, line in enumerate(text.split("\n"), 1):
        if not MPI.search(line) or not (m := HOSTS.search(line)):
            continue
        hosts: dict[str, int] = {}
        for item in m.group(1).split(","):
            name, _, slots = item.partition(":")
            if name:
                hosts[name] = hosts.get(name, 0) + (int(slots) if re.fullmatch(r"[0-9]{1,5}", slots) else 1)
        ranks = NP.search(line)
        if ranks and hosts and int(ranks.group(1)) > sum(hosts.values()):  # more ranks than slots: they share hosts
            share = -(-int(ranks.group(1)) // len(hosts))
            hosts = {name: max(slots, share) for name, slots in hosts.items()}
        if hosts:
            yield no, line, hosts


def _launcher_lines(text: str) -> Iterator[tuple[int, str, list[tuple[str, str]]]]:
    for no, line in enumerate(text.split("\n"), 1):
        if "=" not in line or not LAUNCHER.search(line) or line.lstrip().startswith("#"):
            continue
        found = [(m.group(1), m.group(2)) for m in PASSED.finditer(line) if is_setting(m.group(1))]
        if found:
            yield no, line, found


def parse_launcher(text: str, file: str) -> Parsed:
    """The settings each launcher line passes; the last one of a name wins."""
    out = Parsed("launcher-env", file)
    env: dict[str, str] = {}
    text = clean(text)
    for no, line, found in _launcher_lines(text):
        for name, value in found:
            env[name] = value
            out.at(f"env:0:{name}", no, line)
    out.data = {"env": env} if env else {}
    for no, line, hosts in _host_lists(text):  # the last launch is the one its log follows
        out.data["hosts"] = hosts
        out.evidence.pop("hosts", None)
        out.at("hosts", no, line)
    return out


def launcher_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The settings the launch passes, and how many hosts its host list names and the most slots of one."""
    yield from facts_of_env(parsed)
    hosts = parsed.data.get("hosts")
    if hosts:
        yield fact("launch_hosts", len(hosts), parsed.evidence.get("hosts"))
        yield fact("launch_slots_max", max(hosts.values()), parsed.evidence.get("hosts"))


LAUNCHER_ENV = Reader(
    "launcher-env",
    looks_like_launcher,
    parse_launcher,
    launcher_facts,
    yields=(*ENV_FACTS, "fact:launch_hosts", "fact:launch_slots_max"),
)
