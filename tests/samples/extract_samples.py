#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Every code sample of README.md and of the public headers compiles: this
# script extracts them, writes translation units around them and compiles
# them with the compiler it is given (ctest: samples_gxx, samples_clangxx;
# tests/samples/CMakeLists.txt).
#
# The samples: README.md's ```cpp (or ```c++) blocks, and the Doxygen
# `/// @code ... /// @endcode` blocks of every header under
# channel/include, async/include, asio/include and profiler/include
# (indented ones inside classes too). Each is one of three kinds, decided
# by these rules, in this order:
#
#   program    it contains `int main(`: a complete program. Compiled alone
#              (no prelude), linked against the library (--library,
#              -pthread) and run: it must exit 0.
#   namespace  one of its lines at the sample's own indentation (its
#              column 0) starts a function definition, `Type name(...) {`
#              (a line starting with if/for/while/switch/do/else/return
#              never does): it defines functions, so it goes at namespace
#              scope, in a namespace of its own (sample_<n>).
#   body       anything else: statements, placed in a block of its own in
#              the body of `void sample(LEANCHAN_SAMPLE_CONTEXT)`, whose
#              parameters are the context names (tx, rx, event, ...:
#              sample_prelude.h); a body with co_await is the body of an
#              `asio::awaitable<void>` if it names asio::, of a `Task`
#              (leanchan::async::Task<>) otherwise.
#
# Every fragment (namespace and body samples) goes into one translation
# unit, after sample_prelude.h (the public headers, `Event`, and the
# helpers the samples call, declared); it is compiled with -fsyntax-only.
# An `#include` line of a fragment moves to the top of that unit. Samples
# that use Asio (they name asio::) are left out with --asio none.
#
# #line directives map each sample's lines to the file and line they come
# from, so a compiler's message names the header or README.md and the
# sample's line; on failure the script also lists the samples hit.
#
#   extract_samples.py --source-dir . --work-dir build/samples --cxx g++ \
#       --library build/channel/libleanchan.a -I channel/include ... \
#       --asio standalone -- -std=c++20 -Wall -Wextra -Werror
#   extract_samples.py --source-dir . --list   # the samples and their kinds
import argparse
import pathlib
import re
import subprocess
import sys
import time

HEADER_DIRS = ["channel/include", "async/include", "asio/include", "profiler/include"]
README = "README.md"

CODE_BEGIN = re.compile(r"^\s*///\s*@code(\{[^}]*\})?\s*$")
CODE_END = re.compile(r"^\s*///\s*@endcode\s*$")
COMMENT = re.compile(r"^\s*/// ?(.*)$")
FENCE_BEGIN = re.compile(r"^```(cpp|c\+\+)\s*$")
FENCE_END = re.compile(r"^```\s*$")
INCLUDE = re.compile(r"^\s*#\s*include\b")
MAIN = re.compile(r"\bint\s+main\s*\(")
# `Type name(...) {` at the sample's column 0, not a statement.
FUNCTION_DEFINITION = re.compile(
    r"^(?!(?:if|for|while|switch|do|else|return|co_return|co_await)\b)"
    r"[A-Za-z_][\w:<>, ]*[\s&*]+[A-Za-z_]\w*\s*\(.*\)\s*(?:const\s*)?(?:noexcept\s*)?"
    r"\{\s*(?://.*)?$")


class Sample:
    def __init__(self, path, first_line, lines):
        self.path = path  # pathlib.Path, absolute
        self.first_line = first_line  # the line number of lines[0]
        self.lines = dedent(lines)
        self.index = 0
        text = "\n".join(self.lines)
        if MAIN.search(text):
            self.kind = "program"
        elif any(FUNCTION_DEFINITION.match(line) for line in self.lines):
            self.kind = "namespace"
        else:
            self.kind = "body"
        self.uses_asio = "asio::" in text
        self.coroutine = "co_await" in text

    @property
    def last_line(self):
        return self.first_line + len(self.lines) - 1

    def where(self, root):
        try:
            name = self.path.relative_to(root)
        except ValueError:
            name = self.path
        return f"{name}:{self.first_line}"

    def describe(self):
        if self.kind == "body" and self.coroutine:
            return "body of asio::awaitable<void>" if self.uses_asio else "body of Task"
        return {"program": "program, run", "namespace": "fragment at namespace scope",
                "body": "fragment in a function body"}[self.kind]


