// specialize(): HRX Module::compile's front half (reference loom.md §1.4,
// §1.8, §5.1): key rules, root lookup, target compatibility, config binding
// under require-resolved (only keys reachable from the root), declaration
// predicates, and template selection at each reachable apply site.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

#include "loom/catalogue.h"
#include "loom/frontend.h"
#include "loom/internal.h"
#include "loom/plan.h"

namespace hrx::loom {
namespace {

bool valid_key(const std::string& s) {
    if (s.empty()) return false;
    for (unsigned char c : s)
        if (!(std::isalnum(c) || c == '.' || c == '_' || c == '-') || c >= 0x80) return false;
    return true;
}

struct Num {
    bool is_float = false;
    int64_t i = 0;
    double f = 0.0;
    double as_double() const { return is_float ? f : static_cast<double>(i); }
};

int compare(const Num& a, const Num& b) {
    if (!a.is_float && !b.is_float) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
    double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : x > y ? 1 : 0;
}

// True/false when every argument is known, nullopt when one is not (an
// unprovable predicate).
std::optional<bool> eval_pred(const Predicate& p, const std::function<std::optional<Num>(const PredArg&)>& arg) {
    std::vector<Num> a;
    for (const PredArg& x : p.args) {
        auto v = arg(x);
        if (!v) return std::nullopt;
        a.push_back(*v);
    }
    const std::string& n = p.name;
    auto need = [&](size_t k) { return a.size() == k; };
    if (n == "range" && need(3)) return compare(a[0], a[1]) >= 0 && compare(a[0], a[2]) <= 0;
    if (n == "mul" && need(2)) return !a[0].is_float && !a[1].is_float && a[1].i != 0 && a[0].i % a[1].i == 0;
    if (n == "pow2" && need(1)) return !a[0].is_float && a[0].i > 0 && (a[0].i & (a[0].i - 1)) == 0;
    if (need(2)) {
        int c = compare(a[0], a[1]);
        if (n == "eq") return c == 0;
        if (n == "ne") return c != 0;
        if (n == "lt") return c < 0;
        if (n == "le") return c <= 0;
        if (n == "gt") return c > 0;
        if (n == "ge") return c >= 0;
        if (n == "min") return c >= 0;  // min(v, k): k is v's lower bound
        if (n == "max") return c <= 0;  // max(v, k): k is v's upper bound
    }
    if (need(1)) {
        double x = a[0].as_double();
        if (n == "not_nan") return !std::isnan(x);
        if (n == "not_inf") return !std::isinf(x);
        if (n == "finite") return std::isfinite(x);
    }
    return false;  // wrong arity: the verifier reports it (STRUCTURE/021)
}

std::string num_str(const Num& n) {
    if (!n.is_float) return std::to_string(n.i);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", n.f);
    return buf;
}

std::string pred_str(const Predicate& p, const std::vector<Op::ValueInfo>* values) {
    std::string s = p.name + "(";
    for (size_t k = 0; k < p.args.size(); ++k) {
        const PredArg& a = p.args[k];
        if (k) s += ", ";
        if (a.is_value()) s += values && a.value < static_cast<ValueId>(values->size()) ? "%" + (*values)[a.value].name : "%?";
        else s += a.is_float ? num_str({true, 0, a.f}) : std::to_string(a.i);
    }
    return s + ")";
}

// Parses a config spelling for its declared type.
std::optional<Num> parse_config_value(const std::string& text, ScalarKind type) {
    Num n;
    if (scalar_is_float(type)) {
        char* end = nullptr;
        errno = 0;
        n.is_float = true;
        if (text == "inf" || text == "-inf" || text == "nan" || text == "-nan") {
            n.f = text[0] == '-' ? (text[1] == 'i' ? -INFINITY : -NAN) : (text[0] == 'i' ? INFINITY : NAN);
            return n;
        }
        n.f = std::strtod(text.c_str(), &end);
        if (text.empty() || *end || errno == ERANGE) return std::nullopt;
        return n;
    }
    if (type == ScalarKind::I1) {
        if (text == "true" || text == "1") n.i = 1;
        else if (text == "false" || text == "0") n.i = 0;
        else return std::nullopt;
        return n;
    }
    if (type == ScalarKind::None) return std::nullopt;
    const bool neg = !text.empty() && text[0] == '-';
    std::string digits = text.substr(neg ? 1 : 0);
    const bool hex = digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
    if (digits.empty() || (hex && digits.size() == 2)) return std::nullopt;
    for (size_t k = hex ? 2 : 0; k < digits.size(); ++k)
        if (!(hex ? std::isxdigit(static_cast<unsigned char>(digits[k])) : std::isdigit(static_cast<unsigned char>(digits[k]))))
            return std::nullopt;
    errno = 0;
    unsigned long long mag = std::strtoull(digits.c_str() + (hex ? 2 : 0), nullptr, hex ? 16 : 10);
    if (errno == ERANGE) return std::nullopt;
    const int bits = scalar_bits(type);
    // Signed spellings down to -2^(N-1); unsigned up to 2^N - 1 (index and
    // offset: the int64 domain the emulator computes in).
    const bool address = scalar_is_address(type);
    const unsigned long long max_pos = address ? (1ull << 63) - 1 : bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
    const unsigned long long max_neg = bits >= 64 || address ? (1ull << 63) : (1ull << (bits - 1));
    if (neg ? mag > max_neg : mag > max_pos) return std::nullopt;
    n.i = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
    return n;
}

class Specializer {
public:
    Specializer(const Module& m, const Specialization& spec) : m_(m), spec_(spec) {}

