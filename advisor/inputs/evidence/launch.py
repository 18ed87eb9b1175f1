"""Engine launches: `vllm serve`, `python -m vllm.entrypoints.openai.api_server`,
`python -m sglang.launch_server`, `trtllm-serve`, on a shell line, in a docker-compose file, or in a Kubernetes
manifest's command/args, with CUDA_VISIBLE_DEVICES and NCCL_* from the environment.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import PurePosixPath
from typing import Any

from advisor.inputs.evidence import Evidence, Parsed, clean
from advisor.inputs.evidence.nccl import p2p_level
from advisor.inputs.evidence.reader import ALL_RANKS, Contribution, Reader, fact

VLLM = re.compile(
    r"(\bvllm[ \t]+serve\b|vllm\.entrypoints\.openai\.api_server|vllm\.entrypoints\.api_server|vllm/vllm-openai)"
)
SGLANG = re.compile(r"sglang\.launch_server|sglang_router\.launch_server|lmsysorg/sglang")
TRTLLM = re.compile(r"\btrtllm-serve\b|tensorrt-llm/release")
ENV = re.compile(
    r"\b(CUDA_VISIBLE_DEVICES|NCCL_[A-Z0-9_]+|VLLM_[A-Z0-9_]+|HF_TOKEN|HUGGING_FACE_HUB_TOKEN)"
    r"[ \t]*[=:][ \t]*\"?([^ \t\n\"']*)"
)
COMMAND = re.compile(
    r"\bvllm[ \t]+serve\b|vllm\.entrypoints\.|sglang\.launch_server|sglang_router\.launch_server|\btrtllm-serve\b"
)
CONTAINER_RUN = re.compile(r"\b(docker|podman|nerdctl)[ \t]+run\b")

FLAGS: dict[str, tuple[str, ...]] = {
    "tp": ("--tensor-parallel-size", "-tp", "--tp", "--tp-size", "--tp_size", "--tensor_parallel_size"),
    "pp": ("--pipeline-parallel-size", "-pp", "--pp", "--pp-size", "--pp_size", "--pipeline_parallel_size"),
    "dp": ("--data-parallel-size", "-dp", "--dp", "--dp-size"),
    "ep": ("--ep-size", "--expert-parallel-size", "--ep", "--ep_size", "--moe_expert_parallel_size"),
    "model": ("--model", "--model-path"),
    "served_model_name": ("--served-model-name",),
    "quantization": ("--quantization", "-q"),
    "kv_cache_dtype": ("--kv-cache-dtype",),
    "max_model_len": ("--max-model-len", "--context-length", "--max_seq_len"),
    "memory_utilization": ("--gpu-memory-utilization", "--mem-fraction-static"),
    "max_num_seqs": ("--max-num-seqs", "--max-running-requests", "--max_batch_size"),
    "max_num_batched_tokens": ("--max-num-batched-tokens", "--chunked-prefill-size", "--max_num_tokens"),
    "nnodes": ("--nnodes",),
}
# the scenario's fields a launch line states with its flags (knowledge/engine_flags.yaml cites each flag)
LAUNCH_FIELDS = (
    ("memory_utilization", "workload.memory_utilization"),
    ("max_num_seqs", "workload.max_num_seqs"),
    ("max_num_batched_tokens", "workload.max_num_batched_tokens"),
    ("nnodes", "hardware.nodes"),
)
SWITCHES = {
    "--enable-expert-parallel": "enable_ep",
    "--enable-dp-attention": "dp_attention",
    "--disable-custom-all-reduce": "custom_allreduce_off",
    "--enable-p2p-check": "p2p_check",
}


def looks_like_launch(text: str) -> bool:
    """Text that starts vLLM, SGLang or TensorRT-LLM's server."""
    if "vllm" not in text and "sglang" not in text and "trtllm" not in text and "tensorrt-llm" not in text:
        return False
    return bool(VLLM.search(text) or SGLANG.search(text) or TRTLLM.search(text))


def _join_continuations(text: str) -> list[tuple[int, str]]:
    """Logical lines: shell backslash continuations joined, with the line each starts on."""
    out: list[tuple[int, str]] = []
    buffer, start = "", 0
    for no, line in enumerate(text.split("\n"), 1):
        stripped = line.rstrip()
        if not buffer:
            start = no
        if stripped.endswith("\\"):
            buffer += stripped[:-1] + " "
            continue
        out.append((start, buffer + stripped))
        buffer = ""
    if buffer:
        out.append((start, buffer))
    return out


