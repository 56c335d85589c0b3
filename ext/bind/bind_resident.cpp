// Resident GPU–NPU exchange: ResidentStartup, ResidentProgram, ResidentSession.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "gil.h"
#include "errors.h"
#include "py_types.h"
#include "runtime/resident.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace hrx::bind {
namespace {

// One participant as prepared for a session: what it runs and where.
struct ResidentProgram {
    Engine engine = Engine::Gpu;
    ResidentConfig config;
    BufferView exchange;
    std::optional<BufferView> control;
};

ResidentConfig config_from(uint32_t generations, uint32_t payload_words, uint32_t word_offset, uint32_t credits,
                           uint32_t slot_stride, uint32_t seed) {
    ResidentConfig c{generations, payload_words, word_offset, credits, slot_stride, seed};
    c.validate();
    return c;
}

bool same(const ResidentConfig& a, const ResidentConfig& b) {
    return a.generations == b.generations && a.payload_words == b.payload_words && a.word_offset == b.word_offset &&
           a.credits == b.credits && a.slot_stride == b.slot_stride && a.seed == b.seed;
}

}  // namespace

void bind_resident(nb::module_& m) {
    nb::class_<ResidentStartup>(m, "ResidentStartup",
                                "The startup word of a resident GPU–NPU exchange: a 64-byte allocation on a "
                                "coherent-GPU profile admitting both devices. Word 0: WAIT = 0, RUN = 1, ABORT = 2; "
                                "only the host writes it, once.")
        .def(nb::new_([](const GpuDevice& gpu, const NpuDevice& npu) {
                 if (gpu.runtime != npu.runtime)
                     fail(ErrorKind::Message, "ResidentStartup: the GPU and the NPU belong to different runtimes");
                 return std::make_shared<ResidentStartup>(gpu.runtime, npu.index);
             }),
             "gpu"_a, "npu"_a)
        .def_prop_ro("word", &ResidentStartup::word, "The Buffer holding the decision word.")
        .def_prop_ro("decision", [](const ResidentStartup& s) { return s.decision()->load(); },
                     "The published decision: 0 WAIT, 1 RUN, 2 ABORT.")
        .def(
            "gpu_program",
            [](const ResidentStartup&, nb::handle exchange, nb::handle control, uint32_t generations,
               uint32_t payload_words, uint32_t word_offset, uint32_t credits, uint32_t slot_stride, uint32_t seed) {
                return ResidentProgram{Engine::Gpu,
                                       config_from(generations, payload_words, word_offset, credits, slot_stride, seed),
                                       view_from_py(exchange, "gpu_program"), view_from_py(control, "gpu_program")};
            },
            "exchange"_a, "control"_a, nb::kw_only(), "generations"_a = 1, "payload_words"_a = 16,
            "word_offset"_a = 1, "credits"_a = 1, "slot_stride"_a = 256, "seed"_a = 1,
            "The emulated GPU participant: writes request slots in `exchange`, checks each response and writes "
            "its terminal state to word 48 of the 256-byte `control` block (1 complete, 2 aborted; word 49 "
            "completed generations, word 50 mismatches).")
        .def(
            "npu_program",
            [](const ResidentStartup&, nb::handle exchange, uint32_t generations, uint32_t payload_words,
               uint32_t word_offset, uint32_t credits, uint32_t slot_stride, uint32_t seed) {
                return ResidentProgram{Engine::Npu,
                                       config_from(generations, payload_words, word_offset, credits, slot_stride, seed),
                                       view_from_py(exchange, "npu_program"), std::nullopt};
            },
            "exchange"_a, nb::kw_only(), "generations"_a = 1, "payload_words"_a = 16, "word_offset"_a = 1,
            "credits"_a = 1, "slot_stride"_a = 256, "seed"_a = 1,
            "The emulated NPU participant: answers each request with request * 3 + generation (mod 2**32).");

    nb::class_<ResidentProgram>(m, "ResidentProgram",
                                "A prepared resident participant (from ResidentStartup.gpu_program/npu_program).")
        .def_prop_ro("engine", [](const ResidentProgram& p) { return engine_name(p.engine); }, "'gpu' or 'npu'.");

    nb::class_<ResidentSession>(m, "ResidentSession",
                                "A resident exchange (HRX ResidentSession): submit both participants in either "
                                "order, then start() (RUN) or abort() (ABORT, before start). One decision only.")
        .def(nb::new_([](std::shared_ptr<ResidentStartup> startup, const ResidentProgram& gpu_program,
                         const ResidentProgram& npu_program) {
                 if (gpu_program.engine != Engine::Gpu || npu_program.engine != Engine::Npu)
                     fail(ErrorKind::Message, "ResidentSession: expected a GPU program then an NPU program");
                 if (!same(gpu_program.config, npu_program.config))
                     fail(ErrorKind::Message, "ResidentSession: the two programs disagree on the exchange protocol "
                                              "(generations, payload_words, word_offset, credits, slot_stride, seed)");
                 const auto& a = gpu_program.exchange;
                 const auto& b = npu_program.exchange;
                 if (a.buffer->state() != b.buffer->state() || a.offset != b.offset || a.length != b.length)
                     fail(ErrorKind::Message, "ResidentSession: the two programs must share one exchange view");
                 return std::make_shared<ResidentSession>(std::move(startup), gpu_program.config, a, *gpu_program.control);
             }),
             "startup"_a, "gpu_program"_a, "npu_program"_a)
        .def("submit_gpu", &ResidentSession::submit_gpu, "Accept the GPU participant (once; again → BusyError).")
        .def("submit_npu", &ResidentSession::submit_npu, "Accept the NPU participant (once; again → BusyError).")
        .def("start", &ResidentSession::start, "Publish RUN; both participants must have been accepted.")
        .def("abort", &ResidentSession::abort, "Publish ABORT before start (not a cancellation of a running exchange).")
        .def("done", &ResidentSession::done, "Whether both participants have finished.")
        .def_prop_ro("decision", &ResidentSession::decision, "0 WAIT, 1 RUN, 2 ABORT.")
        .def(
            "wait",
            [](ResidentSession& s, std::optional<double> timeout) {
                timeout = timeout_arg(timeout, "ResidentSession.wait");
                ReleaseGil release;
                return s.wait(timeout);
            },
            "timeout"_a.none() = nb::none(),
            "Wait for both participants (a decision is required); False on timeout (timeouts as for "
            "Completion.wait). A failed participant → ExecutionError.");
}

}  // namespace hrx::bind
