// Three hosts on one machine: network namespaces joined by veth pairs, the server in one and a
// worker in each of two others (the test process reaches the server over a third link). Links
// are cut and restored mid-task, the way a switch or a node's network fails:
//   - one worker's link: its leases expire and its jobs go to the other worker; restored, it
//     reconnects and serves again;
//   - every worker link, for longer than a lease: the task stalls and resumes when they return.
// Nothing is lost and nothing measured twice. Needs root (CAP_NET_ADMIN) and `ip netns`; skips
// saying why without them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "proto/task_state.h"
#include "tests/integration/cluster.h"

namespace tuned::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr char kIp[] = "/usr/sbin/ip";  // iproute2; ChildProcess does not search PATH

// Runs a command line; true when it exits 0 (its output in `out` when given).
bool Run(const std::string& command, std::string* out = nullptr) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return false;
  std::string text;
  char buffer[1024];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) text.append(buffer, n);
  if (out != nullptr) *out = text;
  return pclose(pipe) == 0;
}

// The namespaces and links: "<p>-srv" holds the server; "<p>-w1" and "<p>-w2" a worker each;
// link i joins the root namespace (i = 0) or worker i to the server on 10.77.<p>.<4i>/30.
class Network {
 public:
  Network() : prefix_("tn" + std::to_string(getpid() % 100000)) {}
  ~Network() {
    for (const std::string& ns : {Ns("srv"), Ns("w1"), Ns("w2")}) Run("ip netns del " + ns);
    Run("ip link del " + Link(0, 'a'));
  }

  // Empty on success, else why it could not be built.
  std::string Build() {
    std::string out;
    if (!Run("ip netns add " + Ns("srv"), &out)) return "cannot create a network namespace: " + out;
    created_ = true;
    const std::vector<std::string> commands = {
        "ip netns add " + Ns("w1"), "ip netns add " + Ns("w2"),
        "ip -n " + Ns("srv") + " link set lo up", "ip -n " + Ns("w1") + " link set lo up",
        "ip -n " + Ns("w2") + " link set lo up"};
    for (const std::string& c : commands) {
      if (!Run(c, &out)) return c + ": " + out;
    }
    for (int i = 0; i < 3; ++i) {
      const std::string a = Link(i, 'a'), b = Link(i, 'b');
      std::vector<std::string> steps = {
          "ip link add " + a + " type veth peer name " + b,
          "ip link set " + b + " netns " + Ns("srv"),
          "ip -n " + Ns("srv") + " addr add " + ServerAddress(i) + "/30 dev " + b,
          "ip -n " + Ns("srv") + " link set " + b + " up"};
      if (i == 0) {
        steps.push_back("ip addr add " + PeerAddress(0) + "/30 dev " + a);
        steps.push_back("ip link set " + a + " up");
      } else {
        const std::string ns = Ns("w" + std::to_string(i));
        steps.push_back("ip link set " + a + " netns " + ns);
        steps.push_back("ip -n " + ns + " addr add " + PeerAddress(i) + "/30 dev " + a);
        steps.push_back("ip -n " + ns + " link set " + a + " up");
      }
      for (const std::string& c : steps) {
        if (!Run(c, &out)) return c + ": " + out;
      }
    }
    return "";
  }

  std::string Ns(const std::string& name) const { return prefix_ + "-" + name; }
  std::string ServerAddress(int link) const { return Subnet() + std::to_string(4 * link + 1); }
  std::string PeerAddress(int link) const { return Subnet() + std::to_string(4 * link + 2); }
  // Cuts or restores worker i's link on the server's side.
  bool SetLink(int link, bool up) {
    return Run("ip -n " + Ns("srv") + " link set " + Link(link, 'b') + (up ? " up" : " down"));
  }

 private:
  std::string Link(int i, char end) const { return prefix_ + "l" + std::to_string(i) + end; }
  std::string Subnet() const { return "10.77." + std::to_string(getpid() % 250) + "."; }

  std::string prefix_;
  bool created_ = false;
};

class MultiHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (getuid() != 0) GTEST_SKIP() << "needs root for network namespaces";
    if (access(kIp, X_OK) != 0) GTEST_SKIP() << kIp << " is missing (Debian: iproute2)";
    std::string why = network_.Build();
    if (!why.empty()) GTEST_SKIP() << why;
    cluster_.set_network("0.0.0.0", network_.ServerAddress(0),
                         {kIp, "netns", "exec", network_.Ns("srv")});
    std::string error;
    ASSERT_TRUE(cluster_.StartServer(&error)) << error;
  }

  std::unique_ptr<ChildProcess> Worker(int i) {
    const std::string id = "host" + std::to_string(i);
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{kIp, "netns", "exec", network_.Ns("w" + std::to_string(i)),
                                 TUNED_WORKER_BINARY, "--log-level", "info", "--server",
                                 network_.ServerAddress(i) + ":" + std::to_string(cluster_.port()),
                                 "--token-file", cluster_.token_file(), "--id", id,
                                 "--reconnect-max-ms", "300"},
        cluster_.dir() + "/" + id + ".log");
  }

  // Records so far, by the worker that measured them.
  std::multiset<std::string> MeasuredBy(const std::string& task_id) {
    std::multiset<std::string> by;
    auto stub = cluster_.Database();
    auto context = cluster_.Context();
    v1::ListRecordsRequest request;
    v1::ListRecordsResponse response;
    if (stub->ListRecords(context.get(), request, &response).ok()) {
      for (const auto& record : response.records()) {
        if (record.task_id() == task_id) by.insert(record.result().worker_id());
      }
    }
    return by;
  }

  Network network_;  // Outlives the cluster's processes: destroyed after them.
  Cluster cluster_;
};

TEST_F(MultiHostTest, CutLinksLoseNothingAndMeasureNothingTwice) {
  auto host1 = Worker(1);
  auto host2 = Worker(2);
  ASSERT_TRUE(cluster_.WaitWorkers(2, 60s)) << cluster_.server().Log();
  const std::string task_id = SubmitTask(cluster_, Cluster::SmallTask(96));
  ASSERT_FALSE(task_id.empty());
  v1::TaskStatus status;
  auto done_at_least = [](uint32_t n) {
    return [n](const v1::TaskStatus& s) { return s.trials_done() >= n || v1::IsFinal(s.state()); };
  };

  // 1. host1's link fails: its leases expire (1.5 s) and the jobs go to host2.
  ASSERT_TRUE(cluster_.WaitTask(task_id, done_at_least(8), 120s, &status));
  ASSERT_TRUE(network_.SetLink(1, false));
  ASSERT_TRUE(cluster_.WaitTask(task_id, done_at_least(status.trials_done() + 16), 120s, &status))
      << cluster_.server().Log();
  const size_t host1_while_cut = MeasuredBy(task_id).count("host1");

  // 2. Restored: host1 reconnects and measures again.
  ASSERT_TRUE(network_.SetLink(1, true));
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (MeasuredBy(task_id).count("host1") == host1_while_cut &&
         !v1::IsFinal(status.state()) && std::chrono::steady_clock::now() < deadline) {
    cluster_.WaitTask(task_id, done_at_least(0), 0s, &status);
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_GT(MeasuredBy(task_id).count("host1"), host1_while_cut)
      << "host1 did not serve again after its link returned\n"
      << host1->Log();

  // 3. The server is cut off from every worker for longer than a lease, then the links return.
  ASSERT_FALSE(v1::IsFinal(status.state())) << "the task ended before the partition";
  ASSERT_TRUE(network_.SetLink(1, false));
  ASSERT_TRUE(network_.SetLink(2, false));
  std::this_thread::sleep_for(3s);
  const uint32_t during_partition = status.trials_done();
  ASSERT_TRUE(network_.SetLink(1, true));
  ASSERT_TRUE(network_.SetLink(2, true));

  ASSERT_TRUE(cluster_.WaitTask(
      task_id, [](const auto& s) { return v1::IsFinal(s.state()); }, 180s, &status))
      << cluster_.server().Log();
  EXPECT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
  EXPECT_GT(status.trials_done(), during_partition);
  auto records = ExpectEachTrialOnce(cluster_, task_id, 96);
  std::set<std::string> hosts;
  for (const auto& record : records) hosts.insert(record.result().worker_id());
  EXPECT_EQ(hosts, (std::set<std::string>{"host1", "host2"}));
  EXPECT_THAT(cluster_.server().Log(), HasSubstr("worker left worker=host1"));
}

}  // namespace
}  // namespace tuned::testing