# a shell word: unquoted characters, backslash escapes and quoted strings, joined ("a"'b'c is one word)
_WORD = re.compile(r"""(?:[^\s"'\\]|\\[^\n]|"(?:[^"\\\n]|\\[^\n]){0,65536}"|'[^'\n]{0,65536}')+""")
_PIECE = re.compile(r"""\\([^\n])|"((?:[^"\\\n]|\\[^\n]){0,65536})"|'([^'\n]{0,65536})'|([^\s"'\\]{1,65536})""")
_IN_DOUBLE = re.compile(r"""\\([$`"\\])""")


def _tokens(command: str) -> list[str]:
    """The words of a shell command line, as a POSIX shell splits them (quotes removed, escapes applied),
    in linear time: a word with an unclosed quote ends before it, as `split()` would have it."""
    return [_unquoted(m.group(0)) for m in _WORD.finditer(command)]


def _unquoted(word: str) -> str:
    out = []
    for m in _PIECE.finditer(word):
        escaped, double, single, bare = m.groups()
        if escaped is not None:
            out.append(escaped)
        elif double is not None:
            out.append(_IN_DOUBLE.sub(r"\1", double))
        else:
            out.append(single if single is not None else bare)
    return "".join(out)


MAX_PARALLEL = 65536  # no launch spans more GPUs; a larger or non-numeric size is a garbled line


def read_flags(tokens: list[str]) -> dict[str, Any]:
    """The parallel layout and the other flags that matter from an engine's argument list."""
    found: dict[str, Any] = {}
    for i, tok in enumerate(tokens):
        name, eq, inline = tok.partition("=")
        for key, names in FLAGS.items():
            if name in names:
                value = inline if eq else (tokens[i + 1] if i + 1 < len(tokens) else "")
                found[key] = (
                    int(value) if key in ("tp", "pp", "dp", "ep") and re.fullmatch(r"[0-9]{1,9}", value) else value
                )
        if name in SWITCHES:
            found[SWITCHES[name]] = True
    for i, tok in enumerate(tokens):
        after = tokens[i + 1] if i + 1 < len(tokens) else "-"
        if tok == "serve" and i > 0 and tokens[i - 1].endswith("vllm") and not after.startswith("-"):
            found.setdefault("model", after)
        if tok.endswith("trtllm-serve"):  # trtllm-serve [serve] MODEL
            rest = tokens[i + 2 :] if after == "serve" else tokens[i + 1 :]
            if rest and not rest[0].startswith("-"):
                found.setdefault("model", rest[0])
    return found


def _engine(command: str) -> str | None:
    if VLLM.search(command):
        return "vllm"
    if SGLANG.search(command):
        return "sglang"
    if TRTLLM.search(command):
        return "trtllm"
    return None


def _from_mapping(doc: Any, out: Parsed, launches: list[dict[str, Any]]) -> None:
    """docker-compose services or Kubernetes containers: command/args plus environment."""
    if isinstance(doc, Mapping):
        containers: list[Mapping[str, Any]] = []
        stack: list[Any] = [doc]
        while stack:
            node = stack.pop()
            if isinstance(node, Mapping):
                if any(k in node for k in ("command", "args", "entrypoint")):
                    containers.append(node)
                stack += [v for v in node.values() if isinstance(v, (Mapping, list))]
            elif isinstance(node, list):
                stack += [v for v in node if isinstance(v, (Mapping, list))]
        for c in containers:
            parts: list[str] = []
            for key in ("entrypoint", "command", "args"):
                value = c.get(key)
                if isinstance(value, str):
                    parts += _tokens(value)
                elif isinstance(value, list):
                    parts += [str(v) for v in value]
            command = " ".join(parts + [str(c.get("image", ""))])
            if not _engine(command) and not any(t.startswith("--tensor-parallel-size") or t == "--tp" for t in parts):
                continue
            env = _env(c.get("environment") or c.get("env"))
            launches.append({"engine": _engine(command) or "vllm", "command": command, "env": env, **read_flags(parts)})


def _env(value: Any) -> dict[str, str]:
    env: dict[str, str] = {}
    if isinstance(value, Mapping):
        env = {str(k): str(v) for k, v in value.items()}
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, Mapping) and "name" in item:
                env[str(item["name"])] = str(item.get("value", ""))
            elif isinstance(item, str) and "=" in item:
                k, _, v = item.partition("=")
                env[k] = v
    return env


