"""``python -m hrxarray doctor``: what hrxarray runs on here, and why.

The report answers the questions behind most bug reports: which backend is in
use, which devices it offers, which CPU kernel path the emulated devices take,
and whether an HRX native bundle and the kernel drivers are present (with the
reason the native backend is not used).

Note [Checking a bundle without loading it]: a folder that holds files of the
right names is not yet a bundle. The doctor checks what it can without loading
native code (loading runs a library's constructors, and a broken library is
what it is diagnosing): each library is an ELF64 shared object for this host's
machine (hrxarray._elf reads the headers), it exports the entry points hrx-rs
resolves from it (hrx-rs's native/amdf.h, native/amdf/bridge.h, native/loomc.h),
and the files' SHA-256 digests match the bundle's manifest (``manifest.json`` in
the directory, or the file ``HRX_BUNDLE_MANIFEST`` names; hrx-rs's src/bundle.rs
and docs/SETUP.md). HRX's documentation does not spell manifest.json's layout;
the doctor reads the layout bundle.json pins, a ``"files"`` object mapping flat
file names to hex SHA-256 digests, and says so when a manifest has none. Every check is a row of the report (file, check,
status, reason); a bundle is "complete" only when all its libraries are found
and no check failed, and "invalid" when they are found but a check failed.
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata
import json
import os
import platform
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import _elf

__all__ = ["collect", "format_report", "main"]

#: The libraries of an HRX native bundle, and the variable that overrides each.
BUNDLE_LIBRARIES: dict[str, str] = {
    "libamdf.so": "HRX_AMDF_LIBRARY",
    "libhrx_fabric.so": "HRX_FABRIC_LIBRARY",
    "libloomc.so": "HRX_LOOM_LIBRARY",
}

#: The functions each library must export: those hrx-rs resolves from it by name.
#: libamdf exports only its bootstrap; every other libamdf entry point hrx-rs uses
#: is reached through the table amdf_query_api returns. Of the Loom C API only
#: the names HRX's documentation spells out in full are required (it abbreviates
#: e.g. "loomc_context_create / _release"), so no guessed name fails a good bundle.
REQUIRED_SYMBOLS: dict[str, tuple[str, ...]] = {
    "libamdf.so": ("amdf_query_api",),
    "libhrx_fabric.so": (
        "hrx_fabric_error",
        "hrx_fabric_gpu_image_open", "hrx_fabric_gpu_image_close", "hrx_fabric_gpu_argument_info",
        "hrx_fabric_gpu_global_info", "hrx_fabric_gpu_image_load", "hrx_fabric_gpu_dispatch",
        "hrx_fabric_xdna_open", "hrx_fabric_xdna_close", "hrx_fabric_xdna_command_copy",
        "hrx_fabric_xdna_command_replace", "hrx_fabric_xdna_submit", "hrx_fabric_xdna_wait",
    ),
    "libloomc.so": (
        "loomc_allocator_system", "loomc_status_format", "loomc_status_free",
        "loomc_target_environment_create_amdgpu", "loomc_context_create",
        "loomc_target_profile_create_amdgpu", "loomc_linker_create", "loomc_compiler_create",
        "loomc_pass_program_create_from_target_pipeline", "loomc_workspace_create", "loomc_source_create",
        "loomc_link_index_builder_create", "loomc_link_module", "loomc_result_succeeded",
        "loomc_result_diagnostic_count", "loomc_result_release", "loomc_module_release",
    ),
}

#: The ELF machine of this host's libraries, by platform.machine().
_HOST_MACHINES = {"x86_64": _elf.EM_X86_64, "amd64": _elf.EM_X86_64,
                  "aarch64": _elf.EM_AARCH64, "arm64": _elf.EM_AARCH64}

MANIFEST = "manifest.json"

# This build ships only the emulated provider. When a native provider is
# compiled in, this becomes a query of _core.
_NATIVE_PROVIDER_COMPILED = False

_KFD = "/dev/kfd"
_ACCEL_GLOB = "/dev/accel/accel*"

# The devices' kernel paths ("amx_bf16" never is one: see _kernel_path).
_KERNEL_PATH_NAMES = {
    "avx512_bf16": "AVX512-BF16",
    "avx512": "AVX-512",
    "avx2": "AVX2",
    "portable": "portable",
}

_CPU_FLAGS = (
    "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16",
    "amx_tile", "amx_bf16", "os_avx512", "amx_permitted",
)


# --- collection --------------------------------------------------------------


def collect(*, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Gather the doctor's facts into a JSON-serialisable dict.

    ``environ`` replaces ``os.environ`` for the bundle search (tests use it);
    device files are always read from the real ``/dev``.
    """
    import numpy

    import hrxarray
    from hrxarray import _core

    env = os.environ if environ is None else environ
    cpu = dict(_core.cpu_features())
    families = dict(_core.numerics.kernel_paths())
    bundle = _bundle_search(env)
    kernel_devices = _kernel_devices()
    info: dict[str, Any] = {
        "hrxarray": _version(hrxarray),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "numpy": numpy.__version__,
        "backend": "emulated",
        "native_provider_compiled": _NATIVE_PROVIDER_COMPILED,
        "devices": _devices(hrxarray),
        "cpu": cpu,
        "kernels": _kernel_path(cpu, families),
        "bundle": bundle,
        "kernel_devices": kernel_devices,
        "dask_worker": _dask_binding(env),
    }
    info["reasons"] = _reasons(bundle, kernel_devices)
    info["backend_reason"] = _reason_sentence(bundle, info["reasons"])
    return info


