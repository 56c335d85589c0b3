// Loom's tokenizer (reference loom.md §1.1) and the diagnostic sink the
// frontend shares. Tokens are produced on demand so that the parser can hand
// a shaped type (`view<[%n]x2xi32>`) to its own character-level scanner: in a
// shape list `x` separates dimensions, which no context-free token rule gets
// right (`0x4` is dim 0, then x).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loom/ir.h"

namespace hrx::loom {

// Collects diagnostics; the 21st error becomes PARSE/012 and stops the parse
// (hrx-rs stops source-to-low at 20).
struct Diags {
    static constexpr int kMaxErrors = 20;
    std::vector<Diagnostic> list;
    int errors = 0;
    struct Stop {};  // thrown once the limit is reached
    void error(const char* code, std::string message, Location loc);
    void warning(const char* code, std::string message, Location loc);
};

enum class Tok : uint8_t { Eof, Ident, Value, Symbol, Hash, Label, Int, Float, String, Punct };

struct Token {
    Tok kind = Tok::Eof;
    char punct = 0;         // Punct: the character; '>' of "->" is spelled 'A'
    std::string text;       // Ident/sigil payload (no sigil), decoded String
    int64_t i = 0;          // Int
    double f = 0.0;         // Float
    Location loc;
    size_t begin = 0, end = 0;  // byte offsets in the source
    bool is(char p) const { return kind == Tok::Punct && punct == p; }
    bool is_word(std::string_view w) const { return kind == Tok::Ident && text == w; }
};

std::string describe(const Token& t);  // for PARSE/003: the token as written

class Lexer {
public:
    Lexer(std::string_view source, Diags& diags);
    const Token& peek();
    Token next();
    // The raw text of a type starting at the next token: identifier
    // characters plus balanced `<...>`. Consumes it; PARSE/026 when a `<`
    // is never closed on its line (then returns an empty view).
    std::string_view take_type_text(Location& loc);
    // The raw text of a balanced `{...}` block starting at the next token
    // (which must be '{'), without the outer braces; for low.func.def asm.
    std::string_view take_braced_text();
    std::string_view source() const { return src_; }
    // True when the character right after the last consumed token is `c`
    // (no whitespace between), e.g. the `[` of an index list or `<` of params.
    bool adjacent(char c);

private:
    struct Pos {
        size_t at = 0;
        uint32_t line = 1, col = 1;
    };
    void lex(Token& t);
    void advance(size_t n);  // moves over n bytes, tracking line and code-point column
    void skip_space();
    Location here() const { return {pos_.line, pos_.col}; }
    std::string_view src_;
    Diags& diags_;
    Pos pos_;
    size_t last_end_ = 0;
    bool have_peek_ = false;
    Token peek_;
};

// Returns the offset of the first byte that is not valid UTF-8, or npos.
size_t invalid_utf8_at(std::string_view s);

}  // namespace hrx::loom
