// HTTP for the MLflow plugin over libcurl (http_client.h).
#include "http_client.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

namespace plugtrain::mlflow {

namespace {

std::size_t append_to_string(char* data, std::size_t size, std::size_t count, void* target) {
  static_cast<std::string*>(target)->append(data, size * count);
  return size * count;
}

std::size_t read_from_file(char* buffer, std::size_t size, std::size_t count, void* file) {
  return std::fread(buffer, size, count, static_cast<std::FILE*>(file));
}

int abort_when_asked(void* flag, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* abort = static_cast<const std::atomic<bool>*>(flag);
  return abort != nullptr && abort->load() ? 1 : 0;  // non-zero: CURLE_ABORTED_BY_CALLBACK
}

// The first line of an answer's message, at most 300 bytes: MLflow's JSON "message", or with
// `plain_text` a body that is neither JSON nor HTML. "" when there is none.
std::string message_of(const std::string& body, bool plain_text) {
  std::string message;
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_object() && parsed.contains("message") && parsed["message"].is_string()) {
    message = parsed["message"].get<std::string>();
  } else if (plain_text && parsed.is_discarded() && body.find('<') == std::string::npos) {
    message = body;
  }
  message = message.substr(0, message.find('\n'));
  if (message.size() > 300) message = message.substr(0, 300) + "...";
  return message;
}

// The server's one-line reason: MLflow's JSON "message", else the status.
std::string server_reason(long status, const std::string& body) {
  const std::string message = message_of(body, /*plain_text=*/false);
  // No MLflow error JSON: another server, or a proxy, answered (a wrong URL or port).
  if (message.empty()) return "HTTP " + std::to_string(status) + ", not an MLflow server's answer";
  return "HTTP " + std::to_string(status) + ": " + message;
}

// "https://host:port" of a URL: the server, for a line about it.
std::string origin_of(const std::string& url) {
  const std::size_t host = url.find("://");
  const std::size_t path = host == std::string::npos ? std::string::npos : url.find('/', host + 3);
  return path == std::string::npos ? url : url.substr(0, path);
}

// A TLS failure that no retry changes: the server's certificate, or our CA file.
bool certificate_problem(CURLcode code) {
  return code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE || code == CURLE_SSL_ISSUER_ERROR ||
         code == CURLE_SSL_PINNEDPUBKEYNOTMATCH;
}

struct CurlHeaders {
  curl_slist* list = nullptr;
  ~CurlHeaders() { curl_slist_free_all(list); }
  void add(const std::string& line) { list = curl_slist_append(list, line.c_str()); }
};

}  // namespace

std::string Login::who() const {
  if (!token.empty()) return "the token in MLFLOW_TRACKING_TOKEN";
  if (!user.empty()) return "user \"" + user + "\"";
  return "no login";
}