def _dask_binding(env: Mapping[str, str]) -> dict[str, Any]:
    """The device this process is bound to as a Dask worker: HRX_VISIBLE_DEVICES and hrxarray.dask's plugin.

    Run on the workers (``client.run(hrxarray._doctor.collect)``) it reports
    each worker's binding; never imports Dask.
    """
    cluster = sys.modules.get("hrxarray.dask._cluster")
    binding = getattr(cluster, "binding", None)
    return {"visible_devices": env.get("HRX_VISIBLE_DEVICES"), "binding": dict(binding) if binding else None}


def _version(hrxarray: Any) -> str:
    version = getattr(hrxarray, "__version__", None)
    if version:
        return str(version)
    try:
        return importlib.metadata.version("hrxarray")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _devices(hrxarray: Any) -> list[dict[str, Any]]:
    # A doctor that dies on the thing it should diagnose is useless: a failure
    # becomes an entry of the report instead.
    devices: list[dict[str, Any]] = []
    try:
        rt = hrxarray.default_runtime()
    except Exception as exc:  # noqa: BLE001
        return [{"kind": "runtime", "error": f"{type(exc).__name__}: {exc}"}]
    for kind in ("gpu", "npu"):
        try:
            dev = getattr(rt, kind)()
            entry: dict[str, Any] = {
                "kind": kind,
                "index": int(dev.index),
                "target": str(dev.target),
                "backend": str(dev.backend),
            }
            if kind == "npu":
                entry["columns"] = int(dev.columns)
        except Exception as exc:  # noqa: BLE001
            entry = {"kind": kind, "error": f"{type(exc).__name__}: {exc}"}
        devices.append(entry)
    return devices


def _kernel_path(cpu: Mapping[str, Any], families: Mapping[str, str]) -> dict[str, Any]:
    cpu_path = str(cpu.get("kernel_path", "portable"))
    # AMX's TDPBF16PS cannot compute the devices' documented accumulation order,
    # so the devices' kernels stop at AVX512-BF16 and give the same bits on every
    # host; the tiles serve only the opt-in tile order.
    path = "avx512_bf16" if cpu_path == "amx_bf16" else cpu_path
    tile = families.get("matmul_tile")
    notes = []
    if cpu_path == "amx_bf16" and tile == "amx_bf16":
        notes.append("the AMX tiles serve only hrxarray.numerics.matmul(order='tile'); "
                     "the devices' matmuls keep the pair order, as on every host")
    elif cpu_path == "amx_bf16":
        notes.append("the AMX tiles are not used, not even by hrxarray.numerics.matmul(order='tile'): "
                     "HRXARRAY_AMX=0 is set, or the tiles did not reproduce the tile model's results "
                     "at first use")
    if tile == "amx_model":
        notes.append("HRXARRAY_AMX=model: hrxarray.numerics.matmul(order='tile') runs its large "
                     "products on the software model of the AMX tile unit (slow; for tests)")
    if cpu.get("amx_tile") and cpu.get("amx_bf16") and not cpu.get("amx_permitted"):
        notes.append("the CPU has AMX, but Linux did not grant this process "
                     "AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM)")
    if cpu.get("avx512f") and not cpu.get("os_avx512"):
        notes.append("the CPU has AVX-512, but the operating system does not "
                     "save AVX-512 register state")
    return {"path": path, "name": _KERNEL_PATH_NAMES.get(path, path), "families": dict(families),
            "notes": notes}


