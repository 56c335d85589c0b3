"""``python -m hrxarray doctor``: bundle search, the reason for the backend, CPU features, usage.

Every run is a subprocess with a controlled environment: HRX_* variables removed and HOME and
XDG_CACHE_HOME inside tmp_path, so the machine's own ~/.cache/hrx cannot leak in.
"""

import hashlib
import json
import os
import platform
import site
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from elf_builder import OTHER_MACHINE, shared_object, write_shared_object

import hrxarray

LIBS = ("libamdf.so", "libhrx_fabric.so", "libloomc.so")

# The functions reference/hrx-runtime.md names in full as resolved from each library (§6.3 libamdf's
# bootstrap, §6.4 the executable bridge, §6.5 the Loom C ABI): what a good bundle's libraries export.
EXPORTS = {
    "libamdf.so": ["amdf_query_api"],
    "libhrx_fabric.so": [
        "hrx_fabric_error", "hrx_fabric_gpu_image_open", "hrx_fabric_gpu_image_close",
        "hrx_fabric_gpu_argument_info", "hrx_fabric_gpu_global_info", "hrx_fabric_gpu_image_load",
        "hrx_fabric_gpu_dispatch", "hrx_fabric_xdna_open", "hrx_fabric_xdna_close",
        "hrx_fabric_xdna_command_copy", "hrx_fabric_xdna_command_replace", "hrx_fabric_xdna_submit",
        "hrx_fabric_xdna_wait"],
    "libloomc.so": [
        "loomc_allocator_system", "loomc_status_format", "loomc_status_free",
        "loomc_target_environment_create_amdgpu", "loomc_context_create", "loomc_target_profile_create_amdgpu",
        "loomc_linker_create", "loomc_compiler_create", "loomc_pass_program_create_from_target_pipeline",
        "loomc_workspace_create", "loomc_source_create", "loomc_link_index_builder_create", "loomc_link_module",
        "loomc_result_succeeded", "loomc_result_diagnostic_count", "loomc_result_release",
        "loomc_module_release"],
}


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


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_manifest(path, directory, names):
    path.write_text(json.dumps({"files": {name: _sha(directory / name) for name in names}}))
    return path


def _bundle(directory, libs=LIBS, manifest=True):
    """A good bundle of `libs` in `directory`: ELF shared objects for this host exporting what HRX
    resolves, and a manifest.json listing their SHA-256 digests."""
    directory.mkdir(parents=True, exist_ok=True)
    for lib in libs:
        write_shared_object(directory / lib, EXPORTS[lib] + ["helper_" + lib[3:-3]], undefined=["malloc"])
    if manifest:
        _write_manifest(directory / "manifest.json", directory, libs)
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


# --- checking a bundle without loading it (issue 24, item 8) -------------------------------------------


def _collect(tmp_path, **extra):
    """The doctor's facts in this process, with the controlled environment of _env."""
    from hrxarray import _doctor

    return _doctor.collect(environ=_env(tmp_path, **extra))


def _failed(info):
    """{(file name, check): reason} of every failed check."""
    return {(os.path.basename(c["file"]), c["check"]): c["reason"]
            for c in info["bundle"]["checks"] if c["status"] == "failed"}


def test17_empty_files_and_a_bogus_manifest_are_not_a_complete_bundle(tmp_path):
    bundle_dir = tmp_path / "bundle"
    bundle_dir.mkdir()
    for lib in LIBS:
        (bundle_dir / lib).write_bytes(b"")
    (bundle_dir / "manifest.json").write_text('{"bundle": "yes"}')
    env = _env(tmp_path, HRX_RUNTIME_DIR=bundle_dir)
    info = _doctor_json(tmp_path, env)
    bundle = info["bundle"]
    assert bundle["status"] == "invalid" and bundle["missing"] == []
    failed = _failed(info)
    assert {failed[(lib, "elf")] for lib in LIBS} == {"the file is empty"}
    assert failed[("manifest.json", "manifest")] == (
        'it has no "files" object mapping file names to SHA-256 digests')
    (reason,) = [r for r in info["reasons"] if r["code"] == "bundle_invalid"]
    assert f"{bundle_dir / 'libamdf.so'}: the file is empty" in reason["message"]
    assert reason["message"] in info["backend_reason"]
    assert "An HRX native bundle was found" not in info["backend_reason"]
    text = _doctor_text(tmp_path, env)
    assert "HRX native bundle: found, but it fails its checks" in text
    assert f"FAILED   elf       {bundle_dir / 'libloomc.so'}: the file is empty" in text


