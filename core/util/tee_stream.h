// An ostream that writes to two others: the console and the run's log file. Either may be
// null (a ddp rank other than 0 prints nothing and keeps no log).
#pragma once

#include <ostream>
#include <streambuf>

namespace plugtrain {

class TeeBuffer : public std::streambuf {
 public:
  TeeBuffer(std::streambuf* a, std::streambuf* b) : a_(a), b_(b) {}
  void set(std::streambuf* a, std::streambuf* b) {
    a_ = a;
    b_ = b;
  }

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    const bool ok_a = !a_ || a_->sputc(char(c)) != traits_type::eof();
    const bool ok_b = !b_ || b_->sputc(char(c)) != traits_type::eof();
    return ok_a && ok_b ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const std::streamsize written = a_ ? a_->sputn(s, n) : n;
    if (b_) b_->sputn(s, n);
    return written;
  }
  int sync() override {
    const int ra = a_ ? a_->pubsync() : 0;
    const int rb = b_ ? b_->pubsync() : 0;
    return ra == 0 && rb == 0 ? 0 : -1;
  }

 private:
  std::streambuf* a_;
  std::streambuf* b_;
};

}  // namespace plugtrain
