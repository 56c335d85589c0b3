"""``python -m hrxarray doctor``: bundle search, the reason for the backend, CPU features, usage.

Every run is a subprocess with a controlled environment: HRX_* variables removed and HOME and
XDG_CACHE_HOME inside tmp_path, so the machine's own ~/.cache/hrx cannot leak in.
"""

import json
import os
import platform
import site
import subprocess
import sys

import numpy as np
import pytest

import hrxarray

LIBS = ("libamdf.so", "libhrx_fabric.so", "libloomc.so")


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRX_")}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env["HOME"] = str(home)
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg-cache")
    # Moving HOME would move the user site-packages; keep it where it was.
    env["PYTHONUSERBASE"] = site.getuserbase()
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _run(tmp_path, env, *args):
    return subprocess.run(
        [sys.executable, "-m", "hrxarray", *args],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )


def _doctor_json(tmp_path, env):
    r = _run(tmp_path, env, "doctor", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _doctor_text(tmp_path, env):
    r = _run(tmp_path, env, "doctor")
    assert r.returncode == 0, r.stderr
    return r.stdout


def _bundle(directory, libs=LIBS):
    directory.mkdir(parents=True, exist_ok=True)
    for lib in libs:
        (directory / lib).write_bytes(b"")
    return directory


def _codes(info):
    return [r["code"] for r in info["reasons"]]


def test01_no_bundle(tmp_path):
    env = _env(tmp_path)
    info = _doctor_json(tmp_path, env)
    bundle = info["bundle"]
    assert bundle["status"] == "not_found"
    assert bundle["missing"] == list(LIBS)
    assert bundle["cache"] == str(tmp_path / "xdg-cache" / "hrx")
    assert [loc["source"] for loc in bundle["locations"]] == ["cache"]
    assert bundle["locations"][0]["exists"] is False
    assert bundle["overrides"] == []
    assert _codes(info)[:2] == ["no_native_provider", "no_bundle"]
    assert "no native provider compiled in" in info["backend_reason"]
    assert "no HRX native bundle was found" in info["backend_reason"]
    text = _doctor_text(tmp_path, env)
    assert "HRX native bundle: not found" in text
    assert info["backend_reason"] in text


def test02_home_cache_used_without_xdg(tmp_path):
    env = _env(tmp_path)
    del env["XDG_CACHE_HOME"]
    cache = _bundle(tmp_path / "home" / ".cache" / "hrx")
    info = _doctor_json(tmp_path, env)
    assert info["bundle"]["status"] == "complete"
    assert info["bundle"]["directory"] == str(cache)


def test03_versions_backend_and_devices(tmp_path):
    info = _doctor_json(tmp_path, _env(tmp_path))
    assert info["hrxarray"] == hrxarray.__version__
    assert info["numpy"] == np.__version__
    assert info["python"] == platform.python_version()
    assert info["backend"] == "emulated"
    assert info["native_provider_compiled"] is False
    by_kind = {d["kind"]: d for d in info["devices"]}
    assert set(by_kind) == {"gpu", "npu"}
    assert by_kind["gpu"]["target"] == "gfx1151"
    assert by_kind["npu"]["target"] == "amd.xdna.strix_halo.17f0_11"
    assert by_kind["npu"]["columns"] == 8
    assert {d["backend"] for d in info["devices"]} == {"emulated"}


def test04_complete_bundle_in_runtime_dir(tmp_path):
    bundle_dir = _bundle(tmp_path / "bundle")
    env = _env(tmp_path, HRX_RUNTIME_DIR=bundle_dir)
    info = _doctor_json(tmp_path, env)
    bundle = info["bundle"]
    assert bundle["status"] == "complete"
    assert bundle["missing"] == []
    assert bundle["directory"] == str(bundle_dir)
    for lib in LIBS:
        assert bundle["libraries"][lib] == {
            "path": str(bundle_dir / lib), "source": "HRX_RUNTIME_DIR", "found": True}
    assert bundle["locations"][0] == {
        "source": "HRX_RUNTIME_DIR", "path": str(bundle_dir), "exists": True,
        "found": list(LIBS), "missing": []}
    codes = _codes(info)
    assert codes[0] == "no_native_provider"
    assert "no_bundle" not in codes and "bundle_incomplete" not in codes
    assert info["backend_reason"].startswith(
        "The emulated backend is in use because this build of hrxarray has no native "
        "provider compiled in.")
    assert str(bundle_dir) in info["backend_reason"]
    text = _doctor_text(tmp_path, env)
    assert "HRX native bundle: found" in text
    assert "no HRX native bundle" not in text


@pytest.mark.parametrize("absent", LIBS)
def test05_incomplete_bundle_names_missing_library(tmp_path, absent):
    present = [lib for lib in LIBS if lib != absent]
    bundle_dir = _bundle(tmp_path / "bundle", present)
    env = _env(tmp_path, HRX_RUNTIME_DIR=bundle_dir)
    info = _doctor_json(tmp_path, env)
    bundle = info["bundle"]
    assert bundle["status"] == "incomplete"
    assert bundle["missing"] == [absent]
    assert bundle["locations"][0]["missing"] == [absent]
    (reason,) = [r for r in info["reasons"] if r["code"] == "bundle_incomplete"]
    assert absent in reason["message"]
    assert not any(lib in reason["message"] for lib in present)
    assert reason["message"] in info["backend_reason"]
    assert f"Missing: {absent}" in _doctor_text(tmp_path, env)


def test06_runtime_dir_that_does_not_exist(tmp_path):
    env = _env(tmp_path, HRX_RUNTIME_DIR=tmp_path / "nowhere")
    info = _doctor_json(tmp_path, env)
    loc = info["bundle"]["locations"][0]
    assert loc["source"] == "HRX_RUNTIME_DIR"
    assert loc["exists"] is False
    assert info["bundle"]["status"] == "not_found"
    assert f"{tmp_path / 'nowhere'}: does not exist" in _doctor_text(tmp_path, env)


def test07_override_to_missing_file_is_reported(tmp_path):
    bundle_dir = _bundle(tmp_path / "bundle")
    ghost = tmp_path / "elsewhere" / "libamdf.so"
    env = _env(tmp_path, HRX_RUNTIME_DIR=bundle_dir, HRX_AMDF_LIBRARY=ghost)
    info = _doctor_json(tmp_path, env)
    bundle = info["bundle"]
    assert bundle["overrides"] == [{
        "variable": "HRX_AMDF_LIBRARY", "library": "libamdf.so", "path": str(ghost),
        "exists": False}]
    # The override wins over the directory that does hold libamdf.so.
    assert bundle["libraries"]["libamdf.so"] == {
        "path": str(ghost), "source": "HRX_AMDF_LIBRARY", "found": False}
    assert bundle["status"] == "incomplete"
    assert bundle["missing"] == ["libamdf.so"]
    (reason,) = [r for r in info["reasons"] if r["code"] == "bundle_incomplete"]
    assert "HRX_AMDF_LIBRARY" in reason["message"] and str(ghost) in reason["message"]
    assert f"{ghost} (MISSING)" in _doctor_text(tmp_path, env)


def test08_existing_override_completes_bundle(tmp_path):
    bundle_dir = _bundle(tmp_path / "bundle", ["libamdf.so", "libhrx_fabric.so"])
    loom = _bundle(tmp_path / "loom", ["libloomc.so"]) / "libloomc.so"
    env = _env(tmp_path, HRX_RUNTIME_DIR=bundle_dir, HRX_LOOM_LIBRARY=loom)
    bundle = _doctor_json(tmp_path, env)["bundle"]
    assert bundle["status"] == "complete"
    assert bundle["libraries"]["libloomc.so"]["path"] == str(loom)
    assert bundle["libraries"]["libamdf.so"]["path"] == str(bundle_dir / "libamdf.so")


def test09_cache_version_subdirectories(tmp_path):
    cache = tmp_path / "xdg-cache" / "hrx"
    _bundle(cache / "0.9.0", ["libamdf.so"])
    newest = _bundle(cache / "0.10.0")
    _bundle(cache / "0.2.0")
    info = _doctor_json(tmp_path, _env(tmp_path))
    bundle = info["bundle"]
    assert [loc["path"] for loc in bundle["locations"]] == [
        str(cache), str(newest), str(cache / "0.9.0"), str(cache / "0.2.0")]
    assert bundle["status"] == "complete"
    assert bundle["directory"] == str(newest)
    assert bundle["libraries"]["libloomc.so"]["source"] == "cache subdirectory"


def test10_partial_cache_subdirectory_names_missing(tmp_path):
    _bundle(tmp_path / "xdg-cache" / "hrx" / "1.0", ["libamdf.so", "libloomc.so"])
    info = _doctor_json(tmp_path, _env(tmp_path))
    assert info["bundle"]["status"] == "incomplete"
    assert info["bundle"]["missing"] == ["libhrx_fabric.so"]
    assert "libhrx_fabric.so" in info["backend_reason"]


def test11_kernel_devices(tmp_path):
    info = _doctor_json(tmp_path, _env(tmp_path))
    kd = info["kernel_devices"]
    has_kfd = os.path.exists("/dev/kfd")
    accel = sorted(
        os.path.join("/dev/accel", n) for n in os.listdir("/dev/accel") if n.startswith("accel")
    ) if os.path.isdir("/dev/accel") else []
    assert kd["gpu"]["present"] is has_kfd
    assert kd["npu"]["found"] == accel
    assert ("no_kfd" in _codes(info)) is not has_kfd
    assert ("no_accel" in _codes(info)) is not bool(accel)
    if not has_kfd:
        assert "/dev/kfd" in info["backend_reason"]
    if not accel:
        assert "/dev/accel" in info["backend_reason"]


def _proc_cpuinfo_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


@pytest.mark.skipif(
    not (sys.platform.startswith("linux") and platform.machine() == "x86_64"),
    reason="/proc/cpuinfo flags are checked on Linux x86_64 only")
def test12_cpu_features_match_proc_cpuinfo(tmp_path):
    flags = _proc_cpuinfo_flags()
    info = _doctor_json(tmp_path, _env(tmp_path))
    cpu = info["cpu"]
    assert cpu["arch"] == "x86_64"
    for name in ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16",
                 "amx_tile", "amx_bf16"):
        assert cpu[name] is (name in flags), name
    # Linux clears AVX-512 flags when it does not enable their state, so the
    # flags also predict the path; only AMX depends on a per-process grant.
    allowed = {"portable"}
    if {"avx2", "fma"} <= flags:
        allowed = {"avx2"}
        if {"avx512f", "avx512bw", "avx512vl"} <= flags:
            allowed = {"avx512"}
            if "avx512_bf16" in flags:
                allowed = {"avx512_bf16"}
                if {"amx_tile", "amx_bf16"} <= flags:
                    allowed = {"avx512_bf16", "amx_bf16"}
    assert cpu["kernel_path"] in allowed
    if cpu["kernel_path"] == "amx_bf16":
        assert cpu["amx_permitted"] is True
    if not cpu["amx_tile"]:
        assert cpu["amx_permitted"] is False
    # The devices' kernels stop at AVX512-BF16 (the tiles cannot compute their order).
    device_path = "avx512_bf16" if cpu["kernel_path"] == "amx_bf16" else cpu["kernel_path"]
    assert info["kernels"]["path"] == device_path
    # Per kernel family: what this process's kernels report.
    families = info["kernels"]["families"]
    assert set(families) == {"bf16", "bfp16", "matmul", "matmul_tile"}
    assert families["matmul"] == device_path or (
        device_path == "avx512_bf16" and families["matmul"] == "avx512")  # VDPBF16PS check failed
    tile = {"avx512_bf16": "avx512"}.get(device_path, device_path)
    assert families["matmul_tile"] == tile or (cpu["kernel_path"] == "amx_bf16" and families["matmul_tile"] == "amx_bf16")


