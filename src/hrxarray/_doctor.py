"""``python -m hrxarray doctor``: what hrxarray runs on here, and why.

The report answers the questions behind most bug reports: which backend is in
use, which devices it offers, which CPU kernel path the emulated devices take,
and whether an HRX native bundle and the kernel drivers are present (with the
reason the native backend is not used).
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

__all__ = ["collect", "format_report", "main"]

#: The libraries of an HRX native bundle, and the variable that overrides each.
BUNDLE_LIBRARIES: dict[str, str] = {
    "libamdf.so": "HRX_AMDF_LIBRARY",
    "libhrx_fabric.so": "HRX_FABRIC_LIBRARY",
    "libloomc.so": "HRX_LOOM_LIBRARY",
}

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
    if not missing:
        status = "complete"
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
    }


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
    status = {"complete": "found", "incomplete": "incomplete",
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
