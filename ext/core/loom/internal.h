// Shared between the frontend's translation units (parser, verifier,
// specialiser); not part of the frontend's interface.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "loom/ir.h"
#include "loom/lexer.h"

namespace hrx::loom {

// How the types written after `:` relate to an op's operands (verifier).
enum class TypeRule : uint8_t {
    Pairwise,    // one written type per operand, or one type shared by all
    ResultOnly,  // the written type is the result's (constants, alloca, splat)
    SkipFirst,   // select-like: the first operand is the condition/mask
    None,        // not checked
};

// Expected operand/result counts; kAny = not fixed, kSameAsOperands = one
// result per operand (assume ops).
inline constexpr int kAny = -1;
inline constexpr int kSameAsOperands = -2;

struct OpRule {
    std::string_view name;
    std::string_view format;   // the format program (parser.cpp, Note [Format programs])
    int operands = kAny;
    int results = kAny;
    TypeRule types = TypeRule::Pairwise;
    char domain = 0;           // 'i': integer operands, 'f': float operands (scalar or vector element)
};
const OpRule* find_rule(std::string_view name);

std::string type_str(const Type& t);
// Structural equality; dynamic extents compare equal to each other (they
// name values the verifier cannot relate).
bool same_type(const Type& a, const Type& b);
Type scalar_type(ScalarKind k);

bool is_function_like(std::string_view op);
bool is_symbol_op(std::string_view op);
// "kernel", "pipeline", "func", "config", "target", "template", "low".
const char* symbol_kind(std::string_view op);

void verify_module(const Module& m, Diags& d);
std::string sha256_hex(std::string_view data);

}  // namespace hrx::loom