def test13_report_names_kernel_path(tmp_path):
    env = _env(tmp_path)
    info = _doctor_json(tmp_path, env)
    names = {"avx512_bf16": "AVX512-BF16", "avx512": "AVX-512", "avx2": "AVX2", "portable": "portable"}
    path = info["kernels"]["path"]
    assert path in names
    if platform.machine() not in ("x86_64", "AMD64"):
        assert path == "portable"
    text = _doctor_text(tmp_path, env)
    assert f"The CPU kernels will use the {names[path]} path." in text
    fam = info["kernels"]["families"]
    assert (f"  Kernel families: bf16 {fam['bf16']}, bfp16 {fam['bfp16']}, matmul {fam['matmul']}; "
            f"matmul(order='tile') {fam['matmul_tile']}\n") in text


def test13b_amx_serves_only_the_tile_order(tmp_path):
    # A CPU with AMX (as far as the report can tell): the devices' path is AVX512-BF16, and the
    # report says what the tiles serve, or why they serve nothing.
    from hrxarray import _doctor

    cpu = {"kernel_path": "amx_bf16", "amx_tile": True, "amx_bf16": True, "amx_permitted": True,
           "avx512f": True, "os_avx512": True}
    fam = {"bf16": "avx512", "bfp16": "avx512", "matmul": "avx512_bf16", "matmul_tile": "amx_bf16"}
    k = _doctor._kernel_path(cpu, fam)
    assert (k["path"], k["name"]) == ("avx512_bf16", "AVX512-BF16")
    assert k["notes"] == ["the AMX tiles serve only hrxarray.numerics.matmul(order='tile'); "
                          "the devices' matmuls keep the pair order, as on every host"]
    k = _doctor._kernel_path(cpu, dict(fam, matmul_tile="avx512"))
    assert k["path"] == "avx512_bf16" and "HRXARRAY_AMX=0 is set" in k["notes"][0]
    # HRXARRAY_AMX=model on this machine: the model stands where the tiles would be.
    info = _doctor_json(tmp_path, _env(tmp_path, HRXARRAY_AMX="model"))
    assert info["kernels"]["families"]["matmul_tile"] == "amx_model"
    assert info["kernels"]["families"]["matmul"] != "amx_bf16"
    assert any(n.startswith("HRXARRAY_AMX=model") for n in info["kernels"]["notes"])


