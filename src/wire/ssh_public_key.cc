#include "wire/ssh_public_key.h"

#include <array>
#include <cstdio>
#include <cstdint>
#include <optional>
#include <vector>

namespace allot {
namespace {

constexpr size_t kMaxLine = 8192;
constexpr size_t kMinRsaBits = 2048;
constexpr size_t kMaxRsaBits = 16384;  // OpenSSH's own limit (SSHBUF_MAX_BIGNUM)

// The public key's wire form after the type string (RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709 §4,
// OpenSSH's PROTOCOL.u2f).
enum class Form { kEd25519, kRsa, kEcdsa, kSkEd25519, kSkEcdsa };
struct KeyType {
  std::string_view name;
  Form form;
  std::string_view curve;  // ECDSA: the curve string the body repeats
  size_t coordinate = 0;   // ECDSA: bytes per coordinate of the uncompressed point
};
constexpr std::array<KeyType, 7> kTypes = {{
    {"ssh-ed25519", Form::kEd25519, "", 0},
    {"ssh-rsa", Form::kRsa, "", 0},
    {"ecdsa-sha2-nistp256", Form::kEcdsa, "nistp256", 32},
    {"ecdsa-sha2-nistp384", Form::kEcdsa, "nistp384", 48},
    {"ecdsa-sha2-nistp521", Form::kEcdsa, "nistp521", 66},
    {"sk-ssh-ed25519@openssh.com", Form::kSkEd25519, "", 0},
    {"sk-ecdsa-sha2-nistp256@openssh.com", Form::kSkEcdsa, "nistp256", 32},
}};

const KeyType* FindType(std::string_view name) {
  for (const KeyType& t : kTypes)
    if (t.name == name) return &t;
  return nullptr;
}

std::string TypeList() {
  std::string out;
  for (const KeyType& t : kTypes) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

// Words that start an authorized_keys line's options (sshd(8), "AUTHORIZED_KEYS FILE FORMAT").
bool LooksLikeOptions(std::string_view word) {
  static constexpr std::array<std::string_view, 15> kFlags = {
      "agent-forwarding", "cert-authority", "no-agent-forwarding", "no-port-forwarding", "no-pty",
      "no-user-rc",       "no-X11-forwarding", "port-forwarding", "pty", "restrict",
      "user-rc",          "X11-forwarding", "no-touch-required", "touch-required", "verify-required"};
  if (word.find_first_of("=\",") != std::string_view::npos) return true;
  for (std::string_view f : kFlags)
    if (word == f) return true;
  return false;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with padding, as ssh-keygen writes it; the unused bits of the last character
// must be zero, so one key has one text.
Result<std::string> DecodeBase64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0)
    return Err(InvalidArgument("key: " + std::to_string(text.size()) +
                               " characters of base64: expected a non-empty multiple of 4"));
  size_t pad = 0;
  while (pad < 2 && text[text.size() - 1 - pad] == '=') ++pad;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < text.size() - pad; ++i) {
    int v = Base64Value(text[i]);
    if (v < 0)
      return Err(InvalidArgument("key: character " + std::to_string(i + 1) + " '" + std::string(1, text[i]) +
                                 "' is not base64: expected A-Z a-z 0-9 + / and '=' padding at the end"));
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if ((acc & ((1u << bits) - 1)) != 0)
    return Err(InvalidArgument("key: not canonical base64 (bits after the last byte are set)"));
  return out;
}

// Reads the SSH wire format's length-prefixed strings.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}
  std::optional<std::string_view> String() {
    if (data_.size() < 4) return std::nullopt;
    const auto* p = reinterpret_cast<const unsigned char*>(data_.data());
    uint64_t n = (uint64_t{p[0]} << 24) | (uint64_t{p[1]} << 16) | (uint64_t{p[2]} << 8) | p[3];
    if (n > data_.size() - 4) return std::nullopt;
    std::string_view s = data_.substr(4, n);
    data_.remove_prefix(4 + n);
    return s;
  }
  size_t left() const { return data_.size(); }

