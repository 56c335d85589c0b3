"""Minimal ELF64 shared objects for the doctor's tests, built byte by byte (no compiler needed).

A file holds an ELF header, a .text section of `ret` instructions, .dynsym and .dynstr, and a
section-name table: what readelf --dyn-syms and hrxarray._elf read. Nothing here is loadable
(no program headers); the doctor never loads a bundle library, so it need not be.
"""

import platform
import struct

EM_X86_64, EM_AARCH64 = 62, 183
HOST_MACHINE = {"x86_64": EM_X86_64, "amd64": EM_X86_64, "aarch64": EM_AARCH64,
                "arm64": EM_AARCH64}.get(platform.machine().lower(), EM_X86_64)
OTHER_MACHINE = EM_AARCH64 if HOST_MACHINE == EM_X86_64 else EM_X86_64

_STT_FUNC, _STB_GLOBAL, _STV_HIDDEN = 2, 1, 2


def _align(data, n=8):
    return data + b"\0" * (-len(data) % n)


def shared_object(exports, *, machine=HOST_MACHINE, elf_type=3, undefined=(), hidden=(), elf_class=2):
    """The bytes of an ELF shared object defining `exports` (global functions), with `undefined` imports
    and `hidden` functions that are defined but not exported."""
    names = list(exports) + list(undefined) + list(hidden)
    dynstr, offsets = b"\0", {}
    for name in names:
        offsets[name] = len(dynstr)
        dynstr += name.encode() + b"\0"
    shstr, shname = b"\0", {}
    for name in (".text", ".dynsym", ".dynstr", ".shstrtab"):
        shname[name] = len(shstr)
        shstr += name.encode() + b"\0"

    text_off = 64
    text = b"\xc3" * 16
    sym_off = text_off + len(text)
    syms = b"\0" * 24
    for i, name in enumerate(names):
        shndx, other = (0, 0) if name in undefined else (1, _STV_HIDDEN if name in hidden else 0)
        value = 0 if shndx == 0 else text_off + i % 16
        syms += struct.pack("<IBBHQQ", offsets[name], (_STB_GLOBAL << 4) | _STT_FUNC, other, shndx, value, 1)
    str_off = sym_off + len(syms)
    shstr_off = str_off + len(dynstr)
    body = _align(b"\0" * text_off + text + syms + dynstr + shstr)
    sh_off = len(body)

    def shdr(name, kind, flags, off, size, link=0, info=0, align=1, entsize=0):
        return struct.pack("<IIQQQQIIQQ", shname.get(name, 0), kind, flags, off if flags else 0, off, size,
                           link, info, align, entsize)

    sections = (b"\0" * 64
                + shdr(".text", 1, 6, text_off, len(text), align=16)
                + shdr(".dynsym", 11, 2, sym_off, len(syms), link=3, info=1, align=8, entsize=24)
                + shdr(".dynstr", 3, 2, str_off, len(dynstr))
                + shdr(".shstrtab", 3, 0, shstr_off, len(shstr)))
    ident = b"\x7fELF" + bytes([elf_class, 1, 1, 0]) + b"\0" * 8
    header = struct.pack("<16sHHIQQQIHHHHHH", ident, elf_type, machine, 1, 0, 0, sh_off, 0, 64, 0, 0, 64, 5, 4)
    return header + body[64:] + sections


def write_shared_object(path, exports, **kwargs):
    """Write `shared_object(exports, **kwargs)` to `path` and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(shared_object(exports, **kwargs))
    return path