def dedent(lines):
    indents = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:].rstrip() for line in lines]


def header_samples(path):
    samples, block, first = [], None, 0
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if block is None:
            if CODE_BEGIN.match(line):
                block, first = [], number + 1
            continue
        if CODE_END.match(line):
            samples.append(Sample(path, first, block))
            block = None
            continue
        comment = COMMENT.match(line)
        if comment is None:
            sys.exit(f"{path}:{number}: @code block without @endcode")
        block.append(comment.group(1))
    if block is not None:
        sys.exit(f"{path}:{first - 1}: @code block without @endcode")
    return samples


def readme_samples(path):
    samples, block, first = [], None, 0
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if block is None:
            if FENCE_BEGIN.match(line):
                block, first = [], number + 1
            continue
        if FENCE_END.match(line):
            samples.append(Sample(path, first, block))
            block = None
            continue
        block.append(line)
    if block is not None:
        sys.exit(f"{path}:{first - 1}: ```cpp block without its closing fence")
    return samples


def find_samples(root):
    samples = readme_samples(root / README)
    for directory in HEADER_DIRS:
        for header in sorted((root / directory).rglob("*.h")):
            samples.extend(header_samples(header))
    for index, sample in enumerate(samples, start=1):
        sample.index = index
    return samples


class Unit:
    """A generated source file whose lines carry #line directives."""

    def __init__(self, path):
        self.path = path
        self.lines = []

    def add(self, *lines):
        self.lines.extend(lines)

    def add_sample(self, sample, lines):
        self.lines.append(f'#line {sample.first_line} "{sample.path}"')
        self.lines.extend(lines)
        # Back to this file: this directive is its line len + 1, the next len + 2.
        self.lines.append(f'#line {len(self.lines) + 2} "{self.path}"')

    def write(self):
        self.path.write_text("\n".join(self.lines) + "\n")


def fragments_unit(path, fragments, root):
    unit = Unit(path)
    unit.add("// Generated by tests/samples/extract_samples.py: the fragments of README.md",
             "// and the public headers. Do not edit.", '#include "sample_prelude.h"')
    for sample in fragments:
        for line in sample.lines:
            if INCLUDE.match(line):
                unit.add(line.strip() + f"  // {sample.where(root)}")
    for sample in fragments:
        lines = ["" if INCLUDE.match(line) else line for line in sample.lines]
        unit.add("", f"// {sample.where(root)}: {sample.describe()}",
                 f"namespace sample_{sample.index} {{")
        if sample.kind == "namespace":
            unit.add_sample(sample, lines)
        else:
            result = "void"
            if sample.coroutine:
                result = "asio::awaitable<void>" if sample.uses_asio else "Task"
            unit.add(f"{result} sample(LEANCHAN_SAMPLE_CONTEXT) {{", "{")
            unit.add_sample(sample, lines)
            unit.add("}", "}")
        unit.add(f"}}  // namespace sample_{sample.index}")
    unit.write()


def program_unit(path, sample):
    unit = Unit(path)
    unit.add(f"// Generated by tests/samples/extract_samples.py: the program of "
             f"{sample.path.name}. Do not edit.")
    unit.add_sample(sample, sample.lines)
    unit.write()


def run(command, timeout):
    started = time.monotonic()
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout)
        code, output = done.returncode, done.stdout
    except subprocess.TimeoutExpired as expired:
        output = expired.stdout or ""
        if isinstance(output, bytes):
            output = output.decode(errors="replace")
        code = None
    return code, output, time.monotonic() - started


def samples_named(output, samples):
    """The samples that the compiler's messages point into."""
    hit = []
    for sample in samples:
        pattern = re.compile(re.escape(str(sample.path)) + r":(\d+)")
        lines = {int(m.group(1)) for m in pattern.finditer(output)}
        if any(sample.first_line <= line <= sample.last_line for line in lines):
            hit.append(sample)
    return hit