 private:
  std::string_view data_;
};

Status Bad(const KeyType& t, const std::string& what) {
  return InvalidArgument("key: not a " + std::string(t.name) + " public key: " + what);
}

// Bits of a positive mpint (RFC 4251 §5), or nullopt for a negative or empty one.
std::optional<size_t> MpintBits(std::string_view m) {
  if (m.empty() || (static_cast<unsigned char>(m[0]) & 0x80)) return std::nullopt;
  size_t i = 0;
  while (i < m.size() && m[i] == 0) ++i;
  if (i == m.size()) return std::nullopt;
  size_t bits = (m.size() - i) * 8;
  for (unsigned char top = static_cast<unsigned char>(m[i]); !(top & 0x80); top <<= 1) --bits;
  return bits;
}

Status CheckFields(const KeyType& t, WireReader& r) {
  switch (t.form) {
    case Form::kEd25519:
    case Form::kSkEd25519: {
      auto pk = r.String();
      if (!pk || pk->size() != 32)
        return Bad(t, "expected a 32-byte key, got " + (pk ? std::to_string(pk->size()) + " bytes" : "none"));
      break;
    }
    case Form::kRsa: {
      auto e = r.String();
      auto n = r.String();
      if (!e || !n || !MpintBits(*e) || !MpintBits(*n))
        return Bad(t, "expected a positive exponent and modulus");
      size_t bits = *MpintBits(*n);
      if (bits < kMinRsaBits || bits > kMaxRsaBits)
        return Bad(t, "a " + std::to_string(bits) + "-bit modulus: expected " + std::to_string(kMinRsaBits) +
                          " to " + std::to_string(kMaxRsaBits) + " bits");
      break;
    }
    case Form::kEcdsa:
    case Form::kSkEcdsa: {
      auto curve = r.String();
      if (!curve || *curve != t.curve)
        return Bad(t, "curve '" + std::string(curve ? *curve : "") + "': expected '" + std::string(t.curve) + "'");
      auto q = r.String();
      if (!q || q->size() != 1 + 2 * t.coordinate || (*q)[0] != 0x04)
        return Bad(t, "expected an uncompressed point of " + std::to_string(1 + 2 * t.coordinate) + " bytes");
      break;
    }
  }
  if (t.form == Form::kSkEd25519 || t.form == Form::kSkEcdsa) {
    auto application = r.String();
    if (!application || application->empty()) return Bad(t, "expected a FIDO application string (\"ssh:\")");
  }
  if (r.left() != 0) return Bad(t, std::to_string(r.left()) + " bytes after the key: expected none");
  return Status::Ok();
}

std::vector<std::string_view> SplitSpaces(std::string_view s) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ') ++i;
    if (i > start) words.push_back(s.substr(start, i - start));
  }
  return words;
}

}  // namespace

std::string SshPublicKey::Line() const { return type + " " + body + (comment.empty() ? "" : " " + comment); }

Result<SshPublicKey> ParseSshPublicKey(std::string_view line) {
  if (line.size() > kMaxLine)
    return Err(InvalidArgument("line: " + std::to_string(line.size()) + " bytes: expected at most " +
                               std::to_string(kMaxLine)));
  for (size_t i = 0; i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      const std::string what = c == '\n' ? "a newline" : "control character " + std::string(hex);
      return Err(InvalidArgument("line: " + what + " at byte " + std::to_string(i + 1) +
                                 ": expected one line of printable text"));
    }
  }
  std::vector<std::string_view> words = SplitSpaces(line);
  if (words.empty()) return Err(InvalidArgument("line: empty: expected 'TYPE BASE64 [COMMENT]'"));
  const KeyType* type = FindType(words[0]);
  if (type == nullptr) {
    bool type_later = false;
    for (size_t i = 1; i < words.size(); ++i) type_later = type_later || FindType(words[i]) != nullptr;
    if (type_later || LooksLikeOptions(words[0]))
      return Err(InvalidArgument("options '" + std::string(words[0]) +
                                 "': not accepted; expected the line to start with the key type (allot "
                                 "decides what a key may do)"));
    return Err(InvalidArgument("type '" + std::string(words[0]) + "': expected one of " + TypeList()));
  }
  if (words.size() < 2) return Err(InvalidArgument("key: missing: expected base64 after the type"));
  auto blob = DecodeBase64(words[1]);
  if (!blob) return Err(blob.error());
  WireReader reader(*blob);
  auto embedded = reader.String();
  if (!embedded)
    return Err(InvalidArgument("key: does not start with a type string: expected an OpenSSH public key"));
  if (*embedded != type->name)
    return Err(InvalidArgument("key: holds a '" + std::string(*embedded) + "' key but the line's type is '" +
                               std::string(type->name) + "': expected the same type in both"));
  if (Status s = CheckFields(*type, reader); !s.ok()) return Err(s);

  SshPublicKey key;
  key.type = std::string(type->name);
  key.body = std::string(words[1]);
  if (words.size() > 2) {
    // The comment runs from its first word to the last, inner spaces kept.
    const char* from = words[2].data();
    const char* to = words.back().data() + words.back().size();
    key.comment.assign(from, static_cast<size_t>(to - from));
    for (size_t i = 0; i < key.comment.size(); ++i)
      if (static_cast<unsigned char>(key.comment[i]) > 0x7e)
        return Err(InvalidArgument("comment: byte " + std::to_string(i + 1) +
                                   " is not ASCII: expected printable ASCII"));
  }
  return key;
}

}  // namespace allot
