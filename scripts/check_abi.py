#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks what a shared libleanchan exports against the list in docs/abi.md.

    scripts/check_abi.py prefix/lib/libleanchan.so       # reads it with nm -D -C
    scripts/check_abi.py --symbols nm.txt                # nm -D -C --defined-only output
    scripts/check_abi.py LIB --list other.md             # another page's list

The list lies in the page between `<!-- abi list: begin -->` and
`<!-- abi list: end -->`, one name a line (blank lines and lines starting
with `#` aside): a function's qualified name without its parameters
(`leanchan::internal::BlockList::open_block`), or a public class's name
followed by `::*`, which stands for the class itself (its vtable and type
information) and every member. Every exported name in namespace leanchan
must match an entry, and every entry must match an exported name: the
list is exact. The standard library's instances over leanchan types
(`std::...<leanchan::...>`) are not leanchan's names and are skipped.

Exit 0: the export matches the list; 1: it does not (the differences are
printed); 2: bad input (no library or nm, no list, a marker without its
pair).
"""
import argparse
import os
import re
import subprocess
import sys

MARKERS = ("<!-- abi list: begin -->", "<!-- abi list: end -->")
# What nm -C writes before a name that is not a function's.
PREFIXES = ("vtable for ", "construction vtable for ", "typeinfo for ", "typeinfo name for ",
            "VTT for ", "non-virtual thunk to ", "virtual thunk to ",
            "covariant return thunk to ", "guard variable for ", "TLS wrapper function for ",
            "TLS init function for ", "reference temporary for ")
# Namespaces whose names are the standard library's (its instances over
# leanchan types are not leanchan's names).
STANDARD = ("std::", "__gnu_cxx::", "__cxxabiv1::")
ANONYMOUS = "(anonymous namespace)"
OPERATOR_CHARS = set("<>=!+-*/%^&|~,[]")


class InputError(Exception):
    pass


def read_list(path):
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as error:
        raise InputError(f"{path}: {error.strerror}")
    begin, end = text.find(MARKERS[0]), text.find(MARKERS[1])
    if begin < 0 or end < 0 or end < begin:
        raise InputError(f"{path}: no `{MARKERS[0]}` ... `{MARKERS[1]}` section")
    entries = []
    for line in text[begin + len(MARKERS[0]):end].splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("```"):
            continue
        entries.append(line)
    if not entries:
        raise InputError(f"{path}: the abi list is empty")
    return entries


def qualified_name(symbol):
    """The qualified name of a demangled symbol, as the list writes it:
    without the text nm puts before some names, a function template's
    return type, template arguments, the parameters and what follows them
    (`bool leanchan::X<int>::f<char>(int) const` is `leanchan::X::f`). An
    operator keeps its symbol or type (`leanchan::Foo::operator<`,
    `leanchan::Foo::operator bool`); a construction vtable, its first class."""
    for prefix in PREFIXES:
        if symbol.startswith(prefix):
            symbol = symbol[len(prefix):]
            break
    out = []
    depth = 0
    conversion = False  # inside `operator T`, whose spaces belong to the name
    i = 0
    while i < len(symbol):
        if depth == 0 and symbol.startswith(ANONYMOUS, i):
            out.append(ANONYMOUS)
            i += len(ANONYMOUS)
            continue
        if depth == 0 and symbol.startswith("operator", i) and (
                i == 0 or symbol[i - 2:i] == "::" or symbol[i - 1] == " "):
            j = i + len("operator")
            if symbol.startswith("()", j):
                j += 2
            elif symbol.startswith(" new", j) or symbol.startswith(" delete", j):
                j += 4 if symbol.startswith(" new", j) else 7
                if symbol.startswith("[]", j):
                    j += 2
            elif j < len(symbol) and symbol[j] in OPERATOR_CHARS:
                while j < len(symbol) and symbol[j] in OPERATOR_CHARS:
                    j += 1
            else:
                conversion = True
            out.append(symbol[i:j])
            i = j
            continue
        c = symbol[i]
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif depth > 0:
            pass
        elif c == "(":
            break
        elif c == " " and not conversion:
            out = []  # what came before was a return type
        elif symbol.startswith("-in-", i):
            break  # construction vtable for X-in-Y
        else:
            out.append(c)
        i += 1
    return "".join(out)


def exported_names(nm_lines):
    """The exported names in namespace leanchan, from nm -D -C --defined-only
    lines. A symbol that mentions leanchan outside the standard library's
    namespaces but whose name is not in namespace leanchan (another
    library's template over leanchan types) counts as its whole text, so
    that it cannot pass unlisted."""
    names = set()
    for line in nm_lines:
        match = re.match(r"^\s*([0-9a-fA-F]*)\s+(\S)\s+(.*)$", line.rstrip("\n"))
        if match is None or match.group(2) in ("U", "w", "v"):
            continue  # not a symbol line, undefined, or not a definition
        symbol = match.group(3)
        name = qualified_name(symbol)
        if name.startswith("leanchan::"):
            names.add(name)
        elif "leanchan::" in symbol and not name.startswith(STANDARD):
            names.add(symbol)
    return names


def matches(entry, name):
    if entry.endswith("::*"):
        cls = entry[:-3]
        return name == cls or name.startswith(cls + "::")
    return name == entry


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", nargs="?", help="the shared library to read with nm")
    parser.add_argument("--symbols", help="nm -D -C --defined-only output instead of a library")
    parser.add_argument("--list", default=None, help="the page with the list (docs/abi.md)")
    args = parser.parse_args(argv)
    try:
        if (args.library is None) == (args.symbols is None):
            raise InputError("give a library or --symbols FILE (one of them)")
        list_path = args.list
        if list_path is None:
            list_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs",
                                     "abi.md")
        entries = read_list(list_path)
        if args.symbols is not None:
            try:
                lines = open(args.symbols, encoding="utf-8").read().splitlines()
            except OSError as error:
                raise InputError(f"{args.symbols}: {error.strerror}")
        else:
            try:
                run = subprocess.run(["nm", "-D", "-C", "--defined-only", args.library],
                                     capture_output=True, text=True)
            except OSError as error:
                raise InputError(f"nm: {error.strerror} (Debian: binutils)")
            if run.returncode != 0:
                raise InputError(f"nm {args.library}: {run.stderr.strip()}")
            lines = run.stdout.splitlines()
    except InputError as error:
        print(f"check_abi: {error}", file=sys.stderr)
        return 2
    names = exported_names(lines)
    unlisted = sorted(n for n in names if not any(matches(e, n) for e in entries))
    unexported = [e for e in entries if not any(matches(e, n) for n in names)]
    internal = sorted(n for n in names if n.startswith("leanchan::internal::"))
    for name in unlisted:
        print(f"check_abi: exported but not in the list: {name}")
    for entry in unexported:
        print(f"check_abi: in the list but not exported: {entry}")
    if unlisted or unexported:
        print(f"check_abi: the export differs from the list ({len(unlisted)} unlisted, "
              f"{len(unexported)} not exported)")
        return 1
    print(f"check_abi: ok, {len(names)} names in namespace leanchan, {len(internal)} of them "
          f"in leanchan::internal")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
