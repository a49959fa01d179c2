#!/usr/bin/env python3
"""The README is a test: runs every shell command of README.md and docs/*.md, as written.

    python3 scripts/doc-test.py [--list] [--keep-going] [FILE.md ...]

Which blocks run: the fenced blocks opened with ```sh or ```bash, in README.md and then
docs/*.md (alphabetical), each file's blocks in order, every command verbatim. Other blocks
do not run: ```text for output samples, usage synopses and diagrams, ```toml, ```python, ...
A command block without a language (```) is an error, so that none is left out silently.

Where they run: a scratch copy of this checkout (its tracked and untracked, not ignored,
files) in target/doc-test/tree/, made afresh for each Markdown file: emptied except for its
own `target/` and `python/target/`, which are kept as build caches (between files, and
between runs of this script), then filled again from the checkout (a venv is not kept: one
made by another Python breaks). So a file's blocks
start from a fresh clone's state, except that README.md's first command has built
target/release/coaplab. One bash per Markdown file runs that file's blocks in order, so a
variable of one block is seen by the next; a block's background jobs are ended at its end,
and every process a file started when the file is done. The environment is a new user's:
CARGO_TARGET_DIR is unset (the README's `$PWD/target/release/coaplab` must hold),
`target/release` of the scratch copy is on PATH (the docs' bare `coaplab` is the binary that
the README's first command built), `sudo` runs the command directly when this runs as root
without sudo (CI), and bash has job control on (`set -m`) as at a terminal, so `kill %1`
ends a server started with `cargo run ... &`.

What fails: a command's exit status, or that of any command of its pipeline other than a
SIGPIPE (141) of a writer whose reader stopped early (`tshark ... | head`). The first
failure of a file ends that file, printed as FILE, block number (and its first line), the
command's line and the tail of its output; the script exits 1 if any file failed. After a
command sent to the background (`... &`) it waits one second, as a person typing the next
line would (a server's socket is then bound). Each file has a time limit (--timeout-min,
60 by default). Run as root, each file has a private, empty /tmp (a mount namespace), since
the docs write fixed paths such as /tmp/xc-sim that a second run would find taken. The
whole output is in target/doc-test/log.txt. `.peers/` (the peers that test.sh installs) is
linked into the scratch copy.

Annotations (a comment in the block, so that the reader sees it too), each with its reason
in parentheses; use them sparingly:
  # doc-test: skip (REASON)          alone on a line of a block: the whole block does not run
  CMD   # doc-test: skip (REASON)    at the end of a command: that command does not run
  CMD   # doc-test: s/OLD/NEW/ (REASON)
                                     at the end of a command: it runs with the text OLD
                                     replaced by NEW (e.g. a long sweep reduced: s/--reps 20/--reps 1/)
Root-only commands run as root (CI runs as root); run by another user, a command starting
with `sudo` runs only when `sudo -n` works, and is otherwise reported as not run.
"""
import argparse
import fcntl
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_LANGS = {"sh", "bash"}
MARK = re.compile(r"#\s*doc-test:\s*(.*?)\s*$")
KEEP = ["target", "python/target"]  # build caches kept in the scratch copy


# Run by `sh -c` in a new mount namespace, with $1 = the checkout and the command after it.
PRIVATE_TMP = r"""
set -e
m=$(mktemp -d /run/doc-test-tmp.XXXXXX)
mount -t tmpfs -o mode=1777 doc-test-tmp "$m"
case "$1" in /tmp/*) mkdir -p "$m/${1#/tmp/}" && mount --bind "$1" "$m/${1#/tmp/}" ;; esac
mount --move "$m" /tmp
rmdir "$m"
shift
exec "$@"
"""


class Command:
    def __init__(self, line, text):
        self.line = line  # 1-based line in the Markdown file
        self.text = text
        self.skip = None  # reason
        self.subst = None  # (old, new, reason)


class Block:
    def __init__(self, path, number, line, lang):
        self.path, self.number, self.line, self.lang = path, number, line, lang
        self.lines = []  # (line number, text)
        self.skip = None
        self.commands = []


