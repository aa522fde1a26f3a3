// HTTP for the MLflow plugin: one libcurl easy handle (its connection kept between requests),
// used by one thread at a time.
#pragma once

#include <atomic>
#include <string>
#include <utility>

namespace plugtrain::mlflow {

// What one request came to. `kind` sorts it for the sender: retry later, or stop trying.
struct Outcome {
  enum class Kind { ok, transient, permanent };
  Kind kind = Kind::ok;
  std::string why;  // one line for a failure: curl's error or the server's message
  long status = 0;  // HTTP status; 0 when no answer came
  std::string body;

  bool ok() const { return kind == Kind::ok; }
  bool transient() const { return kind == Kind::transient; }
  static Outcome failed(Kind kind, std::string why) {
    Outcome o;
    o.kind = kind;
    o.why = std::move(why);
    return o;
  }
};

// Who the requests go as (MLflow's own variables, read by register_mlflow.cpp): a bearer token
// (MLFLOW_TRACKING_TOKEN), else a user and password (MLFLOW_TRACKING_USERNAME and
// MLFLOW_TRACKING_PASSWORD, HTTP basic auth), else no one.
struct Login {
  std::string token;
  std::string user;
  std::string password;

  bool basic() const { return token.empty() && !user.empty(); }
  // Who, for an error line, never the secret: `user "alice"`, `the token in MLFLOW_TRACKING_TOKEN`.
  std::string who() const;
};

struct HttpSettings {
  // Limits connecting and each request; a streamed upload is limited by progress instead (no
  // byte sent for that long).
  double timeout_seconds = 5;
  std::string ca_file;        // PEM certificates an https server's must chain to; "": the system's
  bool insecure_tls = false;  // MLFLOW_TRACKING_INSECURE_TLS=true: no certificate check, as MLflow's client
  Login login;
};

class HttpClient {
 public:
  // `abort`, when set, ends a request at once.
  HttpClient(HttpSettings settings, const std::atomic<bool>* abort);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  Outcome get(const std::string& url);
  Outcome post_json(const std::string& url, const std::string& body);
  // PUT of a file's bytes, streamed from disk.
  Outcome put_file(const std::string& url, const std::string& path);

 private:
  void prepare(const std::string& url);
  Outcome perform();
  std::string login_refused(long status, const std::string& body) const;
  std::string certificate_refused(int curl_code) const;

  void* curl_ = nullptr;  // CURL*
  HttpSettings settings_;
  long timeout_ms_;
  const std::atomic<bool>* abort_;
  std::string response_;
  char error_[256] = {};
};

}  // namespace plugtrain::mlflow