COMMENT = re.compile(r"(?:^|[ \t])#[^\n]*")


def _uncommented(line: str) -> str:
    """A shell line without its comment: `# export NCCL_P2P_DISABLE=1` sets nothing."""
    return COMMENT.sub("", line)


def parse_launch(text: str, file: str) -> Parsed:
    """Every engine launch in the text: engine, model, TP/PP/DP/EP, GPU indices, NCCL settings.

    A launch takes the environment set on its own line and on the lines since the launch before it
    (the last launch also the lines after it): a second launch's settings never reach the first."""
    out = Parsed("launch", file)
    text = clean(text)
    launches: list[dict[str, Any]] = []
    env_lines: list[tuple[int, str, str, str]] = []  # line number, name, value, line
    starts: list[int] = []
    for no, line in _join_continuations(text):
        for m in ENV.finditer(_uncommented(line)):
            env_lines.append((no, m.group(1), m.group(2), line))
        engine = _engine(line)
        runs = COMMAND.search(line) or CONTAINER_RUN.search(line)
        if engine and runs and not line.lstrip().startswith(("#", "-", "command:", "args:", "image:", "entrypoint:")):
            tokens = _tokens(line[line.find(line.lstrip()) :])
            launches.append({"engine": engine, "command": line.strip(), "env": {}, **read_flags(tokens)})
            starts.append(no)
            out.at(f"launch:{len(launches) - 1}", no, line)
    if not launches and re.search(r"^[ \t]*(services|apiVersion|kind|spec|containers|command|args)[ \t]*:", text, re.M):
        from advisor.errors import AdvisorError

        try:
            for doc in _yaml_documents(text, file):
                _from_mapping(doc, out, launches)
        except AdvisorError as exc:
            out.notes.append(exc.one_line())
        for i in range(len(launches)):
            no = next(
                (n for n, line in enumerate(text.split("\n"), 1) if _engine(line) or "tensor-parallel" in line), 1
            )
            out.at(f"launch:{i}", no, text.split("\n")[no - 1])
            starts.append(no)
    from_yaml = len(set(starts)) < len(starts)  # containers of one manifest: each has its own environment
    for i, launch in enumerate(launches):
        first = starts[i - 1] if i else 0
        last = starts[i] if i + 1 < len(launches) else len(text.split("\n"))
        env: dict[str, str] = {}
        for no, name, value, line in env_lines:
            if first < no <= last and not from_yaml:
                env[name] = value
                out.at(f"env:{i}:{name}", no, line)
        launch["env"] = {**env, **launch["env"]}
        devices = launch["env"].get("CUDA_VISIBLE_DEVICES")
        if devices and re.fullmatch(r"\d+(,\d+)*", devices):
            launch["gpus"] = [int(d) for d in devices.split(",")]
    if len(launches) > 1:
        lines = ", ".join(str(out.evidence[f"launch:{i}"].line) for i in range(1, len(launches)))
        out.notes.append(
            f"{len(launches)} launches: the audit reads the first (line {out.evidence['launch:0'].line}); "
            f"the other{'s' if len(launches) > 2 else ''} (line{'s' if len(launches) > 2 else ''} {lines}) "
            "are not evaluated: audit each on its own"
        )
    for i, launch in enumerate(launches):
        for key in ("tp", "pp", "dp", "ep"):
            size = launch.get(key)
            if size is not None and not (isinstance(size, int) and 1 <= size <= MAX_PARALLEL):
                out.notes.append(
                    f"launch {i + 1}: {key} {str(size)[:40]!r} is not a size from 1 to {MAX_PARALLEL}; ignored"
                )
                del launch[key]
    if not launches:
        out.notes.append("mentions an engine but no launch command could be read")
    out.data = {"launches": launches}
    return out


def _yaml_documents(text: str, file: str) -> list[Any]:
    from advisor.yamlio import loads

    docs = []
    for part in re.split(r"^---[ \t]*$", text, flags=re.M):
        if part.strip():
            docs.append(loads(part, file))
    return docs


