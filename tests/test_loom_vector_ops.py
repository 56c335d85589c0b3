"""Loom's vector register-layout, bit-packing, grouped-dot and table ops (issue 25 item 1), each run in
the interpreter and checked against NumPy, plus a block-quantised matrix-vector kernel (q8_0 and q4_0
style: int8 / packed-nibble blocks of 32 with an f16 scale) built from them."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrxarray as hx
from hrxarray import _core

GPU = "gfx1151"
L = 8  # work-items, one row of every input each


def run(src, bindings, symbol="k"):
    """Runs `symbol` over uint8 views of `bindings` (modified in place)."""
    views = [b.view(np.uint8).reshape(-1) for b in bindings]
    _core.loom._run_program(src, symbol, GPU, {}, views, b"", None, False, [])


def kernel(params, body, items=L):
    """A one-workgroup kernel of `items` work-items; %t is the work-item, %c0.. small index constants."""
    return f"""
amdgpu.target<gfx1151> @gpu {{subgroup_size = 32}}
kernel.def target(@gpu) export("k") @k() {{
  %one = index.constant 1 : index
  %w = index.constant {items} : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%w, %one, %one) : index
}} launch({params}) {{
  %z = index.constant 0 : offset
  %t = kernel.workitem.id<x> : index
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
{body}
  kernel.return
}}
"""


# --- register layout: slice, transpose, shuffle, concat, interleave, deinterleave, reduce.axes ----

LAYOUT = kernel("%a: buffer, %sl: buffer, %tr: buffer, %sh: buffer, %c0o: buffer, %c1o: buffer, %il: buffer, "
                "%de: buffer, %do: buffer, %r0: buffer, %r1: buffer, %r01: buffer", """
  %av = buffer.view %a[%z] : buffer -> view<8x4x8xi32>
  %v = vector.load %av[%t, %c0, %c0] : view<8x4x8xi32> -> vector<4x8xi32>
  %s = vector.slice %v[1, %c1] : vector<4x8xi32> -> vector<2x5xi32>
  %slv = buffer.view %sl[%z] : buffer -> view<8x2x5xi32>
  vector.store %s, %slv[%t, %c0, %c0] : vector<2x5xi32>, view<8x2x5xi32>
  %tt = vector.transpose<[1, 0]> %v : vector<4x8xi32> -> vector<8x4xi32>
  %trv = buffer.view %tr[%z] : buffer -> view<8x8x4xi32>
  vector.store %tt, %trv[%t, %c0, %c0] : vector<8x4xi32>, view<8x8x4xi32>
  %row = vector.extract %v[2] : vector<4x8xi32> -> vector<8xi32>
  %shf = vector.shuffle<[7, 0, 0, 3, 5, 1, 6, 2]> %row : vector<8xi32>
  %shv = buffer.view %sh[%z] : buffer -> view<8x8xi32>
  vector.store %shf, %shv[%t, %c0] : vector<8xi32>, view<8x8xi32>
  %dbl = vector.addi %v, %v : vector<4x8xi32>
  %cat0 = vector.concat<0> %v, %dbl, %v : vector<4x8xi32>, vector<4x8xi32>, vector<4x8xi32> -> vector<12x8xi32>
  %c0v = buffer.view %c0o[%z] : buffer -> view<8x12x8xi32>
  vector.store %cat0, %c0v[%t, %c0, %c0] : vector<12x8xi32>, view<8x12x8xi32>
  %cat1 = vector.concat<1> %s, %s : vector<2x5xi32>, vector<2x5xi32> -> vector<2x10xi32>
  %c1v = buffer.view %c1o[%z] : buffer -> view<8x2x10xi32>
  vector.store %cat1, %c1v[%t, %c0, %c0] : vector<2x10xi32>, view<8x2x10xi32>
  %inter = vector.interleave<1> %v, %dbl : vector<4x8xi32>, vector<4x8xi32> -> vector<4x16xi32>
  %ilv = buffer.view %il[%z] : buffer -> view<8x4x16xi32>
  vector.store %inter, %ilv[%t, %c0, %c0] : vector<4x16xi32>, view<8x4x16xi32>
  %ev, %od = vector.deinterleave<0> %v : vector<4x8xi32> -> vector<2x8xi32>, vector<2x8xi32>
  %dev = buffer.view %de[%z] : buffer -> view<8x2x8xi32>
  %dov = buffer.view %do[%z] : buffer -> view<8x2x8xi32>
  vector.store %ev, %dev[%t, %c0, %c0] : vector<2x8xi32>, view<8x2x8xi32>
  vector.store %od, %dov[%t, %c0, %c0] : vector<2x8xi32>, view<8x2x8xi32>
  %i8 = vector.constant 100 : vector<8xi32>
  %i4 = vector.constant 0 : vector<4xi32>
  %i0 = scalar.constant -5 : i32
  %s0 = vector.reduce.axes<addi> %v, %i8 axes [0] : vector<4x8xi32>, vector<8xi32>
  %s1 = vector.reduce.axes<maxsi> %v, %i4 axes [1] : vector<4x8xi32>, vector<4xi32>
  %s01 = vector.reduce.axes<addi> %v, %i0 axes [0, 1] : vector<4x8xi32>, i32
  %r0v = buffer.view %r0[%z] : buffer -> view<8x8xi32>
  %r1v = buffer.view %r1[%z] : buffer -> view<8x4xi32>
  %r01v = buffer.view %r01[%z] : buffer -> view<8xi32>
  vector.store %s0, %r0v[%t, %c0] : vector<8xi32>, view<8x8xi32>
  vector.store %s1, %r1v[%t, %c0] : vector<4xi32>, view<8x4xi32>
  view.store %s01, %r01v[%t] : i32, view<8xi32>""")


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_layout_ops_match_numpy(seed):
    a = np.random.default_rng(seed).integers(-1000, 1000, (L, 4, 8)).astype(np.int32)
    outs = [np.zeros(s, np.int32) for s in [(L, 2, 5), (L, 8, 4), (L, 8), (L, 12, 8), (L, 2, 10), (L, 4, 16),
                                              (L, 2, 8), (L, 2, 8), (L, 8), (L, 4), (L,)]]
    run(LAYOUT, [a] + outs)
    sl, tr, sh, c0, c1, il, de, do, r0, r1, r01 = outs
    s = a[:, 1:3, 1:6]
    assert np.array_equal(sl, s)
    assert np.array_equal(tr, a.transpose(0, 2, 1))
    assert np.array_equal(sh, a[:, 2, [7, 0, 0, 3, 5, 1, 6, 2]])
    assert np.array_equal(c0, np.concatenate([a, 2 * a, a], axis=1))
    assert np.array_equal(c1, np.concatenate([s, s], axis=2))
    want_il = np.empty((L, 4, 16), np.int32)
    want_il[:, :, 0::2], want_il[:, :, 1::2] = a, 2 * a
    assert np.array_equal(il, want_il)
    assert np.array_equal(de, a[:, 0::2]) and np.array_equal(do, a[:, 1::2])
    assert np.array_equal(r0, a.sum(axis=1) + 100)
    assert np.array_equal(r1, np.maximum(a.max(axis=2), 0))
    assert np.array_equal(r01, a.sum(axis=(1, 2)) - 5)


# --- bitfields, bit packing and unpacking --------------------------------------------------------

BITS = kernel("%b: buffer, %eu: buffer, %es: buffer, %ins: buffer, %nu: buffer, %ns: buffer, %pk: buffer, "
              "%u3: buffer, %m1: buffer", """
  %bv = buffer.view %b[%z] : buffer -> view<8x32xi8>
  %p = vector.load %bv[%t, %c0] : view<8x32xi8> -> vector<32xi8>
  %hi = vector.bitfield.extractu %p {offset = 4, width = 4} : vector<32xi8> -> vector<32xi32>
  %mid = vector.bitfield.extracts %p {offset = 1, width = 5} : vector<32xi8> -> vector<32xi16>
  %put = vector.bitfield.insert %hi into %p {offset = 2, width = 3} : vector<32xi32>, vector<32xi8>
  %eo = buffer.view %eu[%z] : buffer -> view<8x32xi32>
  %so = buffer.view %es[%z] : buffer -> view<8x32xi16>
  %io = buffer.view %ins[%z] : buffer -> view<8x32xi8>
  vector.store %hi, %eo[%t, %c0] : vector<32xi32>, view<8x32xi32>
  vector.store %mid, %so[%t, %c0] : vector<32xi16>, view<8x32xi16>
  vector.store %put, %io[%t, %c0] : vector<32xi8>, view<8x32xi8>
  %nib = vector.bitunpacku<4> %p : vector<32xi8> -> vector<64xi8>
  %snib = vector.bitunpacks<4> %p : vector<32xi8> -> vector<64xi8>
  %back = vector.bitpack<4> %nib : vector<64xi8> -> vector<32xi8>
  %nuo = buffer.view %nu[%z] : buffer -> view<8x64xi8>
  %nso = buffer.view %ns[%z] : buffer -> view<8x64xi8>
  %pko = buffer.view %pk[%z] : buffer -> view<8x32xi8>
  vector.store %nib, %nuo[%t, %c0] : vector<64xi8>, view<8x64xi8>
  vector.store %snib, %nso[%t, %c0] : vector<64xi8>, view<8x64xi8>
  vector.store %back, %pko[%t, %c0] : vector<32xi8>, view<8x32xi8>
  %p12 = vector.slice %p[0] : vector<32xi8> -> vector<12xi8>
  %three = vector.bitunpacku<3> %p12 : vector<12xi8> -> vector<32xi16>
  %u3o = buffer.view %u3[%z] : buffer -> view<8x32xi16>
  vector.store %three, %u3o[%t, %c0] : vector<32xi16>, view<8x32xi16>
  %zero = vector.constant 0 : vector<32xi8>
  %neg = vector.cmpi slt, %p, %zero : vector<32xi8> -> vector<32xi1>
  %bitsv = vector.bitpack<1> %neg : vector<32xi1> -> vector<4xi8>
  %m1o = buffer.view %m1[%z] : buffer -> view<8x4xi8>
  vector.store %bitsv, %m1o[%t, %c0] : vector<4xi8>, view<8x4xi8>""")


def _little_bits(u8):
    """The little-endian bitstream of each row of a uint8 array."""
    return np.unpackbits(u8, axis=-1, bitorder="little")


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_bitfield_and_bitpack_ops_match_numpy(seed):
    b = np.random.default_rng(seed).integers(-128, 128, (L, 32)).astype(np.int8)
    eu, es, ins = np.zeros((L, 32), np.int32), np.zeros((L, 32), np.int16), np.zeros((L, 32), np.int8)
    nu, ns, pk = np.zeros((L, 64), np.int8), np.zeros((L, 64), np.int8), np.zeros((L, 32), np.int8)
    u3, m1 = np.zeros((L, 32), np.int16), np.zeros((L, 4), np.int8)
    run(BITS, [b, eu, es, ins, nu, ns, pk, u3, m1])
    u = b.view(np.uint8).astype(np.int64)
    assert np.array_equal(eu, (u >> 4) & 15)
    f5 = (u >> 1) & 31
    assert np.array_equal(es, np.where(f5 >= 16, f5 - 32, f5))
    assert np.array_equal(ins.view(np.uint8), ((u & ~(7 << 2)) | ((((u >> 4) & 15) & 7) << 2)).astype(np.uint8))
    nib = np.empty((L, 64), np.int64)
    nib[:, 0::2], nib[:, 1::2] = u & 15, u >> 4
    assert np.array_equal(nu, nib)
    assert np.array_equal(ns, np.where(nib >= 8, nib - 16, nib))
    assert np.array_equal(pk, b)  # bitpack<4> undoes bitunpacku<4>
    stream = _little_bits(b[:, :12].view(np.uint8)).reshape(L, 32, 3).astype(np.int64)
    assert np.array_equal(u3, stream @ np.array([1, 2, 4]))
    assert np.array_equal(m1.view(np.uint8), np.packbits(b < 0, axis=1, bitorder="little"))


# --- grouped dots: dot4i, dot8i4 (all signedness kinds), dot2f --------------------------------------

KINDS4 = ["s8s8", "u8s8", "s8u8", "u8u8"]
KINDS8 = ["s4s4", "u4s4", "s4u4", "u4u4"]


def _dots_source():
    body = ["  %lv = buffer.view %lhs[%z] : buffer -> view<8x16xi8>",
            "  %rv = buffer.view %rhs[%z] : buffer -> view<8x16xi8>",
            "  %av = buffer.view %acc[%z] : buffer -> view<8x4xi32>",
            "  %ov = buffer.view %o[%z] : buffer -> view<8x8x4xi32>",
            "  %hv = buffer.view %h[%z] : buffer -> view<8x2x8xf16>",
            "  %fv = buffer.view %facc[%z] : buffer -> view<8x4xf32>",
            "  %fo = buffer.view %fout[%z] : buffer -> view<8x4xf32>",
            "  %a = vector.load %lv[%t, %c0] : view<8x16xi8> -> vector<16xi8>",
            "  %b = vector.load %rv[%t, %c0] : view<8x16xi8> -> vector<16xi8>",
            "  %c = vector.load %av[%t, %c0] : view<8x4xi32> -> vector<4xi32>",
            "  %aw = vector.bitcast %a : vector<16xi8> to vector<4xi32>",
            "  %bw = vector.bitcast %b : vector<16xi8> to vector<4xi32>"]
    for j, k in enumerate(KINDS4):
        body += [f"  %d{j} = vector.dot4i<{k}> %a, %b, %c : vector<16xi8>, vector<16xi8>, vector<4xi32>",
                 f"  vector.store %d{j}, %ov[%t, {j}, %c0] : vector<4xi32>, view<8x8x4xi32>"]
    for j, k in enumerate(KINDS8):
        body += [f"  %e{j} = vector.dot8i4<{k}> %aw, %bw, %c : vector<4xi32>",
                 f"  vector.store %e{j}, %ov[%t, {4 + j}, %c0] : vector<4xi32>, view<8x8x4xi32>"]
    body += ["  %x = vector.load %hv[%t, %c0, %c0] : view<8x2x8xf16> -> vector<8xf16>",
             "  %y = vector.load %hv[%t, %c1, %c0] : view<8x2x8xf16> -> vector<8xf16>",
             "  %fc = vector.load %fv[%t, %c0] : view<8x4xf32> -> vector<4xf32>",
             "  %f2 = vector.dot2f %x, %y, %fc : vector<8xf16>, vector<8xf16>, vector<4xf32>",
             "  vector.store %f2, %fo[%t, %c0] : vector<4xf32>, view<8x4xf32>"]
    return kernel("%lhs: buffer, %rhs: buffer, %acc: buffer, %o: buffer, %h: buffer, %facc: buffer, %fout: buffer",
                  "\n".join(body))


DOTS = _dots_source()


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_grouped_dots_match_numpy(seed):
    rng = np.random.default_rng(seed)
    lhs = rng.integers(-128, 128, (L, 16)).astype(np.int8)
    rhs = rng.integers(-128, 128, (L, 16)).astype(np.int8)
    acc = rng.integers(-2**31, 2**31, (L, 4)).astype(np.int32)
    h = rng.standard_normal((L, 2, 8)).astype(np.float16)
    facc = rng.standard_normal((L, 4)).astype(np.float32)
    o, fout = np.zeros((L, 8, 4), np.int32), np.zeros((L, 4), np.float32)
    run(DOTS, [lhs, rhs, acc, o, h, facc, fout])
    for j, k in enumerate(KINDS4):
        p = lhs.astype(np.int64) if k[0] == "s" else lhs.view(np.uint8).astype(np.int64)
        q = rhs.astype(np.int64) if k[2] == "s" else rhs.view(np.uint8).astype(np.int64)
        want = (acc + (p * q).reshape(L, 4, 4).sum(-1)).astype(np.int32)  # wraps like the i32 accumulator
        assert np.array_equal(o[:, j], want), k
    nib = np.empty((L, 32), np.int64)  # each i32 lane: eight nibbles, least significant first
    for name, src in (("a", lhs), ("b", rhs)):
        u = src.view(np.uint8).astype(np.int64)
        nib[:, 0::2], nib[:, 1::2] = u & 15, u >> 4
        if name == "a":
            na = nib.copy()
        else:
            nb = nib.copy()
    for j, k in enumerate(KINDS8):
        p = np.where(na >= 8, na - 16, na) if k[0] == "s" else na
        q = np.where(nb >= 8, nb - 16, nb) if k[2] == "s" else nb
        want = (acc + (p * q).reshape(L, 4, 8).sum(-1)).astype(np.int32)
        assert np.array_equal(o[:, 4 + j], want), k
    # dot2f: two fmaf in f32 per accumulator lane (each exact in float64 here, then rounded once)
    x, y = h[:, 0].astype(np.float64), h[:, 1].astype(np.float64)
    want = facc.copy()
    for g in range(2):
        want = (x[:, g::2] * y[:, g::2] + want.astype(np.float64)).astype(np.float32)
    assert np.array_equal(fout, want)


# --- tables --------------------------------------------------------------------------------------

TABLES = kernel("%tab: buffer, %codes: buffer, %vals: buffer, %thr: buffer, %lk: buffer, %qz: buffer, %qu: buffer", """
  %tv = buffer.view %tab[%z] : buffer -> view<16xf32>
  %cv = buffer.view %codes[%z] : buffer -> view<8x32xi8>
  %vv = buffer.view %vals[%z] : buffer -> view<8x32xf32>
  %hv = buffer.view %thr[%z] : buffer -> view<7xf32>
  %table = vector.load %tv[%c0] : view<16xf32> -> vector<16xf32>
  %cd = vector.load %cv[%t, %c0] : view<8x32xi8> -> vector<32xi8>
  %got = vector.table.lookup %table[%cd] : vector<16xf32>, vector<32xi8> -> vector<32xf32>
  %lo = buffer.view %lk[%z] : buffer -> view<8x32xf32>
  vector.store %got, %lo[%t, %c0] : vector<32xf32>, view<8x32xf32>
  %x = vector.load %vv[%t, %c0] : view<8x32xf32> -> vector<32xf32>
  %th = vector.load %hv[%c0] : view<7xf32> -> vector<7xf32>
  %q0 = vector.table.quantize %x, %th {nan = zero, tie = lower} : vector<32xf32>, vector<7xf32> -> vector<32xi8>
  %q1 = vector.table.quantize %x, %th {nan = max, tie = upper} : vector<32xf32>, vector<7xf32> -> vector<32xi8>
  %qo = buffer.view %qz[%z] : buffer -> view<8x32xi8>
  %qp = buffer.view %qu[%z] : buffer -> view<8x32xi8>
  vector.store %q0, %qo[%t, %c0] : vector<32xi8>, view<8x32xi8>
  vector.store %q1, %qp[%t, %c0] : vector<32xi8>, view<8x32xi8>""")


def test_table_lookup_and_quantize_match_numpy():
    rng = np.random.default_rng(3)
    tab = rng.standard_normal(16).astype(np.float32)
    codes = rng.integers(0, 16, (L, 32)).astype(np.int8)
    thr = np.array([-1.5, -1, -0.5, 0, 0.5, 1, 1.5], np.float32)
    vals = rng.choice(np.array([-2, -1.5, -0.7, 0, 0.25, 1, 3, np.nan], np.float32), (L, 32))
    lk, qz, qu = np.zeros((L, 32), np.float32), np.zeros((L, 32), np.int8), np.zeros((L, 32), np.int8)
    run(TABLES, [tab, codes, vals, thr, lk, qz, qu])
    assert np.array_equal(lk, tab[codes])
    nan = np.isnan(vals)
    assert np.array_equal(qz, np.where(nan, 0, np.searchsorted(thr, vals, side="left")))
    assert np.array_equal(qu, np.where(nan, 7, np.searchsorted(thr, vals, side="right")))


def test_bad_shuffle_lane_is_a_clear_error():
    src = kernel("%o: buffer", """
  %v = vector.constant 1 : vector<4xi32>
  %s = vector.shuffle<[0, 1, 2, 4]> %v : vector<4xi32>
  %ov = buffer.view %o[%z] : buffer -> view<8x4xi32>
  vector.store %s, %ov[%t, %c0] : vector<4xi32>, view<8x4xi32>""")
    with pytest.raises(hx.HrxError, match="shuffle source lane 4"):
        run(src, [np.zeros((L, 4), np.int32)])


# --- a block-quantised matrix-vector product -------------------------------------------------------
# Weights in blocks of 32 along K, each with an f16 scale: q8_0 (32 int8 codes) or q4_0 (16 bytes of
# nibbles, code - 8, low nibbles first as vector.bitunpacku lays them out). The activation is q8_0 too;
# each block's integer dot is vector.dot4i<s8s8>, scaled in f32 as llama.cpp's vec_dot does.

def _qmatvec_source(rows, k, q4):
    nb = k // 32
    wbytes = 16 if q4 else 32
    unpack = ("""
      %raw = vector.load %wv[%r, %b, %c0] : view<{rows}x{nb}x16xi8> -> vector<16xi8>
      %u = vector.bitunpacku<4> %raw : vector<16xi8> -> vector<32xi8>
      %eight = vector.constant 8 : vector<32xi8>
      %wq = vector.subi %u, %eight : vector<32xi8>""" if q4 else """
      %wq = vector.load %wv[%r, %b, %c0] : view<{rows}x{nb}x32xi8> -> vector<32xi8>""").format(rows=rows, nb=nb)
    return f"""
