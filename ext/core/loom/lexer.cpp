#include "loom/lexer.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace hrx::loom {

void Diags::error(const char* code, std::string message, Location loc) {
    if (errors >= kMaxErrors) {
        list.push_back({Diagnostic::Severity::Error, "PARSE/012",
                        "too many errors (" + std::to_string(kMaxErrors) + "), stopping", loc});
        ++errors;
        throw Stop{};
    }
    list.push_back({Diagnostic::Severity::Error, code, std::move(message), loc});
    ++errors;
}

void Diags::warning(const char* code, std::string message, Location loc) {
    list.push_back({Diagnostic::Severity::Warning, code, std::move(message), loc});
}

std::string describe(const Token& t) {
    switch (t.kind) {
        case Tok::Eof: return "end of input";
        case Tok::Value: return "'%" + t.text + "'";
        case Tok::Symbol: return "'@" + t.text + "'";
        case Tok::Hash: return "'#" + t.text + "'";
        case Tok::Label: return "'^" + t.text + "'";
        case Tok::String: return "string \"" + t.text + "\"";
        case Tok::Punct: return t.punct == 'A' ? "'->'" : std::string("'") + t.punct + "'";
        default: return "'" + t.text + "'";
    }
}

size_t invalid_utf8_at(std::string_view s) {
    size_t i = 0, n = s.size();
    while (i < n) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) { ++i; continue; }
        int len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (len == 0 || i + len > n) return i;
        uint32_t cp = c & (0xFF >> (len + 1));
        for (int k = 1; k < len; ++k) {
            unsigned char d = static_cast<unsigned char>(s[i + k]);
            if ((d & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (d & 0x3F);
        }
        // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
        static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
        i += len;
    }
    return std::string_view::npos;
}

namespace {
bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool ident_char(char c) { return ident_start(c) || digit(c); }
}  // namespace

Lexer::Lexer(std::string_view source, Diags& diags) : src_(source), diags_(diags) {}

void Lexer::advance(size_t n) {
    for (size_t k = 0; k < n && pos_.at < src_.size(); ++k) {
        unsigned char c = static_cast<unsigned char>(src_[pos_.at++]);
        if (c == '\n') {
            ++pos_.line;
            pos_.col = 1;
        } else if ((c & 0xC0) != 0x80) {
            ++pos_.col;  // columns count code points: continuation bytes do not advance
        }
    }
}

void Lexer::skip_space() {
    while (pos_.at < src_.size()) {
        char c = src_[pos_.at];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            advance(1);
        } else if (c == '/' && pos_.at + 1 < src_.size() && src_[pos_.at + 1] == '/') {
            while (pos_.at < src_.size() && src_[pos_.at] != '\n') advance(1);
        } else {
            break;
        }
    }
}

const Token& Lexer::peek() {
    if (!have_peek_) {
        lex(peek_);
        have_peek_ = true;
    }
    return peek_;
}

Token Lexer::next() {
    peek();
    have_peek_ = false;
    last_end_ = peek_.end;
    return std::move(peek_);
}

bool Lexer::adjacent(char c) {
    const Token& t = peek();
    return t.begin == last_end_ && t.kind == Tok::Punct && t.punct == c;
}

