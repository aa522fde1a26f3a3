// Small text helpers used across the host for one-line messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace plugtrain {

// {"a", "b"} -> "a, b"; an empty list gives `if_empty`.
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ",
                 const std::string& if_empty = "");

// The first line of a message (LibTorch and c10d errors often carry a C++ stack below it).
std::string first_line(const std::string& message);

// At most about `limit` characters: a longer text keeps its start and end around a note of how
// much was cut (a 10 MB key in an error message is no help to anyone).
std::string shortened(const std::string& text, std::size_t limit = 1000);

// FNV-1a, 64 bits: a checksum that is the same in every build (names that must be found again).
std::uint64_t fnv1a_64(const std::string& text);

// 'text' quoted for a POSIX shell (a generated script's arguments), whatever it holds.
std::string shell_quoted(const std::string& text);

// Text fit for a one-line message: control characters (C0, DEL, C1) and bytes that are not
// UTF-8 as \xNN, cut after `limit` bytes on a character's boundary (with "..." when cut).
std::string printable(const std::string& text, std::size_t limit = 64);

// A token's name in a vocabulary (classes.json) back to its bytes: each "<0xNN>" in it is the
// byte NN (a byte vocabulary's names, SentencePiece's byte pieces, the part of a character a BPE
// token holds); the rest is the name's own text.
std::string token_bytes(const std::string& name);

}  // namespace plugtrain
