"""Loom programs of the API tests (our own, written for these tests).

SCALE_F32 @scale_f32 (GPU): workload (%count: index), 256-wide workgroups,
    ceil(count / 256) of them; device (%count: index, %alpha: f32, %x, %y):
    y[i] = alpha * x[i] for i < count (float32). %alpha is assumed finite
    (checked mode reports a NaN or infinite alpha).
DOUBLE_I32 @double_i32 (NPU): config double.records (1..=4096); bindings
    src READ, dst WRITE of records x 16 int32: dst = 2 * src (wrapping).
AXPY_F32 @axpy_f32 (GPU): (%count, %alpha: f32, %x, %y, %out):
    out[i] = alpha * x[i] + y[i] (the product and the sum each rounded to float32).
"""

SCALE_F32 = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("scale_f32") @scale_f32(%count: index) {
  %one = index.constant 1 : index
  %width = index.constant 256 : index
  %spare = index.constant 255 : index
  %n = index.assume %count [range(%count, 1, 1073741824)] : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
} launch(%count: index, %alpha: f32, %x: buffer, %y: buffer) {
  %width = index.constant 256 : index
  %origin = index.constant 0 : offset
  %xa, %ya = buffer.assume.alignment %x, %y {minimum_alignment = 4} : buffer, buffer
  %a = scalar.assume %alpha [finite(%alpha)] : f32
  %item = kernel.workitem.id<x> : index
  %group = kernel.workgroup.id<x> : index
  %first = index.mul %group, %width : index
  %i = index.add %first, %item : index
  %xs = buffer.view %xa[%origin] : buffer -> view<[%count]xf32>
  %ys = buffer.view %ya[%origin] : buffer -> view<[%count]xf32>
  %inside = index.cmp ult, %i, %count : index
  scf.if %inside {
    %v = view.load %xs[%i] : view<[%count]xf32> -> f32
    %r = scalar.mulf %a, %v : f32
    view.store %r, %ys[%i] : f32, view<[%count]xf32>
  }
  kernel.return
}
"""

DOUBLE_I32 = """\
aie2p.target<array> @array
aie2p.target<core> @core
config.decl @double.records : %value: index where [range(%value, 1, 4096)]
pipeline.def<kernel> public target(@array) @double_i32() launch(%src: buffer, %dst: buffer) {
  %lanes = index.constant 1 : index
  %origin = index.constant 0 : offset
  %records = config.get @double.records : index
  %workers = group.create %lanes : index -> group
  %src_view = buffer.view %src[%origin] : buffer -> view<[%records]x16xi32>
  %dst_view = buffer.view %dst[%origin] : buffer -> view<[%records]x16xi32>
  %in = pipeline.read %src_view on %workers : view<[%records]x16xi32>, group -> pipeline.flow<tile<16xi32>>
  %out = pipeline.stage @double_record on %workers(%in) : (group, pipeline.flow<tile<16xi32>>) -> (pipeline.flow<tile<16xi32>>)
  pipeline.write %out to %dst_view : pipeline.flow<tile<16xi32>>, view<[%records]x16xi32>
  pipeline.return
}
func.def target(@core) @double_record(%in: buffer, %out: buffer) {
  %a, %b = buffer.assume.alignment %in, %out {minimum_alignment = 64} : buffer, buffer
  %origin = index.constant 0 : offset
  %iv = buffer.view %a[%origin] : buffer -> view<16xi32>
  %ov = buffer.view %b[%origin] : buffer -> view<16xi32>
  %v = vector.load %iv[0] : view<16xi32> -> vector<16xi32>
  %twos = vector.constant 2 : vector<16xi32>
  %d = vector.muli %v, %twos : vector<16xi32>
  vector.store %d, %ov[0] : vector<16xi32>, view<16xi32>
  func.return
}
"""

AXPY_F32 = """\
amdgpu.target<gfx1151> @gpu
kernel.def target(@gpu) export("axpy_f32") @axpy_f32(%count: index) {
  %one = index.constant 1 : index
  %width = index.constant 128 : index
  %spare = index.constant 127 : index
  %n = index.assume %count [range(%count, 1, 1073741824)] : index
  %padded = index.add %n, %spare : index
  %groups = index.div %padded, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
} launch(%count: index, %alpha: f32, %x: buffer, %y: buffer, %out: buffer) {
  %width = index.constant 128 : index
  %origin = index.constant 0 : offset
  %item = kernel.workitem.id<x> : index
  %group = kernel.workgroup.id<x> : index
  %first = index.mul %group, %width : index
  %i = index.add %first, %item : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%count]xf32>
  %ys = buffer.view %y[%origin] : buffer -> view<[%count]xf32>
  %os = buffer.view %out[%origin] : buffer -> view<[%count]xf32>
  %inside = index.cmp ult, %i, %count : index
  scf.if %inside {
    %xv = view.load %xs[%i] : view<[%count]xf32> -> f32
    %yv = view.load %ys[%i] : view<[%count]xf32> -> f32
    %p = scalar.mulf %alpha, %xv : f32
    %r = scalar.addf %p, %yv : f32
    view.store %r, %os[%i] : f32, view<[%count]xf32>
  }
  kernel.return
}
"""


def workgroups(count, width=256):
    """The grid the launch programs above compute: ceil(count / width) workgroups."""
    return (count + width - 1) // width

# @peak_f32 (GPU): (%count, %x, %peak): peak[0] = max(peak[0], x[i]) by a device-scope float
# atomic max (maxnumf), the operation gfx1151 does not apply to coherent (HostVisible) memory.
PEAK_F32 = """\
kernel.def @peak_f32(%count: index) {
  %one = index.constant 1 : index
  %width = index.constant 64 : index
  %spare = index.constant 63 : index
  %padded = index.add %count, %spare : index
  %groups = index.div %padded, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
} launch(%count: index, %x: buffer, %peak: buffer) {
  %origin = index.constant 0 : offset
  %zero = index.constant 0 : index
  %i = kernel.workitem.dispatch.id<x> : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%count]xf32>
  %ps = buffer.view %peak[%origin] : buffer -> view<1xf32>
  %inside = index.cmp ult, %i, %count : index
  scf.if %inside {
    %v = view.load %xs[%i] : view<[%count]xf32> -> f32
    %old = view.atomic.rmw<maxnumf> %v, %ps[%zero] {ordering = relaxed, scope = device} : f32, view<1xf32> -> f32
  }
  kernel.return
}
"""

# @peak_f32_cas (GPU): what @peak_f32 computes, by HRX's remedy for the gfx1151 float atomic max
# caveat: an integer compare-and-swap loop over the float's bits. Each work-item reads the i32 bits
# of peak[0], and until its exchange succeeds, offers maxnumf(current, x[i]) in their place.
PEAK_F32_CAS = """\
kernel.def @peak_f32_cas(%count: index) {
  %one = index.constant 1 : index
  %width = index.constant 64 : index
  %spare = index.constant 63 : index
  %padded = index.add %count, %spare : index
  %groups = index.div %padded, %width : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%width, %one, %one) : index
} launch(%count: index, %x: buffer, %peak: buffer) {
  %origin = index.constant 0 : offset
  %zero = index.constant 0 : index
  %i = kernel.workitem.dispatch.id<x> : index
  %xs = buffer.view %x[%origin] : buffer -> view<[%count]xf32>
  %bits = buffer.view %peak[%origin] : buffer -> view<1xi32>
  %inside = index.cmp ult, %i, %count : index
  scf.if %inside {
    %v = view.load %xs[%i] : view<[%count]xf32> -> f32
    %first = view.atomic.load %bits[%zero] {ordering = relaxed, scope = device} : view<1xi32> -> i32
    %no = scalar.constant 0 : i1
    %yes = scalar.constant 1 : i1
    %last, %stored = scf.while(%seen = %first : i32, %won = %no : i1) -> (i32, i1) {
      %again = scalar.xori %won, %yes : i1
      scf.condition %again, %seen, %won : i1, i32, i1
    } do(%expect: i32, %lost: i1) {
      %current = scalar.bitcast %expect : i32 to f32
      %best = scalar.maxnumf %current, %v : f32
      %offer = scalar.bitcast %best : f32 to i32
      %old, %ok = view.atomic.cmpxchg %expect, %offer, %bits[%zero] {success = relaxed, failure = relaxed, scope = device} : i32, i32, view<1xi32> -> i32, i1
      scf.yield %old, %ok : i32, i1
    }
  }
  kernel.return
}
"""