void Lexer::lex(Token& t) {
    for (;;) {
        skip_space();
        t = Token{};
        t.loc = here();
        t.begin = pos_.at;
        if (pos_.at >= src_.size()) {
            t.kind = Tok::Eof;
            t.end = pos_.at;
            return;
        }
        const size_t start = pos_.at;
        const char c = src_[start];
        auto finish = [&](Tok kind, size_t len) {
            t.kind = kind;
            advance(len);
            t.end = pos_.at;
        };
        if (ident_start(c)) {
            size_t e = start + 1;
            while (e < src_.size()) {
                char d = src_[e];
                if (ident_char(d) || d == '.' || (d == '-' && e + 1 < src_.size() && src_[e + 1] != '>')) ++e;
                else break;
            }
            t.text.assign(src_.substr(start, e - start));
            finish(Tok::Ident, e - start);
            return;
        }
        if (c == '%' || c == '@' || c == '#' || c == '^') {
            const bool dots = c != '%';
            size_t e = start + 1;
            while (e < src_.size()) {
                char d = src_[e];
                if (ident_char(d) || (dots && (d == '.' || d == '-'))) ++e;
                else break;
            }
            if (e == start + 1) {
                diags_.error("PARSE/024", std::string("bare sigil '") + c + "' with no name", t.loc);
                advance(1);
                continue;
            }
            t.text.assign(src_.substr(start + 1, e - start - 1));
            finish(c == '%' ? Tok::Value : c == '@' ? Tok::Symbol : c == '#' ? Tok::Hash : Tok::Label, e - start);
            return;
        }
        if (c == '-' && start + 1 < src_.size() && src_[start + 1] == '>') {
            t.punct = 'A';
            t.text = "->";
            finish(Tok::Punct, 2);
            return;
        }
        if (digit(c) || (c == '-' && start + 1 < src_.size() && (digit(src_[start + 1]) || src_[start + 1] == 'i' ||
                                                                 src_[start + 1] == 'n'))) {
            size_t e = start + (c == '-' ? 1 : 0);
            const bool negative = c == '-';
            if (src_.substr(e, 3) == "inf" || src_.substr(e, 3) == "nan") {
                bool inf = src_[e] == 'i';
                e += 3;
                if (e < src_.size() && ident_char(src_[e])) {
                    diags_.error("PARSE/025", "unexpected character '-'", t.loc);
                    advance(1);
                    continue;
                }
                t.f = inf ? -std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::quiet_NaN();
                t.text.assign(src_.substr(start, e - start));
                finish(Tok::Float, e - start);
                return;
            }
            if (!digit(src_[e])) {
                diags_.error("PARSE/025", "unexpected character '-'", t.loc);
                advance(1);
                continue;
            }
            bool is_float = false;
            if (src_[e] == '0' && e + 1 < src_.size() && (src_[e + 1] == 'x' || src_[e + 1] == 'X') && e + 2 < src_.size() &&
                std::isxdigit(static_cast<unsigned char>(src_[e + 2]))) {
                e += 2;
                while (e < src_.size() && std::isxdigit(static_cast<unsigned char>(src_[e]))) ++e;
            } else {
                while (e < src_.size() && digit(src_[e])) ++e;
                if (e + 1 < src_.size() && src_[e] == '.' && digit(src_[e + 1])) {
                    is_float = true;
                    ++e;
                    while (e < src_.size() && digit(src_[e])) ++e;
                }
                if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
                    size_t x = e + 1;
                    if (x < src_.size() && (src_[x] == '+' || src_[x] == '-')) ++x;
                    if (x < src_.size() && digit(src_[x])) {
                        is_float = true;
                        e = x;
                        while (e < src_.size() && digit(src_[e])) ++e;
                    }
                }
            }
            t.text.assign(src_.substr(start, e - start));
            if (is_float) {
                t.f = std::strtod(t.text.c_str(), nullptr);
                finish(Tok::Float, e - start);
            } else {
                errno = 0;
                const char* digits = t.text.c_str() + (negative ? 1 : 0);
                const bool hex = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
                unsigned long long mag = std::strtoull(hex ? digits + 2 : digits, nullptr, hex ? 16 : 10);
                const bool overflow = errno == ERANGE || (negative ? mag > (1ull << 63) : mag > UINT64_MAX);
                finish(Tok::Int, e - start);
                if (overflow) {
                    diags_.error("PARSE/015", "integer literal " + t.text + " does not fit in 64 bits", t.loc);
                }
                // Unsigned spellings up to 2^64-1 keep their bit pattern (i64 constants).
                t.i = negative ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
            }
            return;
        }
        if (c == '"') {
            size_t e = start + 1;
            std::string out;
            bool closed = false, bad = false;
            while (e < src_.size()) {
                unsigned char d = static_cast<unsigned char>(src_[e]);
                if (d == '"') { closed = true; ++e; break; }
                if (d == '\n') break;
                if (d < 0x20) {
                    if (!bad) diags_.error("PARSE/023", "control character in string literal", t.loc);
                    bad = true;
                    ++e;
                    continue;
                }
                if (d == '\\') {
                    if (e + 1 >= src_.size()) break;
                    char x = src_[e + 1];
                    static const std::string_view simple = "\"\\/bfnrt";
                    static const char* decoded = "\"\\/\b\f\n\r\t";
                    auto k = simple.find(x);
                    if (k != std::string_view::npos) {
                        out.push_back(decoded[k]);
                        e += 2;
                        continue;
                    }
                    if (x == 'u') {
                        auto hex4 = [&](size_t at) -> long {
                            if (at + 4 > src_.size()) return -1;
                            long v = 0;
                            for (size_t k = at; k < at + 4; ++k) {
                                int h = std::isxdigit(static_cast<unsigned char>(src_[k]))
                                            ? (std::isdigit(static_cast<unsigned char>(src_[k])) ? src_[k] - '0'
                                                                                                 : (src_[k] | 0x20) - 'a' + 10)
                                            : -1;
                                if (h < 0) return -1;
                                v = v * 16 + h;
                            }
                            return v;
                        };
                        long cp = hex4(e + 2);
                        size_t used = 6;
                        if (cp >= 0xD800 && cp <= 0xDBFF && src_.substr(e + 6, 2) == "\\u") {
                            long low = hex4(e + 8);
                            if (low >= 0xDC00 && low <= 0xDFFF) {
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                                used = 12;
                            }
                        }
                        // A lone surrogate is not a character: a bad escape.
                        if (cp >= 0 && !(cp >= 0xD800 && cp <= 0xDFFF)) {
                            if (cp < 0x80) out.push_back(static_cast<char>(cp));
                            else if (cp < 0x800) {
                                out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
                                out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
                            } else if (cp < 0x10000) {
                                out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
                                out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
                                out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
                            } else {
                                out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
                                out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
                                out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
                                out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
                            }
                            e += used;
                            continue;
                        }
                    }
                    if (!bad) diags_.error("PARSE/023", std::string("bad escape '\\") + x + "' in string literal", t.loc);
                    bad = true;
                    e += 2;
                    continue;
                }
                out.push_back(static_cast<char>(d));
                ++e;
            }
            if (!closed) {
                diags_.error("PARSE/005", "unterminated string literal", t.loc);
            }
            t.text = std::move(out);
            finish(Tok::String, e - start);
            return;
        }
        static const std::string_view puncts = "(){}[]<>=:,|";
        if (puncts.find(c) != std::string_view::npos) {
            t.punct = c;
            t.text.assign(1, c);
            finish(Tok::Punct, 1);
            return;
        }
        // Quote and skip the whole code point (the source is valid UTF-8).
        const unsigned char lead = static_cast<unsigned char>(c);
        const size_t len = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : 4;
        diags_.error("PARSE/025", "unexpected character '" + std::string(src_.substr(start, len)) + "'", t.loc);
        advance(len);
    }
}