def parse_marker(text, where):
    """The annotation of a line: ('skip', reason) or ('subst', old, new, reason), or None."""
    m = MARK.search(text)
    if not m:
        return None
    body = m.group(1)
    m2 = re.fullmatch(r"skip\s*\((.+)\)", body)
    if m2:
        return ("skip", m2.group(1))
    m2 = re.fullmatch(r"s/((?:[^/\\]|\\.)+)/((?:[^/\\]|\\.)*)/\s*\((.+)\)", body)
    if m2:
        unescape = lambda s: s.replace("\\/", "/")
        return ("subst", unescape(m2.group(1)), unescape(m2.group(2)), m2.group(3))
    sys.exit(f"doc-test: {where}: malformed annotation '{m.group(0)}' (see scripts/doc-test.py)")


def blocks_of(path):
    """The fenced blocks of a Markdown file that run, and errors for unlabelled ones."""
    rel = os.path.relpath(path, ROOT)
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, errors, number, i = [], [], 0, 0
    while i < len(lines):
        m = re.match(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3)
        number += 1
        block = Block(rel, number, i + 1, lang)
        i += 1
        while i < len(lines) and not re.match(r"^\s*" + re.escape(fence) + r"\s*$", lines[i]):
            text = lines[i]
            if text.startswith(indent):
                text = text[len(indent):]
            block.lines.append((i + 1, text))
            i += 1
        i += 1
        if lang == "":
            errors.append(f"{rel}:{block.line}: a fenced block without a language: "
                          "```sh (runs) or ```text (does not)")
        if lang in RUN_LANGS:
            blocks.append(block)
    for block in blocks:
        split_commands(block)
    return blocks, errors


def complete(text):
    """Whether bash parses text as whole commands (no open quote, loop or continuation)."""
    if text.rstrip().endswith("\\"):
        return False
    r = subprocess.run(["bash", "-n"], input=text + "\n", text=True, capture_output=True)
    return r.returncode == 0 and "here-document" not in r.stderr


def split_commands(block):
    where = f"{block.path}:{block.line}"
    pending, start = [], None
    for number, text in block.lines:
        if not pending and MARK.search(text) and text.strip().startswith("#"):
            kind = parse_marker(text, f"{block.path}:{number}")
            if kind[0] != "skip":
                sys.exit(f"doc-test: {block.path}:{number}: s/// annotates a command, not a block")
            block.skip = kind[1]
            continue
        if not pending and (not text.strip() or text.strip().startswith("#")):
            continue
        if not pending:
            start = number
        pending.append(text)
        joined = "\n".join(pending)
        if complete(joined):
            cmd = Command(start, joined)
            for t in pending:
                kind = parse_marker(t, f"{block.path}:{number}") if MARK.search(t) else None
                if kind and kind[0] == "skip":
                    cmd.skip = kind[1]
                elif kind:
                    cmd.subst = kind[1:]
            block.commands.append(cmd)
            pending = []
    if pending:
        sys.exit(f"doc-test: {where}: the block ends inside a command (line {start})")


PRELUDE = r"""
set -m
exec 3>&2 >>"$DOC_TEST_LOG" 2>&1
if [ "$(id -u)" = 0 ] && ! command -v sudo >/dev/null; then sudo() { "$@"; }; fi
__doc_at() {  # file, block, block line, command line, command
  __doc_where="$1: block $2 (line $3), line $4"
  printf '%s\n' "$__doc_where" > "$DOC_TEST_STATE"
  local t=$(($(date +%s) - DOC_TEST_START))
  printf '\n==> [%d s] %s: %s\n' "$t" "$__doc_where" "$5"
  printf '  [%4d s] %s:%s  %s\n' "$t" "$1" "$4" "$(printf '%s' "$5" | head -n 1 | cut -c1-100)" >&3
}
__doc_check() {  # $? then PIPESTATUS of the command just run
  local status=$1 s i=0 n=$(($# - 1)); shift
  for s in "$@"; do
    i=$((i + 1))
    if [ "$s" != 0 ] && ! { [ "$s" = 141 ] && [ "$i" -lt "$n" ]; }; then status=$s; break; fi
  done
  if [ "$status" != 0 ]; then
    printf 'doc-test: FAILED (exit %s) at %s\n' "$status" "$__doc_where"
    printf 'FAILED\n' >> "$DOC_TEST_STATE"
    exit 1
  fi
}
__doc_end_block() {  # background jobs left by a block are ended (with their process groups)
  local pid
  for pid in $(jobs -p); do kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null; done
  wait 2>/dev/null
  return 0
}
"""