    void run(Specialized& out) {
        const bool gpu = spec_.target == kGpuTarget;
        const Op* root = m_.find(spec_.symbol);
        if (!root) {
            error("SYMBOL/001", "no symbol '@" + spec_.symbol + "' in the module", {});
            throw CompileError(std::move(diags_));
        }
        const char* want = gpu ? "kernel.def" : "pipeline.def";
        if (root->name != want) {
            refuse_uncompiled_root(*root);
            error("TARGET/001",
                  "'@" + spec_.symbol + "' is a " + root->name + "; compiling for " + spec_.target + " needs a " + want,
                  root->loc);
            throw CompileError(std::move(diags_));
        }
        out.root = root;
        out.facts.target = spec_.target;
        out.facts.subgroup_size = gpu ? 32 : 0;
        out.facts.index_bits = 32;
        out.facts.offset_bits = 64;
        if (const Op* t = target_of(*root)) {
            if (!compatible(*t)) {
                error("TARGET/002",
                      "'@" + spec_.symbol + "' targets @" + t->symbol + " (" + t->name +
                          (t->params.empty() ? "" : "<" + t->params[0] + ">") + "), which is not compatible with " +
                          spec_.target,
                      root->loc);
                throw CompileError(std::move(diags_));
            }
            if (const Attr* a = t->attr("subgroup_size"); a && a->kind == Attr::Kind::Int)
                out.facts.subgroup_size = static_cast<int>(a->i);
            if (const Attr* a = t->attr("index_bits"); a && a->kind == Attr::Kind::Int)
                out.facts.index_bits = static_cast<int>(a->i);
            if (const Attr* a = t->attr("offset_bits"); a && a->kind == Attr::Kind::Int)
                out.facts.offset_bits = static_cast<int>(a->i);
            // Facts the emulator divides by or sizes memory with: a hostile record
            // is refused here, before any of them is used.
            auto fact = [&](const char* name, int64_t got, bool ok, const char* want) {
                if (!ok)
                    error("TARGET/004", "target @" + t->symbol + " gives " + name + " = " + std::to_string(got) + "; the emulator takes " + want,
                          t->loc);
            };
            const Attr* sg = t->attr("subgroup_size");
            const int64_t sgv = sg && sg->kind == Attr::Kind::Int ? sg->i : out.facts.subgroup_size;
            if (gpu) fact("subgroup_size", sgv, sgv >= 1 && sgv <= 1024, "1 to 1024");
            const Attr* ib = t->attr("index_bits");
            const int64_t ibv = ib && ib->kind == Attr::Kind::Int ? ib->i : 32;
            fact("index_bits", ibv, ibv == 32 || ibv == 64, "32 or 64");
            const Attr* ob = t->attr("offset_bits");
            const int64_t obv = ob && ob->kind == Attr::Kind::Int ? ob->i : 64;
            fact("offset_bits", obv, obv == 32 || obv == 64, "32 or 64");
            if (!diags_.empty()) throw CompileError(std::move(diags_));
        }
        // Walk everything reachable from the root.
        std::vector<const Op*> work{root};
        std::set<const Op*> seen{root};
        while (!work.empty()) {
            const Op* fn = work.back();
            work.pop_back();
            walk_function(*fn, out, [&](const Op* callee) {
                if (callee && seen.insert(callee).second) work.push_back(callee);
            });
        }
        for (auto& [key, v] : bound_)
            if (v) out.config[key] = ConfigConstant{v->type, v->num.is_float ? 0 : v->num.i, v->num.as_double()};
        std::string canon;
        for (auto& [key, v] : bound_) {
            if (!v) continue;
            if (!canon.empty()) canon += ";";
            canon += key + "=" + num_str(v->num);
        }
        out.canonical_config = canon;
        if (!diags_.empty()) throw CompileError(std::move(diags_));
    }

private:
    struct Bound {
        ScalarKind type;
        Num num;
    };
    const Module& m_;
    const Specialization& spec_;
    std::vector<Diagnostic> diags_;
    std::map<std::string, std::optional<Bound>> bound_;  // nullopt: failed (already reported)

