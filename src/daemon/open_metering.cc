#include "daemon/open_metering.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "billing/billing_setup.h"
#include "billing/sodium_crypto.h"

namespace allot {

Result<std::shared_ptr<MeteringSink>> OpenMetering(const std::string& rates_file, const std::string& data_dir) {
  auto setup = LoadBillingSetup(rates_file);
  if (!setup) return Err(setup.error());
  std::string key_file = (std::filesystem::path(data_dir) / "ledger-key").string();
  std::string seed;
  if (std::ifstream in(key_file); in) {
    std::getline(in, seed);
  } else {
    // A fresh seed, created 0600 from the start, as the admin token is.
    auto fresh = SodiumLedgerCrypto::Generate();
    seed = fresh.SeedHex();
    int fd = ::open(key_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    std::string line = seed + "\n";
    bool ok = fd >= 0 && ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!ok) return Err(Unavailable("cannot write " + key_file + ": " + std::strerror(errno)));
  }
  auto crypto = SodiumLedgerCrypto::FromSeed(seed);
  if (!crypto) return Err(InvalidArgument(key_file + ": " + crypto.error().message() + "; expected 64 hex digits"));
  // The public key beside it, for auditors to pin (`allot ledger verify --public-key`).
  std::ofstream(key_file + ".pub") << crypto->PublicKey() << "\n";
  return std::make_shared<MeteringSink>(*setup, std::make_shared<SodiumLedgerCrypto>(std::move(*crypto)));
}

}  // namespace allot