def _families_line(families: Mapping[str, str]) -> str:
    """One report line naming each kernel family's path, the tile-order matmul last."""
    parts = [f"{name} {p}" for name, p in families.items() if name != "matmul_tile"]
    line = "  Kernel families: " + ", ".join(parts)
    if "matmul_tile" in families:
        line += f"; matmul(order='tile') {families['matmul_tile']}"
    return line


def _cache_root(env: Mapping[str, str]) -> Path:
    # The XDG spec says to ignore a relative XDG_CACHE_HOME.
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "hrx"
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".cache" / "hrx"


def _natural_key(name: str) -> list[Any]:
    # "0.10.0" sorts after "0.9.1"; numbers compare before text.
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in re.split(r"(\d+)", name) if part]


def _check_dir(source: str, path: Path) -> dict[str, Any]:
    exists = path.is_dir()
    found = [lib for lib in BUNDLE_LIBRARIES if exists and (path / lib).is_file()]
    return {
        "source": source,
        "path": str(path),
        "exists": exists,
        "found": found,
        "missing": [lib for lib in BUNDLE_LIBRARIES if lib not in found],
    }


def _bundle_search(env: Mapping[str, str]) -> dict[str, Any]:
    locations = []
    runtime_dir = env.get("HRX_RUNTIME_DIR", "")
    if runtime_dir:
        locations.append(_check_dir("HRX_RUNTIME_DIR", Path(runtime_dir)))
    cache = _cache_root(env)
    locations.append(_check_dir("cache", cache))
    if cache.is_dir():
        # Newest version folder first, so it wins over older ones.
        subdirs = sorted((p for p in cache.iterdir() if p.is_dir()),
                         key=lambda p: _natural_key(p.name), reverse=True)
        locations += [_check_dir("cache subdirectory", p) for p in subdirs]

    overrides = []
    libraries: dict[str, dict[str, Any]] = {}
    for lib, var in BUNDLE_LIBRARIES.items():
        value = env.get(var, "")
        if value:
            exists = Path(value).is_file()
            overrides.append({"variable": var, "library": lib, "path": value,
                              "exists": exists})
            libraries[lib] = {"path": value, "source": var, "found": exists}

    # Libraries not overridden must come from one directory: mixing versions
    # of the bundle's libraries is not a supported configuration.
    needed = [lib for lib in BUNDLE_LIBRARIES if lib not in libraries]
    chosen = None
    if needed:
        complete = [loc for loc in locations if all(lib in loc["found"] for lib in needed)]
        partial = [loc for loc in locations if any(lib in loc["found"] for lib in needed)]
        if complete:
            chosen = complete[0]
        elif partial:
            chosen = max(partial, key=lambda loc: sum(lib in loc["found"] for lib in needed))
        for lib in needed:
            found = chosen is not None and lib in chosen["found"]
            libraries[lib] = {
                "path": str(Path(chosen["path"]) / lib) if chosen else None,
                "source": chosen["source"] if chosen else None,
                "found": found,
            }

    libraries = {lib: libraries[lib] for lib in BUNDLE_LIBRARIES}
    missing = [lib for lib, entry in libraries.items() if not entry["found"]]
    checks: list[dict[str, str]] = []
    for lib, entry in libraries.items():
        if entry["found"]:
            checks += _library_checks(lib, Path(entry["path"]))
    if chosen is not None or env.get("HRX_BUNDLE_MANIFEST"):
        checks += _manifest_checks(env, chosen, libraries)
    failed = [c for c in checks if c["status"] == "failed"]
    if not missing:
        status = "invalid" if failed else "complete"
    elif chosen is None and not overrides:
        status = "not_found"
    else:
        status = "incomplete"
    return {
        "status": status,
        "directory": chosen["path"] if chosen else None,
        "libraries": libraries,
        "missing": missing,
        "locations": locations,
        "overrides": overrides,
        "cache": str(cache),
        "checks": checks,
        "environment": {var: env.get(var) for var in ("HRX_OFFLINE", "HRX_BUNDLE_MANIFEST")},
    }


def _check(file: Path | str, check: str, status: str, reason: str) -> dict[str, str]:
    return {"file": str(file), "check": check, "status": status, "reason": reason}


def _host_machine() -> int | None:
    return _HOST_MACHINES.get(platform.machine().lower())


