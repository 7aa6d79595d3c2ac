#include "daemon/webhook_sender.h"

#include <httplib.h>

#include <algorithm>

namespace allot {

Result<WebhookUrl> ParseWebhookUrl(const std::string& url, const std::string& field) {
  auto bad = [&](const std::string& why) {
    return Err(InvalidArgument(field + ": '" + url + "' " + why + "; expected http[s]://HOST[:PORT][/PATH]"));
  };
  const std::string scheme = url.rfind("https://", 0) == 0 ? "https://" : "http://";
  if (url.rfind(scheme, 0) != 0) return bad("is not an http or https URL");
  size_t slash = url.find('/', scheme.size());
  std::string authority = url.substr(scheme.size(), slash == std::string::npos ? std::string::npos : slash - scheme.size());
  if (authority.empty() || authority.find('@') != std::string::npos) return bad("names no host (or carries credentials)");
  for (char c : authority) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':' ||
              c == '[' || c == ']';
    if (!ok) return bad("has a host '" + authority + "' with a character not allowed in a host name");
  }
  size_t colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    std::string port = authority.substr(colon + 1);
    bool digits = !port.empty() && port.size() <= 5 && std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoi(port) < 1 || std::stoi(port) > 65535) return bad("has a port '" + port + "' that is not 1 to 65535");
  }
  WebhookUrl out{scheme + authority, slash == std::string::npos ? "/" : url.substr(slash)};
  return out;
}

WebhookSender::WebhookSender(WebhookUrl url, WebhookOptions options) : url_(std::move(url)), options_(std::move(options)) {}

WebhookSender::~WebhookSender() { Stop(); }

void WebhookSender::Start() { thread_ = std::thread([this] { Run(); }); }

void WebhookSender::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WebhookSender::Enqueue(std::string body) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= options_.queue) {
      queue_.pop_front();
      ++dropped_;
      if (options_.log) options_.log("alert webhook: queue full (" + std::to_string(options_.queue) + "); the oldest alert dropped");
    }
    queue_.push_back(std::move(body));
  }
  cv_.notify_all();
}

bool WebhookSender::Post(const std::string& body, std::string& why) {
  httplib::Client http(url_.origin);
  auto secs = [](std::chrono::milliseconds ms) { return std::chrono::duration_cast<std::chrono::microseconds>(ms); };
  http.set_connection_timeout(secs(options_.timeout));
  http.set_read_timeout(secs(options_.timeout));
  http.set_write_timeout(secs(options_.timeout));
  if (!options_.ca_cert.empty()) http.set_ca_cert_path(options_.ca_cert.c_str());
  http.enable_server_certificate_verification(true);
  auto res = http.Post(url_.path, body, "application/json");
  if (!res) {
    why = "unreachable (" + httplib::to_string(res.error()) + ")";
    return false;
  }
  if (res->status < 200 || res->status > 299) {
    why = "answered HTTP " + std::to_string(res->status);
    return false;
  }
  return true;
}

void WebhookSender::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) break;
    std::string body = queue_.front();
    lock.unlock();
    std::chrono::milliseconds backoff = options_.first_backoff;
    bool sent = false;
    std::string why;
    for (int attempt = 1; attempt <= options_.attempts; ++attempt) {
      if (Post(body, why)) {
        sent = true;
        break;
      }
      ++failed_;
      if (attempt == options_.attempts) break;
      lock.lock();
      bool stop = cv_.wait_for(lock, backoff, [this] { return stopping_; });
      lock.unlock();
      if (stop) break;
      backoff = std::min(backoff * 2, options_.max_backoff);
    }
    lock.lock();
    // The front is still this alert unless a full queue dropped it meanwhile.
    if (!queue_.empty() && queue_.front() == body) queue_.pop_front();
    if (sent) {
      ++delivered_;
    } else {
      ++dropped_;
      if (!stopping_ && options_.log) options_.log("alert webhook: gave up on an alert after " + std::to_string(options_.attempts) + " attempts: " + why);
    }
  }
  dropped_ += queue_.size();
  queue_.clear();
}

}  // namespace allot
