// An OpenSSH public key line as a tenant registers it (`allot keys add`) and as the agent writes it
// into a booked node's authorized_keys: "TYPE BASE64 [COMMENT]". allotd checks a key when it is
// registered and the agent again before it authorises it, with this one function, so both refuse
// the same lines. Pure: no file, no crypto library, nothing of the agent.
//
// Refused, each naming the field ("line", "options", "type", "key", "comment") and what was
// expected:
//  - a control character anywhere (a newline would be a second key in authorized_keys); a line
//    over 8 KiB. The caller strips a file's final newline.
//  - options before the type (command=, from=, restrict, …): they change what a key may do, and
//    allot, not the tenant, writes authorized_keys.
//  - a type other than ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256/384/521 and the FIDO forms
//    sk-ssh-ed25519@openssh.com and sk-ecdsa-sha2-nistp256@openssh.com (DSA is gone from OpenSSH;
//    certificates need a CA allot does not run).
//  - a body that is not canonical base64, whose embedded type is not the line's, whose fields are
//    not that type's public key (sizes, curve, point form), or that has bytes after them.
//  - an RSA modulus under 2048 bits.
//  - a comment of anything but printable ASCII (it is shown by the CLI and stored as JSON).
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace allot {

struct SshPublicKey {
  std::string type;     // "ssh-ed25519"
  std::string body;     // base64, as given
  std::string comment;  // may be empty; spaces inside are kept
  // "TYPE BODY[ COMMENT]", single spaces: the line authorized_keys gets.
  std::string Line() const;
};

// Leading and trailing spaces are ignored; fields are separated by one or more spaces.
Result<SshPublicKey> ParseSshPublicKey(std::string_view line);

inline Status CheckSshPublicKey(std::string_view line) {
  auto key = ParseSshPublicKey(line);
  return key ? Status::Ok() : key.error();
}

}  // namespace allot