def test18_a_library_for_another_machine_is_named(tmp_path):
    from hrxarray import _doctor

    bundle_dir = _bundle(tmp_path / "bundle", manifest=False)
    write_shared_object(bundle_dir / "libhrx_fabric.so", EXPORTS["libhrx_fabric.so"], machine=OTHER_MACHINE)
    write_shared_object(bundle_dir / "libloomc.so", EXPORTS["libloomc.so"], elf_type=2)
    info = _collect(tmp_path, HRX_RUNTIME_DIR=bundle_dir)
    assert info["bundle"]["status"] == "invalid"
    other, host = {62: ("x86-64", "AArch64"), 183: ("AArch64", "x86-64")}[OTHER_MACHINE]
    assert _failed(info) == {
        ("libhrx_fabric.so", "elf"): f"it is built for {other}, but this host is {host}",
        ("libloomc.so", "elf"): "it is ET_EXEC (an executable), not ET_DYN (a shared object)",
    }
    # Without a manifest.json, HRX uses HRX_RUNTIME_DIR as-is: the digest check is skipped, not failed.
    (manifest,) = [c for c in info["bundle"]["checks"] if c["check"] == "manifest"]
    assert manifest["status"] == "skipped" and manifest["file"] == str(bundle_dir / "manifest.json")
    assert "bundle_invalid" in _codes(info)
    assert _doctor.format_report(info).count("FAILED") == 2


def test19_a_library_missing_an_entry_point_is_named(tmp_path):
    bundle_dir = _bundle(tmp_path / "bundle")
    fabric = [n for n in EXPORTS["libhrx_fabric.so"] if n not in ("hrx_fabric_xdna_wait", "hrx_fabric_error")]
    # Imported (undefined) and hidden symbols are in .dynsym but export nothing.
    write_shared_object(bundle_dir / "libhrx_fabric.so", fabric, undefined=["hrx_fabric_xdna_wait"],
                        hidden=["hrx_fabric_error"])
    (bundle_dir / "libamdf.so").write_bytes(shared_object(["amdf_query_api_v2"]))
    _write_manifest(bundle_dir / "manifest.json", bundle_dir, LIBS)
    info = _collect(tmp_path, HRX_RUNTIME_DIR=bundle_dir)
    assert info["bundle"]["status"] == "invalid"
    assert _failed(info) == {
        ("libhrx_fabric.so", "symbols"): "it does not export 2 of the 13 functions HRX resolves from "
                                         "libhrx_fabric.so: hrx_fabric_error, hrx_fabric_xdna_wait",
        ("libamdf.so", "symbols"): "it does not export 1 of the 1 functions HRX resolves from libamdf.so: "
                                   "amdf_query_api",
    }


def test20_digests_are_checked_against_the_manifest(tmp_path):
    bundle_dir = _bundle(tmp_path / "bundle")
    manifest = bundle_dir / "manifest.json"
    files = json.loads(manifest.read_text())["files"]
    good = files["libloomc.so"]
    files["libloomc.so"] = "0" * 64
    files["libextra.so"] = "1" * 64
    del files["libamdf.so"]
    manifest.write_text(json.dumps({"schema": 1, "files": files}))
    info = _collect(tmp_path, HRX_RUNTIME_DIR=bundle_dir)
    assert info["bundle"]["status"] == "invalid"
    assert _failed(info) == {
        ("libloomc.so", "digest"): f"its SHA-256 is {good}, but {manifest} lists {'0' * 64}",
        ("libextra.so", "digest"): f"listed in {manifest} but absent",
        ("libamdf.so", "digest"): f"not listed in {manifest}",
    }
    # A digest that is no SHA-256, or a path instead of a file name, makes the manifest invalid.
    for entry, why in ((("libamdf.so", "abc"), "its digest for 'libamdf.so' ('abc') is not 64 hex digits"),
                       (("../libamdf.so", "0" * 64), "its entry '../libamdf.so' is not a flat file name")):
        manifest.write_text(json.dumps({"files": dict([entry])}))
        assert _failed(_collect(tmp_path, HRX_RUNTIME_DIR=bundle_dir))[("manifest.json", "manifest")].startswith(why)
    manifest.write_text("{not json")
    assert _failed(_collect(tmp_path, HRX_RUNTIME_DIR=bundle_dir))[("manifest.json", "manifest")] == (
        "it is not JSON (Expecting property name enclosed in double quotes at line 1, column 2)")


