"""The `advisor` command line. Results go to stdout, diagnostics to stderr; exit codes in ExitCode.

Imports are deferred to the subcommand that needs them, so `advisor --version` stays instant.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from advisor import __version__
from advisor.errors import AdvisorError, ExitCode, InputError

FORMATS = ("text", "json", "md")
DEBUG_ENV = "ADVISOR_DEBUG"  # set (to anything) to see the traceback of any error, as --debug does


class UsageError(AdvisorError):
    """A command line argparse cannot read (an unknown option, a missing value)."""


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, sized without `shutil`: argparse builds a formatter for every argument it
    adds, and `shutil` (with the compression modules it imports) is a few milliseconds of every start."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        if width is None:
            width = _columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size` finds it: $COLUMNS, else the terminal, else 80."""
    import os

    try:
        return max(int(os.environ.get("COLUMNS", "")), 1)
    except ValueError:
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (and exit 2) instead of the usage text and a line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        """Raise UsageError; main prints it as one line."""
        raise UsageError(message, hint=f"see `{self.prog} --help`")


def _scenario_flags(p: argparse.ArgumentParser, sizing: bool = False) -> None:
    """The scenario's flags, one per field of the field table that has one (`size` takes fewer)."""
    from advisor.inputs.fields import field_table

    g = p.add_argument_group("scenario (flags override the fields of a scenario file)")
    for f in field_table().flags(sizing):
        flag = str(f.flag)
        if f.strict:
            g.add_argument(flag, choices=f.choices, help=f.help.get("en"))
        else:
            g.add_argument(flag, type=str, help=f.help.get("en"))


def flag_paths() -> dict[str, str]:
    """Each scenario flag's argparse name and the scenario path it sets: users → workload.concurrent_conversations."""
    from advisor.inputs.fields import field_table

    return {f.dest: f.path for f in field_table().flags() if f.dest}


def raw_scenario(args: argparse.Namespace) -> tuple[dict[str, Any], str, Path | None]:
    """The scenario mapping from an optional file plus flags, where it came from, and its folder."""
    from advisor.inputs.scenario import load_scenario_file

    raw: dict[str, Any] = {}
    where, base = "flags", None
    if getattr(args, "scenario", None):
        path = Path(args.scenario)
        raw = load_scenario_file(path)
        where, base = str(path), path.parent
    for flag, field in flag_paths().items():
        value = getattr(args, flag, None)
        if value is None:
            continue
        if "." in field:
            section, key = field.split(".")
            node = raw.setdefault(section, {})
            if not isinstance(node, dict):
                raise InputError(f"{section!r} should be a mapping of fields", where=where)
            node[key] = value
        else:
            raw[field] = value
    return raw, where, base


def cmd_recommend(args: argparse.Namespace) -> int:
    from advisor.core.engine import Engine
    from advisor.core.layouts import parse_layout
    from advisor.inputs.scenario import build
    from advisor.size import one_models_share

    engine = Engine.load()
    raw, where, base = raw_scenario(args)
    scenario = one_models_share(raw, build(raw, engine.kb, where=where, base_dir=base), engine.kb, where, base)
    only = _checked_layout(args.layout, parse_layout, scenario, engine.kb) if args.layout else None
    if only is not None and max(only.gpus, only.ep * only.pp) > (
        scenario.data["hardware"]["gpus_per_node"] * scenario.data["hardware"]["nodes"]
    ):
        needs = max(only.gpus, only.ep * only.pp)  # an EP group spans its GPUs in each stage
        raise InputError(f"layout {only.label()} needs {needs} GPUs, the scenario has fewer")
    rec = engine.evaluate(scenario, lang=args.lang, only=only)
    _print_recommendation(rec, engine, args.format)
    if args.record:
        _record("recommend", engine, args, rec)
    return ExitCode.OK


def _checked_layout(text: str, parse: Any, scenario: Any, kb: Any) -> Any:
    """The layout of --layout, its numbers checked before and after reading, before the engine sees them."""
    from advisor.inputs.limits import check_layout, check_layout_shape, check_layout_text

    total = int(kb.settings.get("max_total_gpus", 65536))
    check_layout_text(text, total, "--layout")
    check_layout_shape(text, "--layout")
    layout = parse(text)
    check_layout(layout.replicas, layout.tp, layout.pp, layout.ep, scenario.model, total, where="--layout")
    return layout