amdgpu.target<gfx1151> @gpu {{subgroup_size = 32}}
kernel.def target(@gpu) export("qmv") @qmv() {{
  %one = index.constant 1 : index
  %w = index.constant 64 : index
  %g = index.constant {rows // 64} : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%w, %one, %one) : index
}} launch(%wq8: buffer, %wd: buffer, %xq: buffer, %xd: buffer, %y: buffer) {{
  %z = index.constant 0 : offset
  %r = kernel.workitem.dispatch.id<x> : index
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %nb = index.constant {nb} : index
  %wv = buffer.view %wq8[%z] : buffer -> view<{rows}x{nb}x{wbytes}xi8>
  %wdv = buffer.view %wd[%z] : buffer -> view<{rows}x{nb}xf16>
  %xv = buffer.view %xq[%z] : buffer -> view<{nb}x32xi8>
  %xdv = buffer.view %xd[%z] : buffer -> view<{nb}xf16>
  %yv = buffer.view %y[%z] : buffer -> view<{rows}xf32>
  %f0 = scalar.constant 0.0 : f32
  %sum = scf.for %b = [%c0 to %nb step %c1](%acc = %f0 : f32) -> (f32) {{{unpack}
      %xb = vector.load %xv[%b, %c0] : view<{nb}x32xi8> -> vector<32xi8>
      %zero = vector.constant 0 : vector<8xi32>
      %part = vector.dot4i<s8s8> %wq, %xb, %zero : vector<32xi8>, vector<32xi8>, vector<8xi32>
      %i0 = scalar.constant 0 : i32
      %isum = vector.reduce<addi> %part, %i0 : vector<8xi32>, i32
      %fsum = scalar.sitofp %isum : i32 to f32
      %dw = view.load %wdv[%r, %b] : view<{rows}x{nb}xf16> -> f16
      %dx = view.load %xdv[%b] : view<{nb}xf16> -> f16
      %dw32 = scalar.extf %dw : f16 to f32
      %dx32 = scalar.extf %dx : f16 to f32
      %d = scalar.mulf %dw32, %dx32 : f32
      %t = scalar.mulf %fsum, %d : f32
      %n = scalar.addf %acc, %t : f32
      scf.yield %n : f32
  }}
  view.store %sum, %yv[%r] : f32, view<{rows}xf32>
  kernel.return
}}
"""


def _quantise_q8(v):
    """q8_0 blocks of 32 along the last axis: (int8 codes, f16 scales) with v ≈ codes * scale."""
    blocks = v.reshape(*v.shape[:-1], -1, 32)
    d = (np.abs(blocks).max(-1) / 127).astype(np.float16)
    inv = np.where(d == 0, 0, 1 / d.astype(np.float32))
    q = np.clip(np.rint(blocks * inv[..., None]), -127, 127).astype(np.int8)
    return q, d


@pytest.mark.parametrize("q4", [False, True], ids=["q8_0", "q4_0"])
def test_block_quantised_matvec_matches_numpy(q4):
    rows, k = 128, 256
    rng = np.random.default_rng(11)
    w = rng.standard_normal((rows, k)).astype(np.float32)
    x = rng.standard_normal(k).astype(np.float32)
    xq, xd = _quantise_q8(x)
    if q4:
        wd = (np.abs(w.reshape(rows, -1, 32)).max(-1) / 7).astype(np.float16)
        codes = np.clip(np.rint(w.reshape(rows, -1, 32) / wd[..., None].astype(np.float32)), -8, 7).astype(np.int64) + 8
        wpacked = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8).view(np.int8)
        wq = (codes - 8).astype(np.int8)
    else:
        wq, wd = _quantise_q8(w)
        wpacked = wq
    y = np.zeros(rows, np.float32)
    run(_qmatvec_source(rows, k, q4), [np.ascontiguousarray(wpacked), wd, xq, xd, y], symbol="qmv")
    # NumPy: exact integer block dots, then the kernel's f32 operations in its order
    isum = (wq.astype(np.int64) * xq.astype(np.int64)).sum(-1).astype(np.float32)  # (rows, nb)
    d = wd.astype(np.float32) * xd.astype(np.float32)
    want = np.zeros(rows, np.float32)
    for b in range(k // 32):
        want = want + isum[:, b] * d[:, b]
    assert np.array_equal(y, want)
    # and it is the matrix-vector product, within the quantisation error (|w @ x| is about 16 here)
    assert np.abs(y - w @ x).max() < (6.0 if q4 else 1.0)


# --- gather and scatter --------------------------------------------------------------------------

GATHER = kernel("%src: buffer, %offs: buffer, %g: buffer, %gm: buffer, %dst: buffer", """
  %sv = buffer.view %src[%z] : buffer -> view<8x64xf32>
  %ov = buffer.view %offs[%z] : buffer -> view<8x8xi32>
  %gv = buffer.view %g[%z] : buffer -> view<8x8xf32>
  %gmv = buffer.view %gm[%z] : buffer -> view<8x8xf32>
  %dv = buffer.view %dst[%z] : buffer -> view<8x64xf32>
  %c32 = index.constant 32 : index
  %off = vector.load %ov[%t, %c0] : view<8x8xi32> -> vector<8xi32>
  %x = vector.gather %sv[%t, %c32][%off] : view<8x64xf32>, vector<8xi32> -> vector<8xf32>
  vector.store %x, %gv[%t, %c0] : vector<8xf32>, view<8x8xf32>
  %zero = vector.constant 0 : vector<8xi32>
  %pos = vector.cmpi sge, %off, %zero : vector<8xi32> -> vector<8xi1>
  %old = vector.constant -1.0 : vector<8xf32>
  %y = vector.gather.mask %sv[%t, %c32][%off], %pos, %old : view<8x64xf32>, vector<8xi32>, vector<8xi1>, vector<8xf32>
  vector.store %y, %gmv[%t, %c0] : vector<8xf32>, view<8x8xf32>
  vector.scatter %x, %dv[%t, %c32][%off] : vector<8xf32>, view<8x64xf32>, vector<8xi32>
  %twice = vector.addf %x, %x : vector<8xf32>
  vector.scatter.mask %twice, %dv[%t, %c32][%off], %pos : vector<8xf32>, view<8x64xf32>, vector<8xi32>, vector<8xi1>""")


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_gather_and_scatter_match_numpy(seed):
    rng = np.random.default_rng(seed)
    src = rng.standard_normal((L, 64)).astype(np.float32)
    offs = np.stack([rng.permutation(np.arange(-32, 32))[:8] for _ in range(L)]).astype(np.int32)  # distinct per row
    g, gm, dst = np.zeros((L, 8), np.float32), np.zeros((L, 8), np.float32), np.zeros((L, 64), np.float32)
    run(GATHER, [src, offs, g, gm, dst])
    cols = 32 + offs
    want = np.take_along_axis(src, cols, axis=1)
    assert np.array_equal(g, want)
    assert np.array_equal(gm, np.where(offs >= 0, want, -1.0))
    expect = np.zeros((L, 64), np.float32)
    np.put_along_axis(expect, cols, want, axis=1)
    np.put_along_axis(expect, np.where(offs >= 0, cols, 0), np.where(offs >= 0, 2 * want, expect[:, :1]), axis=1)
    assert np.array_equal(dst, expect)


def test_gather_outside_the_last_axis_names_the_lane():
    offs = np.zeros((L, 8), np.int32)
    offs[3, 5] = 32  # 32 + 32 is past the 64 columns
    with pytest.raises(hx.HrxError, match=r"element 5: coordinate 64 outside the last axis of extent 64 .*work-item \(3, 0, 0\)"):
        run(GATHER, [np.zeros((L, 64), np.float32), offs, *[np.zeros((L, 8), np.float32)] * 2, np.zeros((L, 64), np.float32)])


@settings(max_examples=8, deadline=None)
@given(width=st.integers(1, 8), seed=st.integers(0, 2**32 - 1))
def test_bitpack_round_trip_at_every_width(width, seed):
    nbytes = 4 * width  # 32 fields of `width` bits
    src = kernel("%c: buffer, %p: buffer, %u: buffer, %s: buffer", f"""
  %cv = buffer.view %c[%z] : buffer -> view<8x32xi8>
  %codes = vector.load %cv[%t, %c0] : view<8x32xi8> -> vector<32xi8>
  %packed = vector.bitpack<{width}> %codes : vector<32xi8> -> vector<{nbytes}xi8>
  %un = vector.bitunpacku<{width}> %packed : vector<{nbytes}xi8> -> vector<32xi8>
  %sn = vector.bitunpacks<{width}> %packed : vector<{nbytes}xi8> -> vector<32xi8>
  %pv = buffer.view %p[%z] : buffer -> view<8x{nbytes}xi8>
  %uv = buffer.view %u[%z] : buffer -> view<8x32xi8>
  %sv = buffer.view %s[%z] : buffer -> view<8x32xi8>
  vector.store %packed, %pv[%t, %c0] : vector<{nbytes}xi8>, view<8x{nbytes}xi8>
  vector.store %un, %uv[%t, %c0] : vector<32xi8>, view<8x32xi8>
  vector.store %sn, %sv[%t, %c0] : vector<32xi8>, view<8x32xi8>""")
    codes = np.random.default_rng(seed).integers(-128, 128, (L, 32)).astype(np.int8)
    p, u, s = np.zeros((L, nbytes), np.int8), np.zeros((L, 32), np.int8), np.zeros((L, 32), np.int8)
    run(src, [codes, p, u, s])
    low = codes.view(np.uint8).astype(np.int64) & ((1 << width) - 1)  # the bits bitpack keeps
    stream = ((low[..., None] >> np.arange(width)) & 1).reshape(L, -1).astype(np.uint8)
    assert np.array_equal(p.view(np.uint8), np.packbits(stream, axis=1, bitorder="little"))
    assert np.array_equal(u.view(np.uint8), low)  # zero-extended (at width 8 that is every bit of the lane)
    assert np.array_equal(s, np.where(low >= 1 << (width - 1), low - (1 << width), low))
