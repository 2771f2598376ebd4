"""The seccomp program, run by a small classic-BPF interpreter: what it allows and denies."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from client.skills._seccomp import DENIED, seccomp_filter

ALLOW, KILL, EPERM = 0x7FFF0000, 0x80000000, 0x00050001
X86_64, I386 = 0xC000003E, 0x40000003


def _run(program: bytes, nr: int, arch: int) -> int:
    """Execute the filter on ``seccomp_data`` (nr, arch): the kernel's semantics for the
    instructions the program uses (load word, jeq, jge, return constant)."""
    data = struct.pack("=iI", nr, arch) + bytes(56)
    insns = [struct.unpack_from("=HBBI", program, at) for at in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x15:
            pc += jt if acc == k else jf
        elif code == 0x35:
            pc += jt if acc >= k else jf
        elif code == 0x06:
            return int(k)
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")
        pc += 1


PROGRAM = seccomp_filter()


def test_every_denied_call_is_refused_with_eperm() -> None:
    assert PROGRAM is not None and len(PROGRAM) // 8 < 4096  # the kernel's BPF_MAXINSNS
    for name, nr in DENIED.items():
        assert _run(PROGRAM, nr, X86_64) == EPERM, name


@given(st.integers(min_value=0, max_value=1023))
def test_a_call_is_allowed_exactly_when_it_is_not_denied(nr: int) -> None:
    assert PROGRAM is not None
    expected = EPERM if nr in DENIED.values() else ALLOW
    assert _run(PROGRAM, nr, X86_64) == expected


@given(st.integers(min_value=0, max_value=1023))
def test_the_x32_abi_and_other_architectures_never_pass(nr: int) -> None:
    assert PROGRAM is not None
    assert _run(PROGRAM, nr | 0x40000000, X86_64) == EPERM
    assert _run(PROGRAM, nr, I386) == KILL
