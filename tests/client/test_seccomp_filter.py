"""The seccomp program, run by a small classic-BPF interpreter: what it allows and denies."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from client.skills._seccomp import DENIED, DENIED_WHEN, seccomp_filter

ALLOW, KILL, EPERM = 0x7FFF0000, 0x80000000, 0x00050001
X86_64, I386 = 0xC000003E, 0x40000003
RULED = {rule.number: rule for rule in DENIED_WHEN.values()}
ARGS = st.lists(st.integers(min_value=0, max_value=2**64 - 1), min_size=6, max_size=6)


def _run(program: bytes, nr: int, arch: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """Execute the filter on ``seccomp_data`` (nr, arch, instruction pointer, args): the
    kernel's semantics for the instructions the program uses (load word, and, jeq, jge,
    return constant)."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *args)
    insns = [struct.unpack_from("=HBBI", program, at) for at in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x54:
            acc &= k
        elif code == 0x15:
            pc += jt if acc == k else jf
        elif code == 0x35:
            pc += jt if acc >= k else jf
        elif code == 0x06:
            return int(k)
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")
        pc += 1


def _expected(nr: int, args: list[int] | tuple[int, ...]) -> int:
    if nr in DENIED.values():
        return EPERM
    rule = RULED.get(nr)
    if rule is not None and (args[rule.arg] & 0xFFFFFFFF & rule.mask) in rule.values:
        return EPERM
    return ALLOW


PROGRAM = seccomp_filter()


def test_every_denied_call_is_refused_with_eperm() -> None:
    assert PROGRAM is not None and len(PROGRAM) // 8 < 4096  # the kernel's BPF_MAXINSNS
    for name, nr in DENIED.items():
        assert _run(PROGRAM, nr, X86_64) == EPERM, name


def test_each_argument_rule_denies_its_values_and_allows_the_rest() -> None:
    assert PROGRAM is not None
    for name, rule in DENIED_WHEN.items():
        for value in rule.values:
            args = [0] * 6
            args[rule.arg] = value | 0x10_0000_0000  # the high word is not the value
            assert _run(PROGRAM, rule.number, X86_64, tuple(args)) == EPERM, (name, value)
        assert _run(PROGRAM, rule.number, X86_64) == ALLOW, name


def test_a_shared_anonymous_mapping_is_denied_and_a_private_or_file_one_allowed() -> None:
    assert PROGRAM is not None
    shared, private, anonymous = 0x01, 0x02, 0x20

    def mmap(flags: int) -> int:
        return _run(PROGRAM, 9, X86_64, (0, 4096, 3, flags, 0, 0))

    assert mmap(shared | anonymous) == EPERM
    assert mmap(0x03 | anonymous | 0x100000) == EPERM  # MAP_SHARED_VALIDATE, other flags
    assert mmap(private | anonymous) == ALLOW
    assert mmap(shared) == ALLOW  # a file's pages: a tmpfs of a fixed size holds them


@given(st.integers(min_value=0, max_value=1023), ARGS)
def test_a_call_is_allowed_exactly_when_no_rule_denies_it(nr: int, args: list[int]) -> None:
    assert PROGRAM is not None
    assert _run(PROGRAM, nr, X86_64, tuple(args)) == _expected(nr, args)


@given(st.integers(min_value=0, max_value=1023))
def test_the_x32_abi_and_other_architectures_never_pass(nr: int) -> None:
    assert PROGRAM is not None
    assert _run(PROGRAM, nr | 0x40000000, X86_64) == EPERM
    assert _run(PROGRAM, nr, I386) == KILL