def report_failure(what, output, samples, root):
    print(output.rstrip())
    hit = samples_named(output, samples)
    for sample in hit:
        print(f"FAILED: the sample at {sample.where(root)} ({sample.describe()}): {what}")
    if not hit:
        print(f"FAILED: {what} (no sample's line named: see the messages above)")


def main():
    parser = argparse.ArgumentParser(
        description="Compiles the code samples of README.md and the public headers.")
    parser.add_argument("--source-dir", type=pathlib.Path, required=True)
    parser.add_argument("--work-dir", type=pathlib.Path)
    parser.add_argument("--cxx", help="the compiler")
    parser.add_argument("--library", action="append", default=[],
                        help="a library the programs link (repeatable)")
    parser.add_argument("-I", dest="includes", action="append", default=[],
                        type=pathlib.Path, help="an include directory (repeatable)")
    parser.add_argument("--asio", choices=["none", "standalone", "boost"], default="none",
                        help="compile the Asio samples, on this Asio")
    parser.add_argument("--run-timeout", type=float, default=60.0)
    parser.add_argument("--list", action="store_true", help="list the samples and stop")
    parser.add_argument("flags", nargs="*", help="compiler flags (after --)")
    args = parser.parse_args()
    root = args.source_dir.resolve()

    samples = find_samples(root)
    if not samples:
        sys.exit("extract_samples: no sample found (has the layout changed?)")
    if args.list:
        for sample in samples:
            print(f"{sample.index:2}  {sample.where(root):48}  {sample.describe()}")
        return 0
    if args.cxx is None or args.work_dir is None:
        parser.error("--cxx and --work-dir are needed to compile")

    skipped = [s for s in samples if s.uses_asio and args.asio == "none"]
    chosen = [s for s in samples if s not in skipped]
    fragments = [s for s in chosen if s.kind != "program"]
    programs = [s for s in chosen if s.kind == "program"]

    work = args.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    prelude_dir = pathlib.Path(__file__).resolve().parent
    includes = [f"-I{prelude_dir}"] + [f"-I{d.resolve()}" for d in args.includes]
    flags = list(args.flags)
    if args.asio != "none":
        flags.append("-DLEANCHAN_SAMPLES_ASIO=1")
    if args.asio == "boost":
        flags.append("-DLEANCHAN_ASIO_USE_BOOST")
    failures = 0

    started = time.monotonic()
    source = work / "fragments.cc"
    fragments_unit(source, fragments, root)
    code, output, seconds = run([args.cxx, *flags, *includes, "-fsyntax-only", str(source)],
                                timeout=300)
    if code != 0:
        report_failure(f"does not compile ({args.cxx}; {source})", output, fragments, root)
        failures += 1
    else:
        print(f"{len(fragments)} fragments compile ({seconds:.1f} s)")

    for sample in programs:
        stem = re.sub(r"\W", "_", f"{sample.where(root)}")
        source, binary = work / f"{stem}.cc", work / stem
        program_unit(source, sample)
        rpaths = sorted({f"-Wl,-rpath,{pathlib.Path(lib).resolve().parent}"
                         for lib in args.library})
        command = [args.cxx, *flags, *includes[1:], str(source), "-o", str(binary),
                   *args.library, "-pthread", *rpaths]
        code, output, seconds = run(command, timeout=300)
        if code != 0:
            report_failure(f"does not build ({args.cxx}; {source})", output, [sample], root)
            failures += 1
            continue
        code, output, run_seconds = run([str(binary)], timeout=args.run_timeout)
        if code != 0:
            print(output.rstrip())
            status = "timed out" if code is None else f"exited with {code}"
            print(f"FAILED: the sample at {sample.where(root)} (program): {status}")
            failures += 1
            continue
        print(f"{sample.where(root)}: program builds ({seconds:.1f} s) and runs "
              f"({run_seconds:.1f} s)")

    for sample in skipped:
        print(f"{sample.where(root)}: left out (Asio not found)")
    print(f"{len(samples)} samples ({len(programs)} programs, "
          f"{sum(s.kind == 'namespace' for s in fragments)} at namespace scope, "
          f"{sum(s.kind == 'body' for s in fragments)} in function bodies, "
          f"{len(skipped)} left out) with {args.cxx}: "
          f"{'FAILED' if failures else 'ok'} in {time.monotonic() - started:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
