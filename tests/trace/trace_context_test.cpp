// W3C trace context parsing and the samplers (src/trace).
#include <gtest/gtest.h>

#include <string>

#include "trace/context.h"
#include "trace/sampler.h"

namespace onepass::trace {
namespace {

constexpr const char* kParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

TEST(Traceparent, ParsesTheSpecificationsExample) {
  const auto context = parse_traceparent(kParent);
  ASSERT_TRUE(context.has_value());
  EXPECT_EQ(to_hex(context->trace_id), "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(to_hex(context->span_id), "b7ad6b7169203331");
  EXPECT_TRUE(context->sampled());
  EXPECT_TRUE(context->remote);
  EXPECT_EQ(format_traceparent(*context), kParent);
  EXPECT_FALSE(
      parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")->sampled());
}

TEST(Traceparent, RefusesWhatTheSpecificationRefuses) {
  for (const char* bad : {
           "",
           "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",         // no flags
           "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",      // upper case
           "00-00000000000000000000000000000000-b7ad6b7169203331-01",      // zero trace id
           "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",      // zero span id
           "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",      // version ff
           "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-xyz",  // 00 has no extra
           "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",      // separator
           "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01",      // not hex
       }) {
    EXPECT_FALSE(parse_traceparent(bad).has_value()) << bad;
  }
  // A later version may append fields; the first four are read.
  const auto future =
      parse_traceparent("cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x");
  ASSERT_TRUE(future.has_value());
  EXPECT_EQ(to_hex(future->span_id), "b7ad6b7169203331");
}

TEST(Tracestate, KeepsValidMembersAndRefusesMalformedOnes) {
  EXPECT_EQ(parse_tracestate("congo=t61rcWkgMzE, rojo=00f067aa0ba902b7"),
            "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
  EXPECT_EQ(parse_tracestate("tenant@vendor=x,,"), "tenant@vendor=x");
  EXPECT_FALSE(parse_tracestate("Upper=1").has_value());
  EXPECT_FALSE(parse_tracestate("novalue").has_value());
  EXPECT_FALSE(parse_tracestate("k=a,b").has_value());
  std::string many;
  for (int i = 0; i < 33; ++i) many += "k" + std::to_string(i) + "=v,";
  EXPECT_FALSE(parse_tracestate(many).has_value());
}

TEST(RandomIds, AreNonZeroAndDiffer) {
  const TraceId a = random_trace_id();
  const TraceId b = random_trace_id();
  EXPECT_NE(a, b);
  EXPECT_NE(to_hex(random_span_id()), "0000000000000000");
}

TraceId with_low_bytes(std::uint64_t low) {
  TraceId id{};
  id[0] = 1;
  for (int i = 0; i < 8; ++i) id[15 - i] = static_cast<std::uint8_t>(low >> (8 * i));
  return id;
}

TEST(Sampler, TraceIdRatioComparesTheLowEightBytes) {
  EXPECT_TRUE(trace_id_below_ratio(with_low_bytes(0x7fffffffffffffffULL), 0.5));
  EXPECT_FALSE(trace_id_below_ratio(with_low_bytes(0x8000000000000000ULL), 0.5));
  EXPECT_TRUE(trace_id_below_ratio(with_low_bytes(~0ULL), 1.0));
  EXPECT_FALSE(trace_id_below_ratio(with_low_bytes(0), 0.0));
  // Over random ids, the sampled share is the ratio.
  int sampled = 0;
  constexpr int kIds = 20000;
  for (int i = 0; i < kIds; ++i) sampled += trace_id_below_ratio(random_trace_id(), 0.25) ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(sampled) / kIds, 0.25, 0.03);
}

TEST(Sampler, ParentBasedFollowsTheCallersFlag) {
  const Sampler sampler = Sampler::from_names("parentbased_traceidratio", "0");
  EXPECT_TRUE(sampler.parent_based());
  EXPECT_EQ(sampler.root(), Sampler::Root::kTraceIdRatio);
  auto parent = parse_traceparent(kParent);
  EXPECT_TRUE(sampler.should_sample(&*parent, parent->trace_id));  // the caller sampled it
  parent->flags = 0;
  EXPECT_FALSE(
      Sampler::from_names("parentbased_always_on", "").should_sample(&*parent, parent->trace_id));
  // A root span (no caller) gets the root sampler: ratio 0 samples nothing.
  EXPECT_FALSE(sampler.should_sample(nullptr, random_trace_id()));
  // Not parent based: the caller's flag does not matter.
  parent->flags = kSampledFlag;
  EXPECT_FALSE(Sampler::from_names("always_off", "").should_sample(&*parent, parent->trace_id));
  EXPECT_TRUE(Sampler::from_names("", "").should_sample(nullptr, random_trace_id()));
}

TEST(Sampler, RefusesUnknownNamesAndRatios) {
  EXPECT_THROW(Sampler::from_names("sometimes", ""), std::exception);
  EXPECT_THROW(Sampler::from_names("traceidratio", "1.5"), std::exception);
  EXPECT_THROW(Sampler::from_names("traceidratio", "half"), std::exception);
  EXPECT_DOUBLE_EQ(Sampler::from_names("traceidratio", "0.125").ratio(), 0.125);
}

}  // namespace
}  // namespace onepass::trace