def script_of(blocks, root_ok):
    out = [PRELUDE]
    for block in blocks:
        if block.skip:
            continue
        for cmd in block.commands:
            text = cmd.text
            if cmd.skip:
                continue
            if cmd.subst:
                old, new, _ = cmd.subst
                text = "\n".join(MARK.sub("", t).rstrip() for t in text.split("\n"))
                if old not in text:
                    sys.exit(f"doc-test: {block.path}:{cmd.line}: s/{old}/.../ does not occur in the command")
                text = text.replace(old, new)
            if text.lstrip().startswith("sudo ") and not root_ok:
                out.append(f"printf '  %s:%s  not run (needs root; sudo -n failed)\\n' "
                           f"{shlex.quote(block.path)} {cmd.line} >&3")
                continue
            out.append("__doc_at " + " ".join(shlex.quote(str(x)) for x in
                       (block.path, block.number, block.line, cmd.line, text)))
            out.append(text)
            out.append('__doc_check "$?" "${PIPESTATUS[@]}"')
            if re.search(r"(^|[^&])&\s*(#.*)?$", text.split("\n")[-1]):
                out.append("sleep 1")
        out.append("__doc_end_block")
    return "\n".join(out) + "\n"


def session_pids(sid):
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid and int(entry) != sid:
                    pids.append(int(entry))
            except (ProcessLookupError, PermissionError):
                pass
    return pids