std::string_view Lexer::take_type_text(Location& loc) {
    const Token& t = peek();
    loc = t.loc;
    // Re-scan from the token's start at character level; discard the peek.
    pos_.at = t.begin;
    pos_.line = t.loc.line;
    pos_.col = t.loc.column;
    have_peek_ = false;
    const size_t start = pos_.at;
    size_t e = start;
    while (e < src_.size() && (ident_char(src_[e]) || src_[e] == '.' || src_[e] == '-') &&
           !(src_[e] == '-' && e + 1 < src_.size() && src_[e + 1] == '>'))
        ++e;
    if (e < src_.size() && src_[e] == '<' && e > start) {
        int depth = 0;
        size_t k = e;
        for (; k < src_.size(); ++k) {
            char d = src_[k];
            if (d == '\n') break;
            if (d == '-' && k + 1 < src_.size() && src_[k + 1] == '>') { ++k; continue; }
            if (d == '<') ++depth;
            if (d == '>' && --depth == 0) break;
        }
        if (depth != 0) {
            advance(e - start);
            diags_.error("PARSE/026", "unterminated '<' in type", loc);
            last_end_ = pos_.at;
            return {};
        }
        e = k + 1;
    }
    advance(e - start);
    last_end_ = pos_.at;
    return src_.substr(start, e - start);
}

std::string_view Lexer::take_braced_text() {
    const Token& t = peek();
    pos_.at = t.begin;
    pos_.line = t.loc.line;
    pos_.col = t.loc.column;
    have_peek_ = false;
    const size_t start = pos_.at + 1;
    int depth = 0;
    size_t k = pos_.at;
    for (; k < src_.size(); ++k) {
        char d = src_[k];
        if (d == '"') {
            for (++k; k < src_.size() && src_[k] != '"' && src_[k] != '\n'; ++k)
                if (src_[k] == '\\') ++k;
            continue;
        }
        if (d == '/' && k + 1 < src_.size() && src_[k + 1] == '/') {
            while (k < src_.size() && src_[k] != '\n') ++k;
            continue;
        }
        if (d == '{') ++depth;
        if (d == '}' && --depth == 0) break;
    }
    if (k >= src_.size()) {
        diags_.error("PARSE/003", "unterminated asm body: expected '}'", t.loc);
        advance(src_.size() - pos_.at);
        last_end_ = pos_.at;
        return src_.substr(start);
    }
    advance(k + 1 - pos_.at);
    last_end_ = pos_.at;
    return src_.substr(start, k - start);
}

}  // namespace hrx::loom
