// What each journal row carries besides its bytes: a checksum of the row as stored (its sequence
// number and its encoded event), checked on every replay, the way LevelDB's log checks each
// record. It catches damage — a changed byte, a torn or misdirected write, a row copied to
// another sequence number — not a forger: whoever can write the database can recompute it (the
// audit log's BLAKE2b chain and the ledger's signature are there for that).
//
// Over the stored bytes only, so it knows nothing of the events' fields: a new event type or
// field changes nothing here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "state/event.h"

namespace allot {

// The journal's layout version, beside the event format in the journal's meta table:
// 1: rows of (seq, encoded event) — every journal written before checksums, which has no
//    journal_format key at all.
// 2: rows of (seq, encoded event, checksum). A format-1 journal is upgraded on first open: every
//    row gets the checksum of what it holds then, in one transaction, and the column is NOT
//    NULL, so an allotd older than checksums can still read the journal but cannot append to it.
inline constexpr int kJournalFormat = 2;

// 64 bits over (seq, record). Any change confined to one aligned 8-byte word of the record (so
// any one changed byte) always changes it: each step of the mix is a bijection of its state.
uint64_t RecordChecksum(uint64_t seq, std::string_view record);

// The event a row holds, once its checksum matches: an Internal error naming `where`, the
// sequence number and the event's type (or why the bytes do not decode) otherwise.
Result<Event> DecodeCheckedRecord(const std::string& where, uint64_t seq, std::string_view record, uint64_t stored);

}  // namespace allot
