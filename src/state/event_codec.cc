#include "state/event_codec.h"

#include "state/codec_fields.h"

namespace allot {
namespace {

using codec::Reader;
using codec::Writer;

template <size_t I = 0>
Result<EventBody> DecodeBody(size_t type, Reader& r) {
  if constexpr (I < std::variant_size_v<EventBody>) {
    if (type == I) {
      std::variant_alternative_t<I, EventBody> body{};
      r(body);
      return EventBody(std::move(body));
    }
    return DecodeBody<I + 1>(type, r);
  } else {
    return Err(InvalidArgument("event type " + std::to_string(type) + " is unknown"));
  }
}

constexpr const char* kTypeNames[] = {"NodeAdded",   "NodeConditionChanged", "TenantUpserted", "JobSubmitted",
                                      "JobRejected", "JobPlaced",            "JobPreemptionStarted",
                                      "JobStopped",  "JobFinished",          "JobCancelled",   "MigRelayout",
                                      "ReservationSet", "TokenIssued", "TokenRevoked", "AuditRecorded",
                                      "TenantRemoved", "TenantMoved", "NodeRegistered", "NodeFailed", "JobFailed",
                                      "BudgetSet", "BudgetWarned", "LedgerAppended", "TaskRunReported", "MigLayoutReported",
                                      "ReservationBooked", "ReservationCancelled", "ReservationEndSet",
                                      "SshKeyAdded", "SshKeyRemoved", "ReservationShrunk", "ReservationNodeAccepted",
                                      "ReservationHoldMoved", "InterferenceActed", "InterferenceCleared",
                                      "ServiceCreated", "ServiceReplicaAdded", "ServiceReplicaRestarted",
                                      "ServiceReplicaRemoved", "ServiceScaled", "ServiceUpdated", "ServiceDeleted",
                                      "TemplateSaved", "TemplateRemoved"};
static_assert(std::size(kTypeNames) == std::variant_size_v<EventBody>, "name every event type");

}  // namespace

const char* EventTypeName(const Event& e) { return kTypeNames[e.body.index()]; }

std::string EncodeEvent(const Event& e) {
  Writer w;
  w.out.push_back(static_cast<char>(kEventFormat));
  w.out.push_back(static_cast<char>(e.body.index()));
  w(e.time_ms);
  std::visit([&](const auto& body) { w(body); }, e.body);
  return std::move(w.out);
}

Result<Event> DecodeEvent(std::string_view bytes) {
  if (bytes.size() < 2) return Err(InvalidArgument("event record: truncated header"));
  uint8_t format = static_cast<uint8_t>(bytes[0]);
  if (format < kOldestEventFormat || format > kEventFormat) {
    return Err(InvalidArgument("event record: format " + std::to_string(format) + " is not known; expected " +
                               std::to_string(kOldestEventFormat) + " to " + std::to_string(kEventFormat)));
  }
  size_t type = static_cast<uint8_t>(bytes[1]);
  Reader r(bytes.substr(2), format);
  Event e;
  r(e.time_ms);
  auto body = DecodeBody(type, r);
  if (!body) return Err(body.error());
  if (!r.ok()) return Err(InvalidArgument(std::string("event record (") + kTypeNames[type] + "): " + r.error()));
  if (!r.done()) return Err(InvalidArgument(std::string("event record (") + kTypeNames[type] + "): trailing bytes"));
  e.body = std::move(*body);
  return e;
}

}  // namespace allot