def end_session(proc):
    """Ends the file's bash and every process it started (all in its session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = session_pids(proc.pid)
        if proc.poll() is None:
            pids.append(proc.pid)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(2)
    proc.wait()


def prepare_tree(tree):
    """The scratch copy: this checkout's files, and nothing else but the build caches.

    A file whose content is unchanged keeps its scratch copy (and its mtime, so cargo does not
    rebuild); a changed or new one is written anew (mtime now, so cargo does rebuild: copying
    the checkout's mtimes could leave a build started before an edit looking up to date).
    Everything else (results, outputs, files deleted from the checkout) is removed.
    """
    os.makedirs(tree, exist_ok=True)
    keep = {os.path.join(tree, k) for k in KEEP}
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    listed = {f for f in listed if f and os.path.lexists(os.path.join(ROOT, f))}
    for d, dirs, names in os.walk(tree, topdown=True):
        dirs[:] = [x for x in dirs if os.path.join(d, x) not in keep]
        for name in names + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            p = os.path.join(d, name)
            if os.path.relpath(p, tree) not in listed:
                os.unlink(p)
    for d, dirs, names in os.walk(tree, topdown=False):  # directories left empty
        if d != tree and d not in keep and not any(k.startswith(d + "/") for k in keep):
            try:
                os.rmdir(d)
            except OSError:
                pass
    for rel in sorted(listed):
        src, dst = os.path.join(ROOT, rel), os.path.join(tree, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):
            if os.path.islink(dst) and os.readlink(dst) == os.readlink(src):
                continue
            if os.path.lexists(dst):
                os.unlink(dst)
            os.symlink(os.readlink(src), dst)
            continue
        if os.path.isfile(dst) and not os.path.islink(dst):
            with open(src, "rb") as a, open(dst, "rb") as b:
                same = a.read() == b.read()
            if same and os.stat(src).st_mode == os.stat(dst).st_mode:
                continue
        if os.path.lexists(dst):
            os.unlink(dst)
        shutil.copy(src, dst)
    peers = os.path.join(tree, ".peers")
    if os.path.isdir(os.path.join(ROOT, ".peers")) and not os.path.lexists(peers):
        os.symlink(os.path.join(ROOT, ".peers"), peers)  # the interop peers that test.sh installed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="Markdown files (default: README.md, docs/*.md)")
    ap.add_argument("--list", action="store_true", help="print the commands and annotations only")
    ap.add_argument("--keep-going", action="store_true", help="run the other files after a failure")
    ap.add_argument("--timeout-min", type=float, default=60, help="time limit of each file, minutes")
    args = ap.parse_args()
    files = args.files or ["README.md"] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    files = [os.path.join(ROOT, f) if not os.path.isabs(f) else f for f in files]

    parsed, errors = [], []
    for f in files:
        blocks, errs = blocks_of(f)
        parsed.append((f, blocks))
        errors += errs
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)
    if args.list:
        for f, blocks in parsed:
            for b in blocks:
                print(f"== {b.path}: block {b.number} (line {b.line})" + (f"  SKIPPED ({b.skip})" if b.skip else ""))
                for c in b.commands:
                    note = f"  [skip: {c.skip}]" if c.skip else (f"  [s/{c.subst[0]}/{c.subst[1]}/: {c.subst[2]}]" if c.subst else "")
                    print(f"  {c.line}: {c.text.splitlines()[0]}{note}")
        return

    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    work = os.path.join(target, "doc-test")
    tree = os.path.join(work, "tree")
    log = os.path.join(work, "log.txt")
    started = time.time()
    print(f"doc-test: scratch copy {tree}; output in {log}", flush=True)
    os.makedirs(work, exist_ok=True)
    lock = open(os.path.join(work, "lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("doc-test: another run holds target/doc-test/lock; waiting for it", flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    open(log, "w").close()
    env = {k: v for k, v in os.environ.items() if k not in ("CARGO_TARGET_DIR", "VIRTUAL_ENV")}
    env["PATH"] = os.path.join(tree, "target", "release") + os.pathsep + env.get("PATH", "")
    env["DOC_TEST_LOG"] = log
    env["DOC_TEST_START"] = str(int(started))
    root_ok = os.geteuid() == 0 or subprocess.run("sudo -n true", shell=True, capture_output=True).returncode == 0
    private_tmp = os.geteuid() == 0 and subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         "mount -t tmpfs doc-test-tmp /tmp"], capture_output=True).returncode == 0
    if not private_tmp:
        print("doc-test: not root (or no unshare): the files share this machine's /tmp", flush=True)
    failed = []
    for f, blocks in parsed:
        rel = os.path.relpath(f, ROOT)
        skipped = [b for b in blocks if b.skip]
        n = sum(len(b.commands) for b in blocks if not b.skip)
        print(f"doc-test: {rel}: {n} commands in {len(blocks) - len(skipped)} blocks"
              + (f" ({len(skipped)} blocks skipped as annotated)" if skipped else ""), flush=True)
        if not n:
            continue
        prepare_tree(tree)
        state = os.path.join(work, "state")
        open(state, "w").close()
        env["DOC_TEST_STATE"] = state
        script = os.path.join(work, "script.sh")
        with open(script, "w") as s:
            s.write(script_of(blocks, root_ok))
        argv = ["bash", script]
        if private_tmp:
            # A private, empty /tmp for this file, as on a fresh machine (the docs write fixed
            # paths such as /tmp/xc-sim, which a second run would find full).
            # A checkout under /tmp (a CI runner's, or `git clone . /tmp/x`) stays visible: the
            # tmpfs is mounted aside, the checkout bound into it at its path, then moved to /tmp.
            argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", PRIVATE_TMP,
                    "sh", ROOT] + argv
        proc = subprocess.Popen(argv, cwd=tree, env=env, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            proc.wait(timeout=args.timeout_min * 60)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        end_session(proc)
        where = open(state).read().split("\n")
        if timed_out or proc.returncode != 0:
            reason = f"timed out after {args.timeout_min:g} min" if timed_out else f"exit {proc.returncode}"
            print(f"\ndoc-test: FAILED: {where[0] or rel} ({reason}); the end of its output:", file=sys.stderr)
            with open(log, errors="replace") as lf:
                tail = lf.read().split("\n")[-40:]
            print("\n".join("    " + t for t in tail), file=sys.stderr)
            failed.append(rel)
            if not args.keep_going:
                break
    wall = time.time() - started
    if failed:
        print(f"doc-test: {len(failed)} file(s) failed: {', '.join(failed)} ({wall:.0f} s)", file=sys.stderr)
        sys.exit(1)
    print(f"doc-test: every command of {len(parsed)} files ran ({wall:.0f} s)")


if __name__ == "__main__":
    main()