    // Note [Compiling a symbol the emulator does not plan]
    //   A root that is not a kernel (or pipeline) is refused with TARGET/001.
    //   When it is a catalogued op the emulator refuses (a check.case, a pass
    //   pipeline, a command program, target-low code, an opaque microkernel),
    //   or a host function holding such ops (kernel.launch), the catalogue's
    //   code and reason come first and say what to do instead; the root op
    //   itself is refused alone (TARGET/001 adds nothing to it).
    void refuse_uncompiled_root(const Op& root) {
        auto refusal = [&](const Op& op, const std::string& what) {
            const OpEntry* e = catalogue_find(op.name);
            if (!e || e->refusal.empty() || op_executed(op.name)) return false;
            error(std::string(e->refusal).c_str(),
                  "valid Loom, not executed by the emulator: " + what + (e->reason.empty() ? "" : " (" + std::string(e->reason) + ")"),
                  op.loc);
            return true;
        };
        if (refusal(root, root.name + (root.symbol.empty() ? "" : " @" + root.symbol))) throw CompileError(std::move(diags_));
        std::set<std::string> named;
        std::function<void(const Region&)> walk = [&](const Region& r) {
            for (const Op& op : r.ops) {
                if (named.insert(op.name).second) refusal(op, op.name);
                for (const Region& sub : op.regions) walk(sub);
            }
        };
        for (const Region& r : root.regions) walk(r);
    }

    void error(const char* code, std::string msg, Location loc) {
        diags_.push_back({Diagnostic::Severity::Error, code, std::move(msg), loc});
    }

    const Op* target_of(const Op& op) {
        const Attr* a = op.attr("target");
        if (!a || a->kind != Attr::Kind::Symbol) return nullptr;
        return m_.find(a->s);
    }
    bool compatible(const Op& t) {
        const std::string kind = t.params.empty() ? "" : t.params[0];
        if (t.name == "target.generic" || t.name == "target.decl") return true;
        if (spec_.target == kGpuTarget) return t.name == "amdgpu.target" && (kind == "gfx1151" || kind == "gfx11-generic");
        if (t.name != "aie2p.target") return false;
        const Attr* profile = t.attr("device_profile");
        return !profile || profile->s == kNpuTarget;
    }

