// One `onepass serve` shared by the tests of a suite. A fixture derives from ServeSuite<Itself>
// and says how to start the server in `static std::vector<std::string> server_args()`; the
// server starts before the suite's first test and stops after its last, and a server that never
// became ready fails each test with its log.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/serve_process.h"

namespace onepass::testing {

template <typename Suite>
class ServeSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = std::make_unique<ServeProcess>(Suite::server_args());
    ready_ = server_->wait_ready();
  }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override { ASSERT_TRUE(ready_) << server_->log(); }
  static std::uint16_t port() { return server_->port(); }
  static bool ready() { return ready_; }

 private:
  static inline std::unique_ptr<ServeProcess> server_;
  static inline bool ready_ = false;
};

}  // namespace onepass::testing