def launch_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The file's first launch: engine, layout, model, precision, KV cache, context, GPUs, NCCL_P2P_DISABLE.

    The model goes with the other names the catalogue may know it by: a local path's last part
    (/models/Llama-3.3-70B-Instruct) and the served model name."""
    launches = parsed.data.get("launches", [])
    if not launches:
        return
    item, where = launches[0], parsed.evidence.get("launch:0")
    yield Contribution("engine", item["engine"])
    for key in ("tp", "pp", "dp"):
        if item.get(key):
            yield Contribution(f"deployment.{key}", item[key], where)
    if item.get("ep"):
        yield fact("ep_flag", item["ep"], where)
    if item.get("enable_ep") or item.get("ep"):
        yield Contribution("deployment.ep", item.get("ep") or ALL_RANKS)  # vLLM: EP = TP x DP without a size
    if item.get("model"):
        given = str(item["model"])
        others = (PurePosixPath(given).name, item.get("served_model_name"))
        yield Contribution("model", given, where, names=tuple(str(n) for n in others if n))
    if item.get("quantization") in ("fp8",):
        yield Contribution("precision", "fp8")
    if str(item.get("kv_cache_dtype", "")).startswith("fp8"):
        yield Contribution("kv_cache_dtype", "fp8")
    if item.get("max_model_len"):
        yield Contribution("workload.context_tokens", item["max_model_len"])
    for key, target in LAUNCH_FIELDS:
        if item.get(key):
            yield Contribution(target, item[key])
    if item.get("gpus"):
        yield Contribution("deployment.gpus", item["gpus"])
    # a switch the launch does not give is off: the engine's default, read from the launch itself
    yield fact("custom_allreduce_disabled", bool(item.get("custom_allreduce_off")), where)
    if item["engine"] == "sglang":
        yield fact("p2p_check", bool(item.get("p2p_check")), where)
    yield from env_facts(item.get("env", {}), parsed.evidence, where)


def env_facts(
    env: Mapping[str, str], evidence: Mapping[str, Evidence], where: Evidence | None
) -> Iterator[Contribution]:
    """What a process's environment says of NCCL: P2P switched off, the P2P level, SHM switched off; each
    with the line that sets it (`env:0:NAME` in `evidence`), else `where`. An unset switch is off."""
    for name, variable in (("nccl_p2p_disable", "NCCL_P2P_DISABLE"), ("nccl_shm_disable", "NCCL_SHM_DISABLE")):
        on = str(env.get(variable, "")).strip().lower() in ("1", "true", "yes")
        yield fact(name, on, evidence.get(f"env:0:{variable}") or where)
    level = p2p_level(str(env.get("NCCL_P2P_LEVEL", "")))
    if level is not None:
        where_level = evidence.get("env:0:NCCL_P2P_LEVEL") or where
        yield fact("nccl_p2p_level", level[0], where_level)
        yield fact("nccl_p2p_level_rank", level[1], where_level)
    for name, variable in (("nccl_socket_ifname", "NCCL_SOCKET_IFNAME"), ("nccl_topo_file", "NCCL_TOPO_FILE")):
        if env.get(variable):
            yield fact(name, str(env[variable]), evidence.get(f"env:0:{variable}") or where)
    gid_index = str(env.get("NCCL_IB_GID_INDEX", "")).strip().strip("\"'")
    if re.fullmatch(r"-?[0-9]{1,5}", gid_index):
        yield fact("nccl_ib_gid_index", int(gid_index), evidence.get("env:0:NCCL_IB_GID_INDEX") or where)
    library = env.get("LD_PRELOAD") or env.get("VLLM_NCCL_SO_PATH") or ""
    if "nccl" in library.lower():
        name = next(n for n in ("VLLM_NCCL_SO_PATH", "LD_PRELOAD") if "nccl" in env.get(n, "").lower())
        yield fact("nccl_library_override", library.split(":")[0], evidence.get(f"env:0:{name}") or where)


ENV_FACTS = (
    "fact:nccl_p2p_disable",
    "fact:nccl_shm_disable",
    "fact:nccl_p2p_level",
    "fact:nccl_p2p_level_rank",
    "fact:nccl_library_override",
    "fact:nccl_socket_ifname",
    "fact:nccl_topo_file",
    "fact:nccl_ib_gid_index",
)
LAUNCH = Reader(
    "launch",
    looks_like_launch,
    parse_launch,
    launch_facts,
    first_only=True,
    yields=(
        "engine",
        "deployment.tp",
        "deployment.pp",
        "deployment.dp",
        "fact:ep_flag",
        "deployment.ep",
        "model",
        "precision",
        "kv_cache_dtype",
        "workload.context_tokens",
        *(target for _key, target in LAUNCH_FIELDS),
        "deployment.gpus",
        "fact:custom_allreduce_disabled",
        "fact:p2p_check",
        *ENV_FACTS,
    ),
)