@pytest.mark.parametrize("args", [[], ["frobnicate"], ["doctor", "--bogus"]])
def test14_usage_errors_exit_2(tmp_path, args):
    r = _run(tmp_path, _env(tmp_path), *args)
    assert r.returncode == 2
    assert r.stdout == ""
    assert "usage:" in r.stderr
    if args:
        assert args[-1] in r.stderr


def test15_json_output_is_exactly_collect(tmp_path):
    r = _run(tmp_path, _env(tmp_path), "doctor", "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert r.stdout == json.dumps(info, indent=2) + "\n"


def test16_dask_worker_binding(tmp_path):
    # A plain process: not a bound worker; HRX_VISIBLE_DEVICES (what local_cluster sets) is reported.
    assert "not a bound worker (HRX_VISIBLE_DEVICES not set)" in _doctor_text(tmp_path, _env(tmp_path))
    env = _env(tmp_path, HRX_VISIBLE_DEVICES="npu:1")
    assert _doctor_json(tmp_path, env)["dask_worker"] == {"visible_devices": "npu:1", "binding": None}
    assert "not a bound worker (HRX_VISIBLE_DEVICES = 'npu:1')" in _doctor_text(tmp_path, env)
    # A worker's plugin records its binding, which the report names.
    from hrxarray import _doctor

    info = {**_doctor.collect(), "dask_worker": {"visible_devices": "npu:1", "binding": {
        "device": "npu:1", "placement": "Shared(npu:0)", "backend": "emulated", "worker": "tcp://127.0.0.1:1",
        "resources": "NPU=1"}}}
    assert "tcp://127.0.0.1:1: npu:1 as Shared(npu:0) (resources NPU=1, emulated)" in _doctor.format_report(info)
