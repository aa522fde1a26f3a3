// The epoch loop's count of host waits (train/host_sync_meter.h), against a backend's counter
// the test drives by hand: steady steps are counted apart from the others, the causes of the
// steady waits are named, and a backend that cannot count gives no figure.
// ctest-label: unit
#include <cstdint>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "train/host_sync_meter.h"

namespace plugtrain {
namespace host_sync_meter_test {

// What a counting backend reports: the waits so far, by cause.
struct FakeCounter {
  std::map<std::string, std::uint64_t> causes;
  void wait(const std::string& cause, std::uint64_t n = 1) { causes[cause] += n; }
  std::uint64_t total() const {
    std::uint64_t sum = 0;
    for (const auto& [cause, n] : causes) sum += n;
    return sum;
  }
};

DeviceContext counted_by(FakeCounter& counter) {
  DeviceContext device;
  device.host_waits = [&counter] { return counter.total(); };
  device.host_waits_by_cause = [&counter] { return counter.causes; };
  return device;
}

TEST(HostSyncMeter, CountsSteadyStepsApartAndNamesTheirCauses) {
  FakeCounter counter;
  const DeviceContext device = counted_by(counter);
  HostSyncMeter meter(device);
  meter.start_epoch();
  for (int step = 0; step < 6; ++step) {
    meter.start_step();
    if (step == 1) counter.wait("device synchronisation", 6);  // a logged step: not steady
    if (step >= 3) counter.wait("aten::nonzero");              // one read in each steady step from here
    meter.end_step(/*steady=*/step != 1);
  }
  counter.wait("copy to the host", 2);  // the epoch's end reads its sums
  const HostSyncFigures f = meter.end_epoch();
  EXPECT_TRUE(f.counted);
  EXPECT_EQ(f.steady_steps, 5);
  EXPECT_EQ(f.steady, 3u);
  EXPECT_DOUBLE_EQ(f.per_step(), 3.0 / 5.0);
  EXPECT_EQ(f.epoch, 6u + 3u + 2u);
  // The first waiting step starts the tracing: the two after it are named.
  EXPECT_EQ(f.steady_causes, (std::map<std::string, std::uint64_t>{{"aten::nonzero", 2}}));
}

TEST(HostSyncMeter, EachEpochStartsAtZero) {
  FakeCounter counter;
  const DeviceContext device = counted_by(counter);
  HostSyncMeter meter(device);
  meter.start_epoch();
  meter.start_step();
  counter.wait("aten::_local_scalar_dense");
  meter.end_step(true);
  EXPECT_EQ(meter.end_epoch().steady, 1u);
  meter.start_epoch();
  meter.start_step();
  meter.end_step(true);
  const HostSyncFigures second = meter.end_epoch();
  EXPECT_EQ(second.steady, 0u);
  EXPECT_EQ(second.steady_steps, 1);
  EXPECT_EQ(second.epoch, 0u);
}

TEST(HostSyncMeter, ABackendThatCannotCountGivesNoFigure) {
  const DeviceContext device;  // no host_waits
  HostSyncMeter meter(device);
  meter.start_epoch();
  meter.start_step();
  meter.end_step(true);
  const HostSyncFigures f = meter.end_epoch();
  EXPECT_FALSE(f.counted);
  EXPECT_EQ(f.steady_steps, 0);
  EXPECT_DOUBLE_EQ(f.per_step(), 0.0);
}

}  // namespace host_sync_meter_test
}  // namespace plugtrain
