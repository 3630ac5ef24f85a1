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
import subprocess
import sys

MARKERS = ("<!-- abi list: begin -->", "<!-- abi list: end -->")
# What nm -C writes before a name that is not a function's.
PREFIXES = ("vtable for ", "typeinfo for ", "typeinfo name for ", "VTT for ",
            "non-virtual thunk to ", "virtual thunk to ", "guard variable for ")


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
    """The name of a demangled symbol, without its parameters or return type."""
    for prefix in PREFIXES:
        if symbol.startswith(prefix):
            symbol = symbol[len(prefix):]
            break
    depth = 0
    for i, c in enumerate(symbol):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0 and not symbol.startswith("operator", i - 8 if i >= 8 else 0):
            return symbol[:i]
    return symbol


def exported_names(nm_lines):
    """The exported names in namespace leanchan, from nm -D -C --defined-only lines."""
    names = set()
    for line in nm_lines:
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) < 3 or parts[1] in ("U", "w", "v"):
            continue  # undefined, or not a definition
        name = qualified_name(parts[2])
        if name.startswith("leanchan::"):
            names.add(name)
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