    // The value of a config key, bound once: the binding, else config.def's
    // default; parsed for the declared type and checked against the
    // declaration's predicates.
    const std::optional<Bound>& bind(const std::string& key, Location use) {
        auto it = bound_.find(key);
        if (it != bound_.end()) return it->second;
        std::optional<Bound>& slot = bound_[key];
        const Op *decl = nullptr, *def = nullptr;
        for (const Op& op : m_.ops) {
            if (op.symbol != key) continue;
            if (op.name == "config.decl") decl = &op;
            if (op.name == "config.def") def = &op;
        }
        if (!decl && !def) {
            error("SYMBOL/001", "config key '@" + key + "' is not declared in the module", use);
            return slot;
        }
        const Op& typed = decl ? *decl : *def;
        ScalarKind type = typed.result_types.empty() ? ScalarKind::None : typed.result_types[0].elem;
        std::string text;
        auto given = spec_.config.find(key);
        if (given != spec_.config.end()) {
            text = given->second;
        } else if (def) {
            const Attr* v = def->attr("value");
            text = !v ? "" : v->kind == Attr::Kind::Float ? num_str({true, 0, v->f}) : std::to_string(v->i);
        } else {
            error("SYMBOL/005",
                  "config key '@" + key + "' has no value: bind it in the specialisation or give it a config.def",
                  use);
            return slot;
        }
        auto num = parse_config_value(text, type);
        if (!num) {
            error("PARSE/015", "config value '" + text + "' for '@" + key + "' is not a valid " + scalar_name(type) +
                                   " literal", use);
            return slot;
        }
        if (decl) {
            const ValueId self = decl->results.empty() ? kNoValue : decl->results[0];
            for (const Predicate& p : decl->preds) {
                auto ok = eval_pred(p, [&](const PredArg& a) -> std::optional<Num> {
                    if (a.is_value()) return a.value == self ? std::optional<Num>(*num) : std::nullopt;
                    return Num{a.is_float, a.i, a.f};
                });
                if (!ok || !*ok) {
                    error("SUBRANGE/001",
                          "config value " + text + " for '@" + key + "' violates " + pred_str(p, decl->values.get()),
                          p.loc);
                    return slot;
                }
            }
        }
        slot = Bound{type, *num};
        return slot;
    }

    // Constants known at an apply site: literals and bound config values.
    std::optional<Num> known(ValueId v, const std::unordered_map<ValueId, const Op*>& defs) {
        auto it = defs.find(v);
        if (it == defs.end()) return std::nullopt;
        const Op& op = *it->second;
        if (op.name == "index.constant" || op.name == "scalar.constant") {
            const Attr* a = op.attr("value");
            if (!a) return std::nullopt;
            if (a->kind == Attr::Kind::Float) return Num{true, 0, a->f};
            return Num{false, a->i, 0.0};
        }
        if (op.name == "config.get") {
            const auto& b = bind(op.callee, op.loc);
            if (b) return b->num;
        }
        if (op.name == "index.assume" || op.name == "scalar.assume") {
            for (size_t k = 0; k < op.results.size() && k < op.operands.size(); ++k)
                if (op.results[k] == v) return known(op.operands[k], defs);
        }
        return std::nullopt;
    }