def _library_checks(lib: str, path: Path) -> list[dict[str, str]]:
    """The ELF and exported-symbol checks of one bundle library (Note [Checking a bundle without loading it])."""
    try:
        info = _elf.read_elf(path)
    except OSError as exc:
        return [_check(path, "elf", "failed", f"cannot be read ({exc.strerror or exc})")]
    except _elf.ElfError as exc:
        return [_check(path, "elf", "failed", str(exc))]
    host = _host_machine()
    problems = []
    if info.elf_type != _elf.ET_DYN:
        problems.append(f"it is {info.type_name}, not ET_DYN (a shared object)")
    if host is None:
        problems.append(f"this host ({platform.machine()}) is neither x86-64 nor AArch64, "
                        "the machines HRX bundles are built for")
    elif info.machine != host:
        problems.append(f"it is built for {info.machine_name}, but this host is "
                        f"{_elf.MACHINE_NAMES[host]}")
    checks = [_check(path, "elf", "failed", "; ".join(problems)) if problems else
              _check(path, "elf", "ok", f"ELF64 shared object for {info.machine_name}")]
    need = REQUIRED_SYMBOLS[lib]
    if not info.has_dynsym:
        checks.append(_check(path, "symbols", "failed", "it has no .dynsym section, so it exports nothing"))
    else:
        absent = [name for name in need if name not in info.exports]
        if absent:
            checks.append(_check(path, "symbols", "failed",
                                 f"it does not export {len(absent)} of the {len(need)} functions HRX "
                                 f"resolves from {lib}: " + ", ".join(absent)))
        else:
            checks.append(_check(path, "symbols", "ok", f"exports the {len(need)} functions HRX resolves "
                                 f"from {lib}"))
    return checks


def _sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _manifest_files(path: Path) -> dict[str, str]:
    """The manifest's map of flat file names to SHA-256 digests; ValueError with the reason when it has none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"it is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"it is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not files:
        raise ValueError('it has no "files" object mapping file names to SHA-256 digests')
    for name, digest in files.items():
        # Installation rejects paths: every entry is a file of the bundle directory itself.
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            raise ValueError(f"its entry {name!r} is not a flat file name")
        if not (isinstance(digest, str) and re.fullmatch(r"[0-9a-fA-F]{64}", digest)):
            raise ValueError(f"its digest for {name!r} ({digest!r}) is not 64 hex digits of SHA-256")
    return {name: digest.lower() for name, digest in files.items()}


def _manifest_checks(env: Mapping[str, str], chosen: Mapping[str, Any] | None,
                     libraries: Mapping[str, Mapping[str, Any]]) -> list[dict[str, str]]:
    """The manifest's own check and one digest check per file it lists."""
    override = env.get("HRX_BUNDLE_MANIFEST", "")
    directory = Path(chosen["path"]) if chosen else None
    if override:
        manifest = Path(override)
        if not manifest.is_file():
            return [_check(manifest, "manifest", "failed",
                           "HRX_BUNDLE_MANIFEST names this file, which does not exist")]
    elif directory is None:
        return []
    else:
        manifest = directory / MANIFEST
        if not manifest.is_file():
            if chosen["source"] == "HRX_RUNTIME_DIR":
                return [_check(manifest, "manifest", "skipped", "absent: HRX uses HRX_RUNTIME_DIR as-is and "
                               "verifies it only when it holds a manifest.json, so no digest was checked")]
            return [_check(manifest, "manifest", "failed", "absent: HRX verifies a cached bundle file by "
                           "file against its manifest.json, so this one would not be used")]
    try:
        files = _manifest_files(manifest)
    except OSError as exc:
        return [_check(manifest, "manifest", "failed", f"cannot be read ({exc.strerror or exc})")]
    except ValueError as exc:
        return [_check(manifest, "manifest", "failed", str(exc))]
    base = directory if directory is not None else manifest.parent
    checks = [_check(manifest, "manifest", "ok", f"lists {len(files)} file(s) of {base}")]
    for name, want in files.items():
        path = base / name
        if not path.is_file():
            checks.append(_check(path, "digest", "failed", f"listed in {manifest} but absent"))
            continue
        try:
            got = _sha256(path)
        except OSError as exc:
            checks.append(_check(path, "digest", "failed", f"cannot be read ({exc.strerror or exc})"))
            continue
        if got != want:
            checks.append(_check(path, "digest", "failed", f"its SHA-256 is {got}, but {manifest} lists {want}"))
        else:
            checks.append(_check(path, "digest", "ok", "SHA-256 matches the manifest"))
    # An override bypasses the bundle's integrity checks (as in HRX), so only the directory's libraries
    # must be listed.
    for lib, entry in libraries.items():
        if entry["found"] and entry["source"] not in BUNDLE_LIBRARIES.values() and lib not in files:
            checks.append(_check(base / lib, "digest", "failed", f"not listed in {manifest}"))
    return checks


