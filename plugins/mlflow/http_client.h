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

class HttpClient {
 public:
  // `timeout_seconds` limits connecting and each request; a streamed upload is limited by
  // progress instead (no byte sent for that long). `abort`, when set, ends a request at once.
  HttpClient(double timeout_seconds, const std::atomic<bool>* abort);
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

  void* curl_ = nullptr;  // CURL*
  long timeout_ms_;
  const std::atomic<bool>* abort_;
  std::string response_;
  char error_[256] = {};
};

}  // namespace plugtrain::mlflow
