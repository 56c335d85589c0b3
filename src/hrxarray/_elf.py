"""An ELF64 file's identity and exported dynamic symbols, read with ``struct`` alone.

The doctor checks an HRX native bundle's libraries without loading them: loading
runs their constructors, and a wrong or damaged library is what it is asked to
diagnose. So this reads the few structures it needs (the ELF header, the section
header table, ``.dynsym`` and its string table) by seeking, never the whole file,
and bounds every offset by the file's size: a truncated or hostile file gives
:class:`ElfError` with the reason, never an exception from ``struct``.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["ElfError", "ElfInfo", "read_elf", "ET_DYN", "EM_X86_64", "EM_AARCH64", "MACHINE_NAMES",
           "TYPE_NAMES"]

ET_DYN = 3
EM_X86_64 = 62
EM_AARCH64 = 183

#: e_machine values a report may meet, by name.
MACHINE_NAMES = {0: "no machine", 3: "i386", 8: "MIPS", 20: "PowerPC", 21: "PowerPC64", 40: "ARM",
                 EM_X86_64: "x86-64", EM_AARCH64: "AArch64", 243: "RISC-V", 258: "LoongArch"}
#: e_type values, by name.
TYPE_NAMES = {0: "ET_NONE", 1: "ET_REL (an object file)", 2: "ET_EXEC (an executable)",
              ET_DYN: "ET_DYN (a shared object)", 4: "ET_CORE (a core dump)"}

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_SHT_STRTAB, _SHT_DYNSYM = 3, 11
_STB_GLOBAL, _STB_WEAK, _STB_GNU_UNIQUE = 1, 2, 10
_STT_FUNC, _STT_GNU_IFUNC = 2, 10
_STV_DEFAULT, _STV_PROTECTED = 0, 3
# A library's .dynstr is kilobytes to a few megabytes; more is no library.
_MAX_TABLE = 256 << 20
_MAX_SECTIONS = 1 << 20


class ElfError(ValueError):
    """The file is not an ELF64 little-endian object this reader can list; the message is the reason."""


@dataclass(frozen=True)
class ElfInfo:
    """What the doctor checks of a library: its type, its machine and the functions it exports."""

    elf_type: int
    machine: int
    has_dynsym: bool
    exports: frozenset[str]

    @property
    def machine_name(self) -> str:
        """e_machine by name (``x86-64``, ``AArch64``), or its number."""
        return MACHINE_NAMES.get(self.machine, f"machine {self.machine}")

    @property
    def type_name(self) -> str:
        """e_type by name."""
        return TYPE_NAMES.get(self.elf_type, f"type {self.elf_type}")


def _read(f: BinaryIO, size: int, offset: int, length: int, what: str) -> bytes:
    if offset < 0 or length < 0 or offset + length > size:
        raise ElfError(f"truncated: the {what} (bytes {offset}..{offset + length}) runs past the end of "
                       f"the file ({size} bytes)")
    f.seek(offset)
    return f.read(length)


def _section_headers(f: BinaryIO, size: int, shoff: int, shentsize: int, shnum: int) -> list[tuple]:
    if shoff == 0:
        raise ElfError("it has no section header table, so its dynamic symbols cannot be listed")
    if shentsize != _SHDR.size:
        raise ElfError(f"its section headers are {shentsize} bytes, not {_SHDR.size}")
    if shnum == 0:
        # Extended numbering: more than 0xff00 sections keep the count in section 0's sh_size.
        shnum = _SHDR.unpack(_read(f, size, shoff, _SHDR.size, "section header table"))[5]
        if shnum > _MAX_SECTIONS:
            raise ElfError(f"its section header table claims {shnum} sections")
    table = _read(f, size, shoff, shnum * _SHDR.size, "section header table")
    return [_SHDR.unpack_from(table, i * _SHDR.size) for i in range(shnum)]


def _exports(f: BinaryIO, size: int, sections: list[tuple]) -> tuple[bool, frozenset[str]]:
    dynsym = [s for s in sections if s[1] == _SHT_DYNSYM]
    if not dynsym:
        return False, frozenset()
    _, _, _, _, offset, length, link, _, _, entsize = dynsym[0]
    if entsize != _SYM.size:
        raise ElfError(f"its .dynsym entries are {entsize} bytes, not {_SYM.size}")
    if not 0 < link < len(sections) or sections[link][1] != _SHT_STRTAB:
        raise ElfError(f".dynsym names section {link} as its string table, which is no string table")
    str_offset, str_length = sections[link][4], sections[link][5]
    if length > _MAX_TABLE or str_length > _MAX_TABLE:
        raise ElfError(f".dynsym ({length} bytes) or its string table ({str_length} bytes) is implausibly large")
    symbols = _read(f, size, offset, length, ".dynsym section")
    strings = _read(f, size, str_offset, str_length, ".dynstr section")
    names = set()
    for i in range(1, length // _SYM.size):  # entry 0 is the reserved null symbol
        name, info, other, shndx, _, _ = _SYM.unpack_from(symbols, i * _SYM.size)
        # Exported entry points: defined here (not SHN_UNDEF), global, weak or unique binding,
        # visible from outside (default or protected), and code (functions or ifuncs).
        if (shndx != 0 and info >> 4 in (_STB_GLOBAL, _STB_WEAK, _STB_GNU_UNIQUE)
                and other & 3 in (_STV_DEFAULT, _STV_PROTECTED) and info & 0xF in (_STT_FUNC, _STT_GNU_IFUNC)):
            end = strings.find(b"\0", name)
            if name >= len(strings) or end < 0:
                raise ElfError(f".dynsym entry {i} names offset {name}, outside its string table")
            names.add(strings[name:end].decode("utf-8", "replace"))
    return True, frozenset(names)


def read_elf(path: str | os.PathLike[str]) -> ElfInfo:
    """The ELF type, machine and exported functions of the file at ``path``; ElfError with the reason if unreadable as ELF64."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise ElfError("the file is empty")
        head = f.read(_EHDR.size)
        if not head.startswith(b"\x7fELF"):
            raise ElfError(f"not an ELF file (it starts with {head[:4]!r})")
        if len(head) < _EHDR.size:
            raise ElfError(f"truncated: {size} bytes, shorter than an ELF64 header ({_EHDR.size})")
        ident = head[:16]
        if ident[4] != 2:
            bits = {1: "a 32-bit ELF (ELFCLASS32)"}.get(ident[4], f"an ELF of class {ident[4]}")
            raise ElfError(f"{bits}; the bundle's libraries are 64-bit (ELFCLASS64)")
        if ident[5] != 1:
            raise ElfError("a big-endian ELF; the hosts HRX runs on are little-endian")
        (_, e_type, machine, _, _, _, shoff, _, _, _, _, shentsize, shnum, _) = _EHDR.unpack(head)
        sections = _section_headers(f, size, shoff, shentsize, shnum)
        has_dynsym, exports = _exports(f, size, sections)
    return ElfInfo(e_type, machine, has_dynsym, exports)