HttpClient::HttpClient(HttpSettings settings, const std::atomic<bool>* abort)
    : settings_(std::move(settings)), timeout_ms_(std::lround(settings_.timeout_seconds * 1000)), abort_(abort) {
  static std::once_flag curl_ready;
  std::call_once(curl_ready, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  curl_ = curl_easy_init();
}

HttpClient::~HttpClient() { curl_easy_cleanup(curl_); }

// The options every request has; curl_easy_reset keeps the open connection.
void HttpClient::prepare(const std::string& url) {
  curl_easy_reset(curl_);
  response_.clear();
  error_[0] = '\0';
  curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM from another thread's name lookup
  curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms_);
  curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, timeout_ms_);
  curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, error_);
  curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, append_to_string);
  curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &response_);
  curl_easy_setopt(curl_, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl_, CURLOPT_XFERINFOFUNCTION, abort_when_asked);
  curl_easy_setopt(curl_, CURLOPT_XFERINFODATA, abort_);
  if (!settings_.ca_file.empty()) curl_easy_setopt(curl_, CURLOPT_CAINFO, settings_.ca_file.c_str());
  if (settings_.insecure_tls) {
    curl_easy_setopt(curl_, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl_, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (settings_.login.basic()) {
    curl_easy_setopt(curl_, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl_, CURLOPT_USERNAME, settings_.login.user.c_str());
    curl_easy_setopt(curl_, CURLOPT_PASSWORD, settings_.login.password.c_str());
  }
}

// Why the server would not have us: a login it did not accept (401) or one without the
// permission (403). Names who, never the secret.
std::string HttpClient::login_refused(long status, const std::string& body) const {
  const Login& login = settings_.login;
  if (status == 401 && login.token.empty() && login.user.empty()) {
    return "HTTP 401: the server asks for a login; set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD, "
           "or MLFLOW_TRACKING_TOKEN";
  }
  if (status == 401) return "HTTP 401: " + login.who() + " not accepted";
  // MLflow's login app answers a 403 in plain text ("Permission denied"), not its JSON.
  const std::string message = message_of(body, /*plain_text=*/true);
  return "HTTP 403: " + (message.empty() ? std::string("no permission") : message) + ", for " + login.who();
}

// A certificate problem, in one line that names the server and what to do.
std::string HttpClient::certificate_refused(int curl_code) const {
  const auto code = static_cast<CURLcode>(curl_code);
  char* url = nullptr;
  curl_easy_getinfo(curl_, CURLINFO_EFFECTIVE_URL, &url);
  const std::string server = origin_of(url != nullptr ? url : "");
  const std::string words = error_[0] != '\0' ? error_ : curl_easy_strerror(code);
  if (code == CURLE_SSL_CACERT_BADFILE) {
    return "ca_file " + settings_.ca_file + " cannot be used to check " + server + " (" + words + ")";
  }
  const std::string hint = settings_.ca_file.empty() ? "set [logging.mlflow] ca_file to the certificate that signed it"
                                                     : "ca_file " + settings_.ca_file + " does not vouch for it";
  return server + ": its certificate is not trusted (" + words + "); " + hint;
}

Outcome HttpClient::perform() {
  const CURLcode code = curl_easy_perform(curl_);
  Outcome out;
  if (code != CURLE_OK && certificate_problem(code)) {
    return Outcome::failed(Outcome::Kind::permanent, certificate_refused(code));
  }
  if (code != CURLE_OK) {
    out.kind = Outcome::Kind::transient;
    out.why = error_[0] != '\0' ? error_ : curl_easy_strerror(code);
    return out;
  }
  curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &out.status);
  out.body = std::move(response_);
  if (out.status == 200) return out;
  // As MLflow's own client: 408, 429 and 5xx may pass; any other answer will not change.
  const bool retry = out.status == 408 || out.status == 429 || out.status >= 500;
  out.kind = retry ? Outcome::Kind::transient : Outcome::Kind::permanent;
  out.why = out.status == 401 || out.status == 403 ? login_refused(out.status, out.body)
                                                   : server_reason(out.status, out.body);
  return out;
}

namespace {

void add_auth_header(CurlHeaders& headers, const Login& login) {
  if (!login.token.empty()) headers.add("Authorization: Bearer " + login.token);
}

}  // namespace

Outcome HttpClient::get(const std::string& url) {
  prepare(url);
  CurlHeaders headers;
  add_auth_header(headers, settings_.login);
  curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers.list);
  return perform();
}

Outcome HttpClient::post_json(const std::string& url, const std::string& body) {
  prepare(url);
  CurlHeaders headers;
  headers.add("Content-Type: application/json");  // MLflow answers 400 without it
  add_auth_header(headers, settings_.login);
  curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers.list);
  curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  return perform();
}

Outcome HttpClient::put_file(const std::string& url, const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return Outcome::failed(Outcome::Kind::permanent, "cannot read " + path);
  std::fseek(file.get(), 0, SEEK_END);
  const long size = std::ftell(file.get());
  std::fseek(file.get(), 0, SEEK_SET);
  prepare(url);
  CurlHeaders headers;
  headers.add("Content-Type: application/octet-stream");
  headers.add("Expect:");  // send the body at once, without waiting for "100 Continue"
  add_auth_header(headers, settings_.login);
  curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers.list);
  curl_easy_setopt(curl_, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(curl_, CURLOPT_READFUNCTION, read_from_file);
  curl_easy_setopt(curl_, CURLOPT_READDATA, file.get());
  curl_easy_setopt(curl_, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(size));
  // Weights of tens of MB take longer than one request's limit: limit stalls instead.
  curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, 0L);
  curl_easy_setopt(curl_, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl_, CURLOPT_LOW_SPEED_TIME, std::max(1L, (timeout_ms_ + 999) / 1000));
  return perform();
}

}  // namespace plugtrain::mlflow