def _record(kind: str, engine: Any, args: argparse.Namespace, result: Any) -> None:
    """Write a transcript of a one-shot command: the command line as the question, the text report as the answer."""
    from advisor.render.text import render
    from advisor.render.ticket import brief
    from advisor.transcripts import Recorder

    recorder = Recorder.start(
        kind,
        engine,
        Path(args.transcripts) if args.transcripts else None,
        args.lang,
        redact=not args.no_redact,
        brief=lambda result: brief(result, engine.kb),
    )

    reply = render(result, engine.kb)
    recorder.turn("advisor " + " ".join(args.argv or [kind]), reply, result)
    paths = recorder.close(result)
    if recorder.failed:
        print(f"advisor: warning: {recorder.failed}", file=sys.stderr)
    elif paths:
        print(f"advisor: transcript recorded: {paths[0]}", file=sys.stderr)


def _print_recommendation(rec: Any, engine: Any, fmt: str) -> None:
    from advisor.render import render

    sys.stdout.write(render(fmt, rec, engine.kb, engine.rules))


def cmd_size(args: argparse.Namespace) -> int:
    from advisor.core.engine import Engine
    from advisor.render import render
    from advisor.size import size

    engine = Engine.load()
    raw, where, base = raw_scenario(args)
    if "model" not in raw:
        raise InputError("missing --model (or 'model' in the scenario file)")
    result = size(engine, raw, lang=args.lang, where=where, base_dir=base, platforms=args.platform)
    sys.stdout.write(render(args.format, result, engine.kb, engine.rules))
    return ExitCode.OK


def cmd_audit(args: argparse.Namespace) -> int:
    from advisor.audit import audit
    from advisor.core.engine import Engine
    from advisor.inputs.evidence.manifest import host_bundles
    from advisor.render import render

    engine = Engine.load()
    paths = [Path(p) for p in args.paths]
    hosts = host_bundles(paths[0]) if len(paths) == 1 else []
    if len(hosts) > 1 and not args.fleet:  # one folder of host bundles: one audit each, never one merged host
        print(f"advisor: {paths[0]} holds {len(hosts)} host bundles: each is audited on its own", file=sys.stderr)
    if args.fleet or len(hosts) > 1 or (len(paths) > 1 and all(p.is_dir() for p in paths)):
        return _audit_fleet(engine, paths, args)
    result = audit(engine, paths, lang=args.lang)
    sys.stdout.write(render(args.format, result, engine.kb, engine.rules))
    if args.record:
        _record("audit", engine, args, result)
    return _exit_for([result.worst()], args.fail_on)


def _exit_for(worst: list[str | None], fail_on: str) -> int:
    """FINDINGS when an audit's worst unsuppressed finding is at or above `fail_on`, else OK."""
    from advisor.kb.rules import SEVERITIES

    found = [SEVERITIES.index(w) for w in worst if w]
    if fail_on != "never" and found and max(found) >= SEVERITIES.index(fail_on):
        return ExitCode.FINDINGS
    return ExitCode.OK


def _audit_fleet(engine: Any, paths: list[Path], args: argparse.Namespace) -> int:
    """Many bundles: one audit each, with --jobs workers and a progress bar on a terminal."""
    from advisor.audit import audit_fleet
    from advisor.inputs.evidence.manifest import host_bundles
    from advisor.render import render

    bundles = [h for p in paths if p.is_dir() for h in (host_bundles(p) or [p])]  # a folder of hosts: its hosts
    if args.fleet and len(paths) == 1 and bundles == paths:
        inner = sorted(p for p in paths[0].iterdir() if p.is_dir())
        bundles = inner or bundles
    if not bundles:
        raise InputError("a fleet audit needs bundle folders")
    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty:
            width = 30
            filled = width * done // total
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} bundles")
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    items = audit_fleet(engine, bundles, args.lang, max(1, args.jobs), progress)
    sys.stdout.write(render(args.format, items, engine.kb, engine.rules))
    if all(i.result is None for i in items):
        return ExitCode.UNUSABLE
    return _exit_for([i.result.worst() for i in items if i.result], args.fail_on)