def _kernel_devices() -> dict[str, Any]:
    accel = sorted(glob.glob(_ACCEL_GLOB))
    return {
        "gpu": {"path": _KFD, "present": os.path.exists(_KFD)},
        "npu": {"path": _ACCEL_GLOB, "present": bool(accel), "found": accel},
    }


def _reasons(bundle: Mapping[str, Any], kernel_devices: Mapping[str, Any]) -> list[dict[str, str]]:
    reasons = []
    if not _NATIVE_PROVIDER_COMPILED:
        reasons.append({"code": "no_native_provider",
                        "message": "this build of hrxarray has no native provider compiled in"})
    if bundle["status"] == "not_found":
        reasons.append({"code": "no_bundle", "message": "no HRX native bundle was found"})
    elif bundle["status"] == "incomplete":
        parts = []
        for lib in bundle["missing"]:
            entry = bundle["libraries"][lib]
            where = entry["path"]
            if entry["source"] in BUNDLE_LIBRARIES.values():
                parts.append(f"{lib} ({entry['source']}={where} does not exist)")
            else:
                parts.append(f"{lib} (not in {Path(where).parent})" if where else lib)
        reasons.append({"code": "bundle_incomplete",
                        "message": "the HRX native bundle is incomplete: missing "
                                   + ", ".join(parts)})
    failed = [c for c in bundle["checks"] if c["status"] == "failed"]
    if failed:
        where = bundle["directory"] or "the override paths"
        reasons.append({"code": "bundle_invalid",
                        "message": f"the HRX native bundle ({where}) failed {len(failed)} check(s): "
                                   + "; ".join(f"{c['file']}: {c['reason']}" for c in failed)})
    # HRX asks only whether HRX_OFFLINE is set, so any value (even empty or "0") counts.
    offline = bundle["environment"]["HRX_OFFLINE"]
    if (bundle["status"] != "complete" and offline is not None
            and not any(loc["source"] == "HRX_RUNTIME_DIR" for loc in bundle["locations"])):
        reasons.append({"code": "offline",
                        "message": f"HRX_OFFLINE is set ({offline!r}), so HRX would not download its pinned "
                                   "bundle and stops with an error: run `hrx prepare` or set HRX_RUNTIME_DIR"})
    if not kernel_devices["gpu"]["present"]:
        reasons.append({"code": "no_kfd",
                        "message": f"there is no {_KFD} (the amdgpu KFD driver for the GPU)"})
    if not kernel_devices["npu"]["present"]:
        reasons.append({"code": "no_accel",
                        "message": f"there is no {_ACCEL_GLOB} (the amdxdna driver for the NPU)"})
    return reasons


def _reason_sentence(bundle: Mapping[str, Any], reasons: Sequence[Mapping[str, str]]) -> str:
    head = [r["message"] for r in reasons if r["code"] == "no_native_provider"]
    rest = [r["message"] for r in reasons if r["code"] != "no_native_provider"]
    if head:
        text = f"The emulated backend is in use because {head[0]}."
    else:
        text = "The emulated backend is in use."
    if rest:
        text += " Besides that, the native backend could not run here: " + "; ".join(rest) + "."
    if bundle["status"] == "complete":
        where = bundle["directory"] or "the override paths"
        text += f" An HRX native bundle was found ({where}), but this build cannot use it."
    return text


# --- formatting --------------------------------------------------------------


def _yes(flag: Any) -> str:
    return "yes" if flag else "no"