    const Op* select(const Op& apply, const std::unordered_map<ValueId, const Op*>& defs) {
        const std::string family = apply.params.empty() ? "" : apply.params[0];
        const Op* best = nullptr;
        const Op* tie = nullptr;
        int64_t best_priority = 0;
        std::string rejected;
        for (const Op& cand : m_.ops) {
            if (cand.name != "template.def" || cand.params.empty() || cand.params[0] != family) continue;
            auto reject = [&](const std::string& why) { rejected += "\n  @" + cand.symbol + ": " + why; };
            static const Region kNoRegion;
            const Region& sig = cand.regions.empty() ? kNoRegion : cand.regions[0];
            bool types_ok = sig.args.size() == apply.operands.size() && cand.result_types.size() == apply.results.size();
            for (size_t k = 0; types_ok && k < sig.args.size(); ++k) {
                const Type& want = (*cand.values)[sig.args[k]].type;
                types_ok = k < apply.operand_types.size() && same_type(want, apply.operand_types[k]);
            }
            for (size_t k = 0; types_ok && k < cand.result_types.size(); ++k)
                types_ok = k < apply.result_types.size() && same_type(cand.result_types[k], apply.result_types[k]);
            if (!types_ok) {
                reject("types differ");
                continue;
            }
            if (const Op* t = target_of(cand); t && !compatible(*t)) {
                reject("target @" + t->symbol + " is not compatible with " + spec_.target);
                continue;
            }
            bool proven = true;
            for (const Predicate& p : cand.preds) {
                auto ok = eval_pred(p, [&](const PredArg& a) -> std::optional<Num> {
                    if (!a.is_value()) return Num{a.is_float, a.i, a.f};
                    for (size_t k = 0; k < sig.args.size(); ++k)
                        if (sig.args[k] == a.value) return known(apply.operands[k], defs);
                    return std::nullopt;
                });
                if (!ok || !*ok) {
                    reject(pred_str(p, cand.values.get()) + (ok ? " is false" : " is not proven") + " at this site");
                    proven = false;
                    break;
                }
            }
            if (!proven) continue;
            const Attr* pa = cand.attr("priority");
            int64_t priority = pa && pa->kind == Attr::Kind::Int ? pa->i : 0;
            if (!best || priority > best_priority) {
                best = &cand;
                best_priority = priority;
                tie = nullptr;
            } else if (priority == best_priority) {
                tie = &cand;
            }
        }
        if (!best) {
            error("SYMBOL/003",
                  "no implementation of template '" + family + "' applies at this site" +
                      (rejected.empty() ? std::string(" (the module defines none)") : rejected),
                  apply.loc);
            return nullptr;
        }
        if (tie) {
            error("SYMBOL/004",
                  "ambiguous template selection for '" + family + "': '@" + best->symbol + "' and '@" + tie->symbol +
                      "' both apply with priority " + std::to_string(best_priority),
                  apply.loc);
            return nullptr;
        }
        return best;
    }

    void walk_function(const Op& fn, Specialized& out, const std::function<void(const Op*)>& reach) {
        std::unordered_map<ValueId, const Op*> defs;
        std::function<void(const Op&)> visit = [&](const Op& op) {
            for (ValueId r : op.results) defs[r] = &op;
            if (op.name == "config.get") bind(op.callee, op.loc);
            if (op.name == "func.call" || op.name == "pipeline.stage" || op.name == "pipeline.reduce" ||
                op.name == "template.call")
                reach(m_.find(op.callee));
            if (op.name == "template.apply") {
                if (const Op* chosen = select(op, defs)) {
                    out.template_choice[&op] = chosen;
                    reach(chosen);
                }
            }
            for (const Region& r : op.regions)
                for (const Op& inner : r.ops) visit(inner);
        };
        for (const Region& r : fn.regions)
            for (const Op& op : r.ops) visit(op);
    }
};

}  // namespace

Specialized specialize(std::shared_ptr<const Module> module, const Specialization& spec) {
    if (!valid_key(spec.symbol))
        throw Error(ErrorKind::Message, "invalid Loom export or configuration key: '" + spec.symbol + "'");
    for (auto& [key, value] : spec.config)
        if (!valid_key(key)) throw Error(ErrorKind::Message, "invalid Loom export or configuration key: '" + key + "'");
    if (spec.target != kGpuTarget && spec.target != kNpuTarget)
        throw CompileError({{Diagnostic::Severity::Error, "TARGET/003",
                             "unknown compile target '" + spec.target + "' (the emulator compiles for " + kGpuTarget +
                                 " and " + kNpuTarget + ")",
                             {}}});
    Specialized out;
    out.module = module;
    out.symbol = spec.symbol;
    Specializer(*module, spec).run(out);
    return out;
}

}  // namespace hrx::loom
