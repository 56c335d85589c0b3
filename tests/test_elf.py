"""hrxarray._elf: the identity and exported functions of an ELF64 file, read with struct (issue 24, item 8).

The doctor checks a bundle's libraries with it, without loading them; readelf (where installed) is
the independent reference for what a shared object exports.
"""

import os
import shutil
import subprocess
import tempfile

import pytest
from elf_builder import shared_object, write_shared_object
from hypothesis import given
from hypothesis import strategies as st


def _readelf_exports(path):
    """The exported functions readelf lists: defined, global/weak/unique, default/protected, FUNC/IFUNC."""
    out = subprocess.run(["readelf", "--dyn-syms", "--wide", str(path)], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[0].endswith(":") and parts[0][:-1].isdigit():
            kind, bind, vis, ndx, name = parts[3:8]
            if (ndx != "UND" and bind in ("GLOBAL", "WEAK", "UNIQUE") and vis in ("DEFAULT", "PROTECTED")
                    and kind in ("FUNC", "IFUNC")):
                names.add(name.split("@")[0])
    return names


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) is not installed")
def test_reader_agrees_with_readelf(tmp_path):
    from hrxarray import _core, _elf

    built = write_shared_object(tmp_path / "lib.so", ["a", "b_c"], undefined=["malloc"], hidden=["h"])
    assert _elf.read_elf(built).exports == _readelf_exports(built) == {"a", "b_c"}
    # A real shared object, linked by a real linker: this package's extension.
    info = _elf.read_elf(_core.__file__)
    assert info.elf_type == _elf.ET_DYN and len(info.exports) > 10
    assert info.exports == _readelf_exports(_core.__file__)


@pytest.mark.parametrize("mangle, reason", [
    (lambda b: b"", "the file is empty"),
    (lambda b: b"MZ\x90\x00" + b[4:], "not an ELF file (it starts with b'MZ\\x90\\x00')"),
    (lambda b: b[:40], "truncated: 40 bytes, shorter than an ELF64 header (64)"),
    (lambda b: b[:4] + b"\x01" + b[5:], "a 32-bit ELF (ELFCLASS32); the bundle's libraries are 64-bit (ELFCLASS64)"),
    (lambda b: b[:5] + b"\x02" + b[6:], "a big-endian ELF; the hosts HRX runs on are little-endian"),
    (lambda b: b[:-70], "truncated: the section header table"),
    (lambda b: b[:0x28] + b"\0" * 8 + b[0x30:], "it has no section header table"),
])
def test_reasons(tmp_path, mangle, reason):
    from hrxarray import _elf

    path = tmp_path / "lib.so"
    path.write_bytes(mangle(shared_object(["amdf_query_api"])))
    with pytest.raises(_elf.ElfError) as info:
        _elf.read_elf(path)
    assert str(info.value).startswith(reason)


@given(edits=st.lists(st.tuples(st.integers(0, 700), st.integers(0, 255)), max_size=6),
       cut=st.none() | st.integers(0, 700))
def test_a_damaged_file_is_read_or_refused_with_elf_error(edits, cut):
    from hrxarray import _elf

    data = bytearray(shared_object(["amdf_query_api", "x"], undefined=["y"]))
    for at, byte in edits:
        if at < len(data):
            data[at] = byte
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "lib.so")
        with open(path, "wb") as f:
            f.write(bytes(data[:cut]))
        try:
            info = _elf.read_elf(path)
        except _elf.ElfError as e:
            assert str(e)
        else:
            assert isinstance(info.exports, frozenset) and all(isinstance(n, str) for n in info.exports)


def test_type_and_machine_are_read_as_written(tmp_path):
    from hrxarray import _elf

    for machine, elf_type, names in ((183, 2, ("AArch64", "ET_EXEC (an executable)")),
                                     (62, 3, ("x86-64", "ET_DYN (a shared object)")),
                                     (40, 1, ("ARM", "ET_REL (an object file)"))):
        info = _elf.read_elf(write_shared_object(tmp_path / "lib.so", ["f"], machine=machine, elf_type=elf_type))
        assert (info.machine, info.elf_type) == (machine, elf_type)
        assert (info.machine_name, info.type_name) == names
        assert info.has_dynsym and info.exports == {"f"}