def format_report(info: Mapping[str, Any]) -> str:
    """Render the dict from :func:`collect` as a plain-text report."""
    lines = [f"hrxarray {info['hrxarray']} doctor", ""]
    lines += [
        f"  Python     {info['python']} ({info['python_executable']})",
        f"  NumPy      {info['numpy']}",
        f"  Platform   {info['platform']}",
        f"  Backend    {info['backend']}",
        "",
        "Devices",
    ]
    for dev in info["devices"]:
        if "error" in dev:
            lines.append(f"  {dev['kind']:<6} unavailable: {dev['error']}")
            continue
        extra = f"  columns={dev['columns']}" if "columns" in dev else ""
        lines.append(f"  {dev['kind']} {dev['index']:<3} {dev['target']:<30}"
                     f" backend={dev['backend']}{extra}")

    cpu, kernels = info["cpu"], info["kernels"]
    lines += ["", f"CPU ({cpu.get('arch', '?')}): {cpu.get('brand') or 'unknown model'}"]
    lines.append("  " + "  ".join(f"{flag}={_yes(cpu.get(flag))}" for flag in _CPU_FLAGS))
    lines.append(f"  The CPU kernels will use the {kernels['name']} path.")
    lines.append(_families_line(kernels["families"]))
    lines += [f"  Note: {note}." for note in kernels["notes"]]

    bundle = info["bundle"]
    status = {"complete": "found", "invalid": "found, but it fails its checks", "incomplete": "incomplete",
              "not_found": "not found"}[bundle["status"]]
    lines += ["", f"HRX native bundle: {status}"]
    for var in BUNDLE_LIBRARIES.values():
        set_ = [o for o in bundle["overrides"] if o["variable"] == var]
        if set_:
            state = "exists" if set_[0]["exists"] else "MISSING"
            lines.append(f"  {var:<20} {set_[0]['path']} ({state})")
        else:
            lines.append(f"  {var:<20} (not set)")
    if not any(loc["source"] == "HRX_RUNTIME_DIR" for loc in bundle["locations"]):
        lines.append(f"  {'HRX_RUNTIME_DIR':<20} (not set)")
    for loc in bundle["locations"]:
        if not loc["exists"]:
            state = "does not exist"
        elif not loc["found"]:
            state = "no bundle libraries"
        else:
            state = "found " + ", ".join(loc["found"])
            if loc["missing"]:
                state += "; missing " + ", ".join(loc["missing"])
        lines.append(f"  {loc['source']:<20} {loc['path']}: {state}")
    if bundle["missing"]:
        lines.append("  Missing: " + ", ".join(bundle["missing"]))
    for var, value in bundle["environment"].items():
        lines.append(f"  {var:<20} " + ("(not set)" if value is None else repr(value)))
    if bundle["checks"]:
        lines.append("  Checks (made without loading native code):")
        for c in bundle["checks"]:
            lines.append(f"    {c['status'].upper() if c['status'] == 'failed' else c['status']:<8}"
                         f" {c['check']:<9} {c['file']}: {c['reason']}")
    if bundle["status"] != "complete" and bundle["environment"]["HRX_OFFLINE"] is None and not any(
            loc["source"] == "HRX_RUNTIME_DIR" for loc in bundle["locations"]):
        lines.append("  HRX itself would download its pinned bundle here (HRX_OFFLINE is not set); "
                     "hrxarray downloads nothing.")
    if not info["native_provider_compiled"]:
        lines.append("  This build of hrxarray has no native provider, so even a bundle that passes every "
                     "check is not used.")

    kd = info["kernel_devices"]
    lines += ["", "Kernel drivers"]
    lines.append(f"  GPU  {kd['gpu']['path']:<20} {'present' if kd['gpu']['present'] else 'missing'}")
    npu_state = ", ".join(kd["npu"]["found"]) if kd["npu"]["present"] else "missing"
    lines.append(f"  NPU  {kd['npu']['path']:<20} {npu_state}")

    worker = info["dask_worker"]
    visible = worker["visible_devices"]
    lines += ["", "Dask worker binding"]
    if worker["binding"]:
        b = worker["binding"]
        lines.append(f"  {b['worker'] or 'this process'}: {b['device']} as {b['placement']} "
                     f"(resources {b['resources'] or 'none'}, {b['backend']})")
    else:
        lines.append("  not a bound worker (HRX_VISIBLE_DEVICES " + (f"= {visible!r}" if visible is not None
                                                                     else "not set") + ")")

    lines += ["", info["backend_reason"]]
    return "\n".join(lines) + "\n"


# --- command line ------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the doctor: print the report (or JSON with ``--json``); return the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m hrxarray doctor",
        description="Report the backend in use, its devices, the CPU kernel path and "
                    "whether an HRX native bundle was found.")
    parser.add_argument("--json", action="store_true", help="print the facts as JSON")
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    except SystemExit as exc:  # argparse exits on --help and on usage errors
        return exc.code if isinstance(exc.code, int) else 2
    info = collect()
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        print(format_report(info), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
