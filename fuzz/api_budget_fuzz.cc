// POST /v1/budgets: the body as SetBudget reads it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/api_bodies.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  allot::BudgetBody body;
  (void)allot::ParseBudgetBody(std::string(reinterpret_cast<const char*>(data), size), body);
  return 0;
}
