// The durable journal: every change of state, in order. The daemon appends a plan's or a
// command's events before it acknowledges them; start-up replays them into a ClusterState.
// Narrow on purpose: SQLite is the default implementation, PostgreSQL comes next.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "state/event.h"
#include "state/event_codec.h"

namespace allot {

// Whether a journal whose meta table records event format `recorded` can be opened: any format
// from kOldestEventFormat to kEventFormat decodes.
inline bool JournalFormatReadable(const std::string& recorded) {
  for (int f = kOldestEventFormat; f <= kEventFormat; ++f) {
    if (recorded == std::to_string(f)) return true;
  }
  return false;
}

class Journal {
 public:
  virtual ~Journal() = default;

  // Appends `events` as one durable group (all or none, synced before returning) and returns
  // the sequence number of the last one. Sequence numbers start at 1 and have no gaps.
  virtual Result<uint64_t> Append(const std::vector<Event>& events) = 0;

  // Calls `fn` for every event with sequence number > `after`, in order; stops at the first
  // error `fn` returns, or at an undecodable record (naming its sequence number).
  virtual Status Replay(uint64_t after, const std::function<Status(uint64_t seq, const Event&)>& fn) = 0;

  // The sequence number of the last appended event (0 when empty).
  virtual uint64_t last_seq() const = 0;

  // Stores `bytes` (state/snapshot.h) as the state after event `seq`, durably, so start-up can
  // restore it and replay only the events after it. REQUIRES: seq <= last_seq(). A journal
  // that keeps no snapshots says so; the caller goes on without one.
  virtual Status SaveSnapshot(uint64_t seq, std::string_view bytes) {
    (void)seq, (void)bytes;
    return FailedPrecondition("this journal does not keep snapshots");
  }
  // The newest snapshot saved, as (seq, bytes); nullopt when there is none.
  virtual Result<std::optional<std::pair<uint64_t, std::string>>> LoadSnapshot() { return std::nullopt; }

  // What opening the journal changed in it, for the daemon's log: "" when nothing, else a line
  // such as "upgraded to journal format 2: checksums added to 12 events".
  const std::string& opened_note() const { return opened_note_; }

 protected:
  std::string opened_note_;
};

}  // namespace allot