def test21_a_good_bundle_passes_every_check_and_is_still_not_used(tmp_path):
    bundle_dir = _bundle(tmp_path / "bundle")
    env = _env(tmp_path, HRX_RUNTIME_DIR=bundle_dir)
    info = _doctor_json(tmp_path, env)
    checks = info["bundle"]["checks"]
    assert info["bundle"]["status"] == "complete"
    assert {c["status"] for c in checks} == {"ok"}
    assert sorted((os.path.basename(c["file"]), c["check"]) for c in checks) == sorted(
        [(lib, kind) for lib in LIBS for kind in ("elf", "symbols", "digest")] + [("manifest.json", "manifest")])
    assert "bundle_invalid" not in _codes(info)
    text = _doctor_text(tmp_path, env)
    assert "This build of hrxarray has no native provider, so even a bundle that passes every check is not used." in text
    assert "but this build cannot use it" in info["backend_reason"]


def test22_a_cached_bundle_needs_its_manifest(tmp_path):
    cache = _bundle(tmp_path / "xdg-cache" / "hrx", manifest=False)
    info = _collect(tmp_path)
    assert info["bundle"]["status"] == "invalid"
    assert _failed(info) == {("manifest.json", "manifest"): "absent: HRX verifies a cached bundle file by file "
                                                            "against its manifest.json, so this one would not be used"}
    assert info["bundle"]["checks"][-1]["file"] == str(cache / "manifest.json")


def test23_hrx_bundle_manifest_replaces_the_directory_manifest(tmp_path):
    bundle_dir = _bundle(tmp_path / "bundle")
    (bundle_dir / "manifest.json").write_text("{}")  # would fail; the variable's manifest is read instead
    alternate = _write_manifest(tmp_path / "alt.json", bundle_dir, LIBS)
    info = _collect(tmp_path, HRX_RUNTIME_DIR=bundle_dir, HRX_BUNDLE_MANIFEST=alternate)
    assert info["bundle"]["status"] == "complete"
    assert info["bundle"]["environment"] == {"HRX_OFFLINE": None, "HRX_BUNDLE_MANIFEST": str(alternate)}
    assert [c["file"] for c in info["bundle"]["checks"] if c["check"] == "manifest"] == [str(alternate)]
    ghost = tmp_path / "nowhere.json"
    info = _collect(tmp_path, HRX_RUNTIME_DIR=bundle_dir, HRX_BUNDLE_MANIFEST=ghost)
    assert _failed(info) == {("nowhere.json", "manifest"): "HRX_BUNDLE_MANIFEST names this file, which does not exist"}


def test24_hrx_offline_without_a_bundle_is_a_reason(tmp_path):
    info = _collect(tmp_path, HRX_OFFLINE="1")
    assert info["bundle"]["environment"]["HRX_OFFLINE"] == "1"
    (reason,) = [r for r in info["reasons"] if r["code"] == "offline"]
    assert "HRX_OFFLINE is set ('1')" in reason["message"] and "hrx prepare" in reason["message"]
    # Online, HRX would fetch the bundle itself; with HRX_RUNTIME_DIR it never downloads.
    assert "offline" not in _codes(_collect(tmp_path))
    assert "offline" not in _codes(_collect(tmp_path, HRX_OFFLINE="1", HRX_RUNTIME_DIR=tmp_path / "nowhere"))
    from hrxarray import _doctor

    assert "HRX itself would download its pinned bundle here" in _doctor.format_report(_collect(tmp_path))


def test25_required_symbols_are_the_references(tmp_path):
    from hrxarray import _doctor

    assert {lib: list(names) for lib, names in _doctor.REQUIRED_SYMBOLS.items()} == EXPORTS


def test16_usage_names_the_command_the_user_ran(tmp_path):
    # `hrxarray --help` (the console script) and `python -m hrxarray --help` each name themselves.
    r = _run(tmp_path, _env(tmp_path), "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: python -m hrxarray <command>")
    assert "loom-ops" in r.stdout
    script = Path(sys.executable).with_name("hrxarray")
    if not script.exists():
        pytest.skip(f"no console script next to {sys.executable}")
    r = subprocess.run([str(script), "--help"], cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("usage: hrxarray <command>"), r.stdout + r.stderr