def cmd_collect(args: argparse.Namespace) -> int:
    from advisor.collect import Interrupted, collect, redaction_summary

    try:
        manifest = collect(Path(args.output), redact=args.redact)
    except Interrupted as stop:
        import signal

        name = signal.Signals(stop.signo).name
        print(f"advisor collect: stopped by {name}; the running tool was ended, no bundle written", file=sys.stderr)
        return 128 + stop.signo
    for step in manifest["steps"]:  # type: ignore[attr-defined]
        if step["status"] != "ok":
            print(f"advisor collect: {step['command']}: {step['status']} ({step['detail']})", file=sys.stderr)
    print(f"{args.output}: {manifest['summary']}; run `advisor audit {args.output}` anywhere")
    print(f"{args.output}: {redaction_summary(manifest)}")
    return ExitCode.OK


def cmd_transcripts(args: argparse.Namespace) -> int:
    import json

    from advisor import transcripts as t

    folder = Path(args.transcripts) if args.transcripts else t.default_folder()
    problems: list[str] = []
    if args.action == "list":
        rows = t.listing(folder, problems) if folder.is_dir() else []
        for r in rows:
            # complete only with its final files: a disk that filled while they were written leaves a
            # journal with its end record and nothing else, which `recover` finishes
            state = (
                ("complete" if r["complete"] else "recovered")
                if r["final_files"]
                else "open (run `advisor transcripts recover`)"
            )
            print(f"{r['id']}  {r['kind']:<9}  {r['started_at']}  {r['turns']} turns  {r['layout'] or ''}  {state}")
        if not rows and not problems:
            print(f"no transcripts in {folder}")
        return _report(problems)
    if args.action == "recover":
        done = t.recover(folder, problems) if folder.is_dir() else []
        print(f"recovered {len(done)} transcript(s)" + "".join(f"\n  {p}" for p in done))
        return _report(problems)
    if not args.id:
        raise InputError(
            f"`advisor transcripts {args.action}` needs a transcript id", hint="see `advisor transcripts list`"
        )
    if args.action == "diff":
        if not args.other:
            raise InputError("`advisor transcripts diff` needs two transcripts", hint="advisor transcripts diff A B")
        first, second = t.resolve(folder, args.id), t.resolve(folder, args.other)
        found = t.differences(first, second)
        print(f"A: {first.get('id')}  B: {second.get('id')}")
        for what, then, now in found:
            print(f"  {what}: {_shown(then)} → {_shown(now)}")
        if not found:
            print("  the same scenario, layout, figures and findings")
        return ExitCode.OK
    doc = t.document(t.find(folder, args.id))
    if args.action == "export" and args.format == "json":
        from advisor.render.jsonout import finite

        sys.stdout.write(json.dumps(finite(doc), indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        sys.stdout.write(t.markdown(doc))
    return ExitCode.OK


def _shown(value: Any) -> str:
    """A value of a transcript as the diff prints it (absent: '–')."""
    return "–" if value is None else str(value)


def _report(problems: list[str]) -> int:
    """Each journal that could not be read, one line each on stderr; UNUSABLE when there was one."""
    for problem in problems:
        print(f"advisor: error: {problem}", file=sys.stderr)
    return ExitCode.UNUSABLE if problems else ExitCode.OK


def cmd_replay(args: argparse.Namespace) -> int:
    from advisor.core.engine import Engine
    from advisor.transcripts import load, replay

    doc = load(Path(args.transcript))
    r = replay(Engine.load(), doc, args.lang)
    if r.same:
        print(
            "no change: today's rules and knowledge give the same answer"
            + (" (the rule base changed, but not for this scenario)" if r.rule_base_changed else "")
        )
        return ExitCode.OK
    if doc.get("kind") == "audit":
        print(f"changed: today's rules on the recorded facts of {r.after.get('layout_label')}")
    else:
        print(f"changed: {r.before.get('layout_label')} then, {r.after.get('layout_label')} now")
    if r.figures_changed:
        print(
            "  figures changed: "
            + ", ".join(f"{name} {then} then, {now} now" for name, (then, now) in r.figures_changed.items())
        )
    for label, items in (
        ("rules that now fire", r.fired_added),
        ("rules that no longer fire", r.fired_removed),
        ("rules added to the rule base", r.rules_added),
        ("rules removed", r.rules_removed),
        ("rules changed", r.rules_changed),
        ("rules that cannot be decided on the recorded facts", r.after.get("undecided") or []),
    ):
        if items:
            print(f"  {label}: {', '.join(items)}")
    # a change is what replay reports, not a failure; exit 1 only where asked to gate on it, as --fail-on does
    return ExitCode.FINDINGS if args.fail_on_change else ExitCode.OK


def chat_lang(argv: Sequence[str], given: str, env: Mapping[str, str]) -> tuple[str, bool]:
    """The chat's language and whether it was chosen: --lang where given, else the locale's
    (LC_ALL, LC_MESSAGES, LANG: de_DE.UTF-8 is German), which the customer's own words may switch."""
    if any(a == "--lang" or a.startswith("--lang=") for a in argv):
        return given, True
    locale = env.get("LC_ALL") or env.get("LC_MESSAGES") or env.get("LANG") or ""
    return ("de" if locale.lower().startswith("de") else "en"), False


def cmd_chat(args: argparse.Namespace) -> int:
    import os

    args.lang, forced = chat_lang(getattr(args, "argv", ()), args.lang, os.environ)
    if args.plain:
        from advisor.chat.plain import run as plain
        from advisor.core.engine import Engine

        return plain(
            Engine.load(),
            args.lang,
            Path(args.transcripts) if args.transcripts else None,
            stdin=sys.stdin,  # the streams of now, not of import time (a redirected or captured run)
            stdout=sys.stdout,
            redact=not args.no_redact,
            forced_lang=forced,
        )
    try:
        from advisor.tui.app import run
    except ImportError as exc:
        raise InputError(f"the chat app is not available: {exc}") from None
    run(
        lang=getattr(args, "lang", "en"),
        transcripts=Path(args.transcripts) if getattr(args, "transcripts", None) else None,
        redact=not getattr(args, "no_redact", False),
        forced_lang=forced,
    )
    return ExitCode.OK


def cmd_explain(args: argparse.Namespace) -> int:
    from advisor.core.engine import Engine
    from advisor.render.listings import explain_rule

    engine = Engine.load()
    sys.stdout.write(explain_rule(engine.rules, engine.kb, args.rule_id, args.lang))
    return ExitCode.OK


def cmd_rules(args: argparse.Namespace) -> int:
    from advisor.core.engine import Engine

    engine = Engine.load()
    if args.action == "check":
        from advisor.rules_check import check

        report = check(engine, run_cases=not args.quick)
        for problem in report.problems:
            print(problem, file=sys.stderr)
        counts = ", ".join(f"{n} {k}" for k, n in report.checked.items())
        if report.problems:
            print(f"rules check: {len(report.problems)} problem(s) in {counts}", file=sys.stderr)
            return ExitCode.UNUSABLE
        print(f"rules check: ok ({counts})")
        return ExitCode.OK
    from advisor.render.listings import list_rules

    sys.stdout.write(list_rules(engine.rules, args.lang, args.topic))
    return ExitCode.OK


def cmd_listing(args: argparse.Namespace) -> int:
    from advisor.kb.knowledge import load
    from advisor.render import listings as catalogue

    kb = load()
    render = {
        "sources": catalogue.list_sources,
        "gpus": catalogue.list_gpus,
        "models": catalogue.list_models,
        "conflicts": catalogue.list_conflicts,
        "platforms": catalogue.list_platforms,
    }[args.command]
    sys.stdout.write(render(kb, args.lang))
    return ExitCode.OK


def cmd_formulas(args: argparse.Namespace) -> int:
    from advisor.kb.knowledge import load
    from advisor.render.listings import list_formulas

    sys.stdout.write(list_formulas(load(), args.lang, sympy_form=not args.plain))
    return ExitCode.OK


def cmd_completion(args: argparse.Namespace) -> int:
    from advisor.completion import script
    from advisor.inputs.fields import field_table
    from advisor.kb.knowledge import load

    kb = load()
    names = {
        "gpus": tuple(kb.gpus),
        "models": tuple(kb.models),
        "precisions": tuple(kb.precisions),
        "kv_precisions": tuple(p.id for p in kb.precisions.values() if p.kv_cache),
    }
    by_dest = {str(f.dest): f for f in field_table().flags()}
    sys.stdout.write(script(args.shell, parser(), by_dest, names))
    return ExitCode.OK


COMMANDS = (
    "chat",
    "recommend",
    "size",
    "audit",
    "transcripts",
    "replay",
    "collect",
    "explain",
    "rules",
    "sources",
    "gpus",
    "models",
    "conflicts",
    "platforms",
    "formulas",
    "completion",
)


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of every subcommand; with a `command` of COMMANDS, the parser of that one
    subcommand, which is all one run needs (building all of them costs a start about 10 ms)."""
    p = _Parser(
        prog="advisor",
        description="One card, replicas, or a split? Recommends how to run one LLM on several GPUs, "
        "with the numbers, the reasons and the sources.",
    )
    p.add_argument("--version", action="version", version=f"advisor {__version__}")
    p.add_argument("--debug", action="store_true", help="show the traceback of an error")
    common = _Parser(add_help=False)
    common.add_argument("--lang", choices=("en", "de"), default="en", help="language of the output")
    recording = _Parser(add_help=False)
    recording.add_argument("--record", action="store_true", help="write a transcript (Markdown and JSON)")
    recording.add_argument("--transcripts", help="transcript folder (default: ./transcripts or $ADVISOR_TRANSCRIPTS)")
    recording.add_argument("--no-redact", action="store_true", help="keep hostnames, addresses, serials and tokens")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    only = command if command in COMMANDS else None  # a misspelt one gets argparse's message with every choice

    def add(name: str, help: str, *parents: _Parser) -> argparse.ArgumentParser | None:
        if only is not None and only != name:
            return None
        return sub.add_parser(name, parents=list(parents), help=help)

    if ch := add("chat", "the full-screen chat (also: `advisor` without a command)", common):
        ch.add_argument("--transcripts", help="transcript folder (default: ./transcripts or $ADVISOR_TRANSCRIPTS)")
        ch.add_argument(
            "--plain", action="store_true", help="a line-based dialogue on stdin/stdout instead of the full-screen app"
        )
        ch.add_argument(
            "--no-redact", action="store_true", help="keep hostnames, addresses, serials and tokens in the transcript"
        )
        ch.set_defaults(func=cmd_chat)

    if r := add("recommend", "one card, replicas or a split for a scenario", common, recording):
        r.add_argument("scenario", nargs="?", help="scenario YAML file (optional; flags may give every field)")
        _scenario_flags(r)
        r.add_argument("--layout", help="evaluate this layout instead of choosing, e.g. tp=4,pp=2 (why not X?)")
        r.add_argument("--format", choices=FORMATS, default="text")
        r.set_defaults(func=cmd_recommend)

    if s := add("size", "for each catalogue platform: fits, split, or not; smallest that serves", common):
        s.add_argument("scenario", nargs="?", help="scenario YAML file (model, precision, workload)")
        _scenario_flags(s, sizing=True)
        s.add_argument("--platform", action="append", help="only this platform id (repeatable)")
        s.add_argument("--format", choices=FORMATS, default="text")
        s.set_defaults(func=cmd_size)

    if a := add("audit", "check a deployment against the rules from host evidence", common, recording):
        a.add_argument("paths", nargs="+", help="bundle folders and files, in any order and under any names")
        a.add_argument("--format", choices=("text", "json", "md", "sarif"), default="text")
        a.add_argument(
            "--fail-on",
            choices=("error", "warning", "advice", "info", "never"),
            default="error",
            help="exit 1 when an unsuppressed finding is at or above this severity (default: error)",
        )
        a.add_argument(
            "--fleet",
            action="store_true",
            help="each folder is one host's bundle (automatic when several folders are given); "
            "one folder of bundle folders also works",
        )
        a.add_argument("--jobs", type=int, default=1, help="worker processes for a fleet audit (default 1)")
        a.set_defaults(func=cmd_audit)

    if tr := add("transcripts", "list, show, export, recover or diff transcripts", common):
        tr.add_argument("action", choices=("list", "show", "export", "recover", "diff"))
        tr.add_argument("id", nargs="?", help="transcript id (or a unique prefix, or a JSON file for diff)")
        tr.add_argument("other", nargs="?", help="diff: the transcript to compare with (id, prefix or JSON file)")
        tr.add_argument("--format", choices=("md", "json"), default="md")
        tr.add_argument("--transcripts", help="transcript folder (default: ./transcripts or $ADVISOR_TRANSCRIPTS)")
        tr.set_defaults(func=cmd_transcripts)

    if rp := add("replay", "run a recorded transcript through today's rules; show what changed", common):
        rp.add_argument("transcript", help="a transcript's JSON file")
        rp.add_argument(
            "--fail-on-change",
            action="store_true",
            help="exit 1 when today's rules give another answer (for a CI gate); without it, exit 0 either way",
        )
        rp.set_defaults(func=cmd_replay)

    if c := add("collect", "gather host evidence into a folder for `advisor audit`"):
        c.add_argument("-o", "--output", required=True, help="a new or empty folder for the bundle")
        c.add_argument(
            "--redact",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="hide host names, addresses, serials, UUIDs, user names and tokens, as transcripts do "
            "(default: on; the bundle is meant to be sent; --no-redact keeps them)",
        )
        c.set_defaults(func=cmd_collect)

    if e := add("explain", "a rule's page: what, why, example, sources", common):
        e.add_argument("rule_id")
        e.set_defaults(func=cmd_explain)

    if ru := add("rules", "list the rules, or `rules check` the rule and knowledge base", common):
        ru.add_argument("action", nargs="?", choices=("list", "check"), default="list")
        ru.add_argument("--topic", help="only rules with this topic")
        ru.add_argument("--quick", action="store_true", help="check: skip running every rule's cases")
        ru.set_defaults(func=cmd_rules)

    for name, text in (
        ("sources", "the sources with their trust notes"),
        ("gpus", "the GPU catalogue"),
        ("models", "the model catalogue"),
        ("conflicts", "where sources disagree, and the resolution"),
        ("platforms", "the platforms `size` compares"),
    ):
        if sp := add(name, text, common):
            sp.set_defaults(func=cmd_listing)
    if f := add("formulas", "every formula, symbolically, with units and source", common):
        f.add_argument("--plain", action="store_true", help="skip the sympy form (faster)")
        f.set_defaults(func=cmd_formulas)

    if co := add("completion", "print a shell completion script: bash, zsh or fish"):
        co.add_argument("shell", choices=("bash", "zsh", "fish"))
        co.set_defaults(func=cmd_completion)
    return p


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand a command line names (its first word that is not an option), if any."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return None


def run() -> int:
    """The `advisor` program (console script and `python -m advisor`): `main` in a process that keeps
    what it loads until it exits."""
    from advisor import diskcache

    diskcache.keep_loaded()
    return main()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code: 0, 1 for audit findings (--fail-on), 2 for any
    error, an unexpected one included (one line on stderr; --debug or ADVISOR_DEBUG shows the traceback)."""
    import os

    argv = list(sys.argv[1:] if argv is None else argv)
    p = parser(_command(argv))
    debug = "--debug" in argv or bool(os.environ.get(DEBUG_ENV))
    try:
        args = p.parse_args(argv)
    except UsageError as exc:  # argparse's way, kept: SystemExit(2), but after one line, not the usage text
        print(f"advisor: error: {exc.one_line()}", file=sys.stderr)
        raise SystemExit(int(exc.exit_code)) from None
    args.argv = argv
    args.debug = args.debug or debug
    if not getattr(args, "func", None):
        if sys.stdin.isatty() and sys.stdout.isatty():
            args = p.parse_args([*argv, "chat"])
            args.argv = argv
        else:
            p.print_help()
            return ExitCode.OK
    if getattr(args, "func", None) is cmd_chat and not getattr(args, "plain", False):
        return _run(args)  # the full-screen app drives the terminal itself
    from advisor.terminal import guarded

    with guarded():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Run the chosen command: its exit code, or one line and exit 2 for any error."""
    try:
        return int(args.func(args))
    except AdvisorError as exc:
        if args.debug:
            raise
        print(f"advisor: error: {exc.one_line()}", file=sys.stderr)
        return int(exc.exit_code)
    except BrokenPipeError:
        return ExitCode.OK
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug or an input no check foresaw: one line, never exit 1
        if args.debug:
            raise
        text = " ".join(str(exc).split())[:300]
        print(
            f"advisor: error: unexpected {type(exc).__name__}{': ' + text if text else ''} "
            f"(a bug: please report it with the input; --debug or {DEBUG_ENV}=1 shows the traceback)",
            file=sys.stderr,
        )
        return ExitCode.UNUSABLE
