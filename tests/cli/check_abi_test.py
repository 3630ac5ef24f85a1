#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scripts/check_abi.py on made-up nm output: an export that matches its
list passes; a name exported but not listed, or listed but not exported,
fails with the name printed; the standard library's instances are
skipped; a page without the list is bad input."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "check_abi.py")

PAGE = """# ABI
Some prose.
<!-- abi list: begin -->
```
# the public classes
leanchan::Executor::*
# the entry points
leanchan::internal::BlockList::open_block
leanchan::internal::futex_wake
leanchan::to_string
```
<!-- abi list: end -->
"""

NM = [
    "0000000000012340 T leanchan::internal::BlockList::open_block(unsigned long, "
    "leanchan::internal::BlockLayout const&)",
    "0000000000012400 T leanchan::internal::futex_wake(leanchan::internal::Atomic<unsigned int>&, int)",
    "0000000000012500 T leanchan::to_string(leanchan::SendStatus)",
    "0000000000012600 T leanchan::to_string(leanchan::RecvStatus)",
    "0000000000050000 V vtable for leanchan::Executor",
    "0000000000050100 V typeinfo for leanchan::Executor",
    "0000000000012700 T leanchan::Executor::~Executor()",
    "0000000000012800 W std::vector<leanchan::ReadyEntry, std::allocator<leanchan::ReadyEntry> >::reserve(unsigned long)",
    "0000000000012900 T __to_chars_10_impl(char*, unsigned int, unsigned int)",
    "                 U leanchan::internal::BlockList::extend_locked(unsigned int)",
    "                 w __gmon_start__",
    "0000000000012a00 u __to_chars_10_impl<unsigned int>::__digits",
]


def run(tmp, nm_lines, page=PAGE):
    symbols = os.path.join(tmp, "nm.txt")
    with open(symbols, "w", encoding="utf-8") as f:
        f.write("\n".join(nm_lines) + "\n")
    listing = os.path.join(tmp, "abi.md")
    with open(listing, "w", encoding="utf-8") as f:
        f.write(page)
    done = subprocess.run([sys.executable, SCRIPT, "--symbols", symbols, "--list", listing],
                          capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def expect(condition, what, output):
    if not condition:
        print(f"check_abi_test: FAILED: {what}\n{output}")
        sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = run(tmp, NM)
        expect(rc == 0, "the matching export passes", out)
        # Five names: the class (its vtable and typeinfo), its destructor,
        # open_block, futex_wake and to_string (two overloads, one name).
        expect("5 names in namespace leanchan, 2 of them in leanchan::internal" in out,
               "the counts are printed", out)

        extra = NM + ["0000000000013000 T leanchan::internal::BlockList::extend_locked(unsigned int)"]
        rc, out = run(tmp, extra)
        expect(rc == 1, "an unlisted internal name fails", out)
        expect("exported but not in the list: leanchan::internal::BlockList::extend_locked" in out,
               "the unlisted name is printed", out)

        missing = [line for line in NM if "futex_wake" not in line]
        rc, out = run(tmp, missing)
        expect(rc == 1, "a listed name that is not exported fails", out)
        expect("in the list but not exported: leanchan::internal::futex_wake" in out,
               "the missing name is printed", out)

        # Names nm writes with more around them: a function template's
        # return type and template arguments, an operator, a thread_local's
        # wrapper. Each is read as its name, and unlisted, fails.
        for symbol, name in [
                ("bool leanchan::internal::spin_then_sleep<leanchan::A>(int)",
                 "leanchan::internal::spin_then_sleep"),
                ("leanchan::internal::Cursor::operator<<(int)",
                 "leanchan::internal::Cursor::operator<<"),
                ("leanchan::internal::Cursor::operator bool() const",
                 "leanchan::internal::Cursor::operator bool"),
                ("TLS wrapper function for leanchan::internal::drain_depth",
                 "leanchan::internal::drain_depth"),
                ("leanchan::internal::(anonymous namespace)::helper(int)",
                 "leanchan::internal::(anonymous namespace)::helper"),
                ("asio::detail::op<leanchan::Receiver<int, 32ul> >::run()",
                 "asio::detail::op<leanchan::Receiver<int, 32ul> >::run()")]:
            rc, out = run(tmp, NM + ["0000000000014000 T " + symbol])
            expect(rc == 1 and f"exported but not in the list: {name}\n" in out,
                   f"`{symbol}` is read as `{name}` and fails unlisted", out)
        rc, out = run(tmp, NM + ["0000000000014000 T std::vector<leanchan::ReadyEntry, "
                                 "std::allocator<leanchan::ReadyEntry> >::~vector()"])
        expect(rc == 0, "the standard library's instances over leanchan types are skipped", out)

        other_class = NM + ["0000000000050200 V vtable for leanchan::ExecutorLike"]
        rc, out = run(tmp, other_class)
        expect(rc == 1 and "leanchan::ExecutorLike" in out,
               "a class entry covers its own members only", out)

        rc, out = run(tmp, NM, page="# ABI without a list\n")
        expect(rc == 2 and "no `<!-- abi list: begin -->`" in out, "no list is bad input", out)

        rc, out = run(tmp, NM, page=PAGE.replace("<!-- abi list: end -->", ""))
        expect(rc == 2, "a lone marker is bad input", out)
    print("check_abi_test: ok")


if __name__ == "__main__":
    main()
