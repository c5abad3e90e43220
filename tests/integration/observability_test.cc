// `--metrics-listen`, the status page, `tuned db plot` and the progress display of `tuned tune`,
// against real `tuned serve` and `tuned-worker` processes on loopback: metrics scraped during a
// task and parsed by prometheus_client; the page opened in headless Chromium; plots of the
// task's records; the progress bar in a real terminal (tmux).

#include <sys/wait.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "tests/integration/cluster.h"
#include "proto/task_state.h"
#include "tests/support/http_get.h"

namespace tuned::testing {
namespace {

// Trials only: these tests count what a task measured (dots, counters, records), so the noise
// and top-k re-measures (tested in remeasure_test.cc) are off.
v1::TaskSpec TrialsOnly(v1::TaskSpec spec) {
  spec.mutable_remeasure()->set_noise_cv_threshold(0);
  spec.mutable_remeasure()->set_top_k(0);
  return spec;
}

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

// A shell command's exit code and its stdout and stderr together.
int Shell(const std::string& command, std::string* out) {
  out->clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out->append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool HaveProgram(const std::string& name) {
  std::string out;
  return Shell("command -v " + name, &out) == 0;
}

// The port a process logged as "... http://HOST:PORT/metrics", waiting up to 20 s.
int MetricsPort(ChildProcess& process) {
  static const std::regex kUrl(R"(http://[^:/\s]+:(\d+)/metrics)");
  for (auto deadline = std::chrono::steady_clock::now() + 20s; std::chrono::steady_clock::now() < deadline;) {
    std::smatch match;
    const std::string log = process.Log();
    if (std::regex_search(log, match, kUrl)) return std::stoi(match[1]);
    std::this_thread::sleep_for(50ms);
  }
  return 0;
}

// Sum of the samples of `name` whose label text contains `labels`.
double Sum(const nlohmann::json& scrape, const std::string& name, const std::string& labels = "") {
  double sum = 0;
  for (const auto& [key, value] : scrape["samples"].items()) {
    if (key.rfind(name + "{", 0) == 0 && key.find(labels) != std::string::npos) sum += value.get<double>();
  }
  return sum;
}

bool HasSample(const nlohmann::json& scrape, const std::string& name) {
  for (const auto& [key, value] : scrape["samples"].items()) {
    if (key.rfind(name + "{", 0) == 0) return true;
  }
  return false;
}

class ObservabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.set_server_args({"--metrics-listen", "127.0.0.1:0"});
    std::string error;
    ASSERT_TRUE(cluster_.StartServer(&error)) << error;
    port_ = MetricsPort(cluster_.server());
    ASSERT_GT(port_, 0) << "no metrics address in the server log:\n" << cluster_.server().Log();
  }

  // /metrics parsed by prometheus_client (the test skips when it is not installed).
  nlohmann::json Scrape(int port, const std::string& token) {
    std::string out;
    // Debian's python3-prometheus-client belongs to the system interpreter (not a pyenv one).
    const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    const int code = Shell(python + " " + TUNED_SOURCE_DIR +
                               "/tests/integration/parse_metrics.py " +
                               Quote("http://127.0.0.1:" + std::to_string(port) + "/metrics") +
                               (token.empty() ? "" : " " + Quote(token)),
                           &out);
    if (code == 77) {
      skip_reason_ = out;
      return nullptr;
    }
    EXPECT_EQ(code, 0) << out;
    nlohmann::json parsed = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(parsed.is_object()) << out;
    return parsed.is_object() ? parsed : nlohmann::json{{"samples", nlohmann::json::object()}};
  }

  std::string Logs() { return "\nserver log:\n" + cluster_.server().Log(); }

  // Waits until the task has measured at least `trials`.
  v1::TaskStatus WaitTrials(const std::string& task_id, uint32_t trials) {
    v1::TaskStatus status;
    EXPECT_TRUE(cluster_.WaitTask(
        task_id, [&](const v1::TaskStatus& s) { return s.trials_done() >= trials || v1::TASK_STATE_FAILED == s.state(); },
        180s, &status))
        << Logs();
    return status;
  }

  Cluster cluster_;
  int port_ = 0;
  std::string skip_reason_;
};

TEST_F(ObservabilityTest, MetricsParseAndMoveDuringARealTask) {
  ChildProcess& worker = cluster_.StartWorker("w1", {"--metrics-listen", "127.0.0.1:0", "--slots", "2", "--interleave", "2"});
  ASSERT_TRUE(cluster_.WaitWorkers(1, 60s)) << Logs();
  const int worker_port = MetricsPort(worker);
  ASSERT_GT(worker_port, 0) << worker.Log();

  // The credential of the gRPC API guards the metrics too.
  EXPECT_THAT(HttpGet(port_, "/metrics"), HasSubstr("401 Unauthorized"));
  EXPECT_THAT(HttpGet(port_, "/metrics", cluster_.token()), HasSubstr("200 OK"));

  const nlohmann::json before = Scrape(port_, cluster_.token());
  if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  EXPECT_EQ(Sum(before, "tuned_trials_total"), 0);
  EXPECT_EQ(Sum(before, "tuned_workers", "state=\"serving\""), 1);
  EXPECT_EQ(Sum(before, "tuned_worker_slots"), 2);

  const uint32_t kTrials = 24;
  const std::string task_id = SubmitTask(cluster_, TrialsOnly(Cluster::SmallTask(kTrials)));
  v1::TaskStatus during_status = WaitTrials(task_id, 4);
  const nlohmann::json during = Scrape(port_, cluster_.token());
  EXPECT_GE(Sum(during, "tuned_trials_total"), 4);
  EXPECT_LE(Sum(during, "tuned_trials_total"), kTrials);
  // Still running at the scrape unless the last trials landed in between.
  if (Sum(during, "tuned_trials_total") < kTrials) {
    EXPECT_EQ(Sum(during, "tuned_tasks", "state=\"running\""), 1) << during.dump();
    EXPECT_TRUE(HasSample(during, "tuned_task_trial_budget")) << during.dump();
    EXPECT_EQ(Sum(during, "tuned_task_trial_budget", "task_id=\"" + task_id + "\""), kTrials);
  }

  v1::TaskStatus status;
  ASSERT_TRUE(cluster_.WaitTask(task_id, [](const v1::TaskStatus& s) { return v1::IsFinal(s.state()); },
                                180s, &status))
      << Logs();
  ASSERT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
  const nlohmann::json after = Scrape(port_, cluster_.token());
  EXPECT_EQ(Sum(after, "tuned_trials_total"), kTrials) << after.dump();
  EXPECT_GT(Sum(after, "tuned_trials_total"), Sum(during, "tuned_trials_total") - 1);
  EXPECT_GT(Sum(after, "tuned_trials_total", "status=\"ok\""), 0);
  EXPECT_EQ(Sum(after, "tuned_tasks", "state=\"succeeded\""), 1);
  EXPECT_EQ(Sum(after, "tuned_tasks", "state=\"running\""), 0);
  EXPECT_EQ(Sum(after, "tuned_db_write_seconds_count"), kTrials);
  EXPECT_GT(Sum(after, "tuned_trial_build_seconds_count"), Sum(during, "tuned_trial_build_seconds_count"));
  EXPECT_GT(Sum(after, "tuned_trial_run_seconds_sum"), 0);
  EXPECT_EQ(Sum(after, "tuned_trial_search_seconds_count"), kTrials);
  EXPECT_GE(Sum(after, "tuned_jobs_submitted_total"), kTrials);
  EXPECT_EQ(Sum(after, "tuned_queue_jobs"), 0);
  EXPECT_TRUE(HasSample(after, "tuned_lease_expiries_total"));
  EXPECT_EQ(Sum(after, "tuned_worker_busy_slots"), 0);
  // Histogram buckets are cumulative: the +Inf bucket holds every observation.
  EXPECT_EQ(Sum(after, "tuned_db_write_seconds_bucket", "le=\"+Inf\""), kTrials);

  // The worker's own metrics: what it measured for this task.
  const nlohmann::json from_worker = Scrape(worker_port, "");
  // Every trial, and any batch re-measured after a calibration drift (a loaded machine).
  EXPECT_GE(Sum(from_worker, "tuned_worker_results_total", "worker_id=\"w1\""), kTrials) << from_worker.dump();
  EXPECT_EQ(Sum(from_worker, "tuned_worker_jobs_total"),
            Sum(from_worker, "tuned_worker_results_total", "worker_id=\"w1\""));
  EXPECT_EQ(Sum(from_worker, "tuned_worker_slots"), 2);
  EXPECT_EQ(Sum(from_worker, "tuned_worker_builds_in_flight"), 0);
  EXPECT_EQ(Sum(from_worker, "tuned_worker_jobs_held"), 0);
  EXPECT_GT(Sum(from_worker, "tuned_worker_build_seconds_total"), 0);
  EXPECT_GE(Sum(from_worker, "tuned_worker_sessions_total"), 1);
  // Only a crash or a hang loses a measurement process; each is a failed trial of the server's.
  EXPECT_EQ(Sum(from_worker, "tuned_worker_runner_restarts_total"),
            Sum(after, "tuned_trials_total", "status=\"runtime_error\"") +
                Sum(after, "tuned_trials_total", "status=\"timeout\""))
      << from_worker.dump();
  // The calibration kernel ran after the hello; the worker's drift is against its first figure.
  EXPECT_GE(Sum(from_worker, "tuned_worker_calibrations_total"), 1) << from_worker.dump();
  EXPECT_GT(Sum(from_worker, "tuned_worker_calibration_seconds"), 0);
  EXPECT_TRUE(HasSample(from_worker, "tuned_worker_calibration_drift_ratio"));
  if (Sum(from_worker, "tuned_worker_calibrations_total") == 1) {
    EXPECT_EQ(Sum(from_worker, "tuned_worker_calibration_drift_ratio"), 0);
  }
}

// The page, rendered by a real browser: the DOM after its scripts ran.
std::string DumpDom(const std::string& dir, int port, const std::string& token, std::string* out) {
  Shell("timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run "
        "--user-data-dir=" + Quote(dir + "/chromium") + " --virtual-time-budget=6000 --dump-dom " +
            Quote("http://127.0.0.1:" + std::to_string(port) + "/#token=" + token),
        out);
  return *out;
}

// The <svg> of class `kind` for the task, and how many trial dots it holds.
int CurveDots(const std::string& dom, const std::string& kind, const std::string& task_id, int* declared) {
  const std::regex svg("<svg[^>]*class=\"" + kind + "\" data-task=\"" + task_id +
                       "\" data-points=\"(\\d+)\"[^>]*>([\\s\\S]*?)</svg>");
  std::smatch match;
  if (!std::regex_search(dom, match, svg)) return -1;
  *declared = std::stoi(match[1]);
  const std::string body = match[2];
  const std::regex dot("<circle class=\"trial\"");
  return int(std::distance(std::sregex_iterator(body.begin(), body.end(), dot), std::sregex_iterator()));
}

TEST_F(ObservabilityTest, StatusPageInHeadlessChromiumShowsTheCurveAndTheWorker) {
  if (!HaveProgram("chromium")) GTEST_SKIP() << "chromium is not installed (Debian: chromium)";
  cluster_.StartWorker("w1");
  ASSERT_TRUE(cluster_.WaitWorkers(1, 60s)) << Logs();
  // The JSON behind the page wants the token; the page itself holds no data.
  EXPECT_THAT(HttpGet(port_, "/api/status"), HasSubstr("401 Unauthorized"));
  EXPECT_THAT(HttpGet(port_, "/"), HasSubstr("200 OK"));

  const uint32_t kTrials = 32;
  const std::string task_id = SubmitTask(cluster_, TrialsOnly(Cluster::SmallTask(kTrials)));
  const v1::TaskStatus before = WaitTrials(task_id, 3);
  std::string dom;
  DumpDom(cluster_.dir(), port_, cluster_.token(), &dom);
  v1::TaskStatus after;
  ASSERT_TRUE(cluster_.WaitTask(task_id, [](const v1::TaskStatus&) { return true; }, 10s, &after));
  ASSERT_THAT(dom, HasSubstr("data-ready=\"1\"")) << dom;
  int declared = 0;
  const int dots = CurveDots(dom, "curve-trials", task_id, &declared);
  // During the task: the page drew every trial the log had when it asked.
  EXPECT_EQ(dots, declared) << dom;
  EXPECT_GE(dots, int(before.trials_done())) << dom;
  EXPECT_LE(dots, int(after.trials_done())) << dom;
  EXPECT_THAT(dom, HasSubstr("<tr class=\"worker\" data-worker-id=\"w1\""));
  EXPECT_THAT(dom, HasSubstr("<tr class=\"queue\" data-target="));

  v1::TaskStatus done;
  ASSERT_TRUE(cluster_.WaitTask(task_id, [](const v1::TaskStatus& s) { return v1::IsFinal(s.state()); },
                                180s, &done))
      << Logs();
  ASSERT_EQ(done.state(), v1::TASK_STATE_SUCCEEDED) << done.error();
  DumpDom(cluster_.dir(), port_, cluster_.token(), &dom);
  EXPECT_EQ(CurveDots(dom, "curve-trials", task_id, &declared), int(kTrials)) << dom;
  EXPECT_EQ(CurveDots(dom, "curve-time", task_id, &declared), int(kTrials)) << dom;
  EXPECT_THAT(dom, HasSubstr("data-state=\"SUCCEEDED\""));
  EXPECT_THAT(dom, HasSubstr(std::to_string(kTrials) + "/" + std::to_string(kTrials) + " trials"));

  // A wrong token: the page says what it wants instead of data.
  DumpDom(cluster_.dir(), port_, "not-the-token", &dom);
  EXPECT_THAT(dom, HasSubstr("this server wants a token"));
  EXPECT_THAT(dom, Not(HasSubstr("<tr class=\"worker\"")));

  // The screenshot, kept in the build tree for people to look at.
  const std::string shot = std::string(TUNED_ARTIFACT_DIR) + "/status_page.png";
  std::filesystem::create_directories(TUNED_ARTIFACT_DIR);
  std::filesystem::remove(shot);
  std::string out;
  Shell("timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars "
        "--user-data-dir=" + Quote(cluster_.dir() + "/chromium") +
            " --window-size=1280,1100 --virtual-time-budget=6000 --screenshot=" + Quote(shot) + " " +
            Quote("http://127.0.0.1:" + std::to_string(port_) + "/#token=" + cluster_.token()),
        &out);
  ASSERT_TRUE(std::filesystem::exists(shot)) << out;
  EXPECT_GT(std::filesystem::file_size(shot), 20000u) << out;
}

// Width and height from a PNG's IHDR chunk.
std::pair<uint32_t, uint32_t> PngSize(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char h[24] = {};
  in.read(reinterpret_cast<char*>(h), sizeof(h));
  auto word = [&](int at) { return uint32_t(h[at]) << 24 | uint32_t(h[at + 1]) << 16 | uint32_t(h[at + 2]) << 8 | h[at + 3]; };
  return {word(16), word(20)};
}

TEST_F(ObservabilityTest, DbPlotDrawsOnePathPerTaskOfARealLog) {
  cluster_.StartWorker("w1");
  ASSERT_TRUE(cluster_.WaitWorkers(1, 60s)) << Logs();
  std::vector<double> best_gflops;
  for (uint64_t seed : {7, 8}) {
    v1::TaskSpec spec = Cluster::SmallTask(10);
    spec.mutable_search()->set_seed(seed);
    const std::string task_id = SubmitTask(cluster_, TrialsOnly(spec));
    v1::TaskStatus status;
    ASSERT_TRUE(cluster_.WaitTask(task_id, [](const v1::TaskStatus& s) { return v1::IsFinal(s.state()); },
                                  180s, &status))
        << Logs();
    ASSERT_EQ(status.state(), v1::TASK_STATE_SUCCEEDED) << status.error();
    const double median = status.best().result().median_seconds();  // 0 when nothing measured OK
    best_gflops.push_back(median > 0 ? status.best().workload().flops() / median / 1e9 : 0);
  }
  const std::string svg = cluster_.dir() + "/curve.svg";
  std::string out;
  ASSERT_EQ(cluster_.RunTuned({"db", "plot", "matmul(M=32,N=32,K=32)", "--db", cluster_.db_path(), "-o", svg}, &out), 0)
      << out;
  EXPECT_THAT(out, HasSubstr("2 curve(s), 20 trial(s)"));
  // The SVG parses as XML, has one path per task, and its axes say what they show.
  ASSERT_EQ(Shell("python3 -c " +
                      Quote("import sys, xml.etree.ElementTree as E\n"
                            "ns = '{http://www.w3.org/2000/svg}'\n"
                            "root = E.parse(sys.argv[1]).getroot()\n"
                            "texts = [t.text for t in root.iter(ns + 'text')]\n"
                            "print('paths', len(list(root.iter(ns + 'path'))))\n"
                            "print('trials', len(list(root.iter(ns + 'circle'))))\n"
                            "print('\\n'.join(texts))\n") +
                      " " + Quote(svg),
                  &out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("paths 2\n"));
  EXPECT_THAT(out, HasSubstr("trials 20\n"));
  EXPECT_THAT(out, HasSubstr("trials measured"));
  EXPECT_THAT(out, HasSubstr("best so far (GFLOP/s)"));
  EXPECT_THAT(out, HasSubstr("matmul(M=32,N=32,K=32,dtype=float32)"));  // the title
  // The legend gives each task's best, as the task itself reported it.
  for (double best : best_gflops) {
    char text[32];
    std::snprintf(text, sizeof(text), "(best %.1f GFLOP/s)", best);
    EXPECT_THAT(out, HasSubstr(text));
  }

  const std::string png = cluster_.dir() + "/curve.png";
  const int code = cluster_.RunTuned({"db", "plot", "matmul(M=32,N=32,K=32)", "--db", cluster_.db_path(), "-o", png,
                                      "--width", "700", "--height", "420", "--x", "time"},
                                     &out);
  if (code != 0 && out.find("without cairo") != std::string::npos) GTEST_SKIP() << out;
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(PngSize(png), std::make_pair(700u, 420u));

  EXPECT_EQ(cluster_.RunTuned({"db", "plot", "matmul(M=32,N=32,K=32)", "--db", cluster_.db_path(), "-o",
                               cluster_.dir() + "/curve.gif"},
                              &out),
            2);
  EXPECT_THAT(out, HasSubstr("the plot is written as .svg or .png"));
  EXPECT_EQ(cluster_.RunTuned({"db", "plot", "matmul(M=32,N=32,K=32)", "--db", cluster_.db_path(), "-o", svg,
                               "--target", "llvm -mcpu=nothing-here"},
                              &out),
            2);
  EXPECT_THAT(out, HasSubstr("no records of"));
}

TEST_F(ObservabilityTest, TuneShowsABarAndAnEtaInATerminalAndKeepsTheSummary) {
  if (!HaveProgram("tmux")) GTEST_SKIP() << "tmux is not installed (Debian: tmux)";
  cluster_.StartWorker("w1");
  ASSERT_TRUE(cluster_.WaitWorkers(1, 60s)) << Logs();
  const std::string socket = "tuned-test-" + std::to_string(getpid());
  const std::string tmux = "tmux -L " + socket + " -f /dev/null ";
  const std::string tune = std::string(TUNED_BINARY) + " --log-level warn tune --server " + cluster_.address() +
                           " --token-file " + cluster_.token_file() +
                           " --workload 'matmul(M=32,N=32,K=32)' --trials 24 --repeat 1 "
                           "--min-repeat-ms 0 --batch-size 4";
  std::string out;
  ASSERT_EQ(Shell(tmux + "new-session -d -s tune -x 160 -y 40 " + Quote(tune + "; echo EXIT=$?; sleep 120"), &out), 0)
      << out;
  std::string screen, bar_seen;
  for (auto deadline = std::chrono::steady_clock::now() + 180s; std::chrono::steady_clock::now() < deadline;) {
    Shell(tmux + "capture-pane -p -t tune", &screen);
    if (bar_seen.empty() && screen.find("[#") != std::string::npos && screen.find("trials/s") != std::string::npos &&
        screen.find("EXIT=") == std::string::npos) {
      bar_seen = screen;
    }
    if (screen.find("EXIT=") != std::string::npos) break;
    std::this_thread::sleep_for(100ms);
  }
  Shell(tmux + "kill-server", &out);
  EXPECT_FALSE(bar_seen.empty()) << "no progress bar while the task ran; last screen:\n" << screen;
  EXPECT_THAT(bar_seen, HasSubstr("ETA "));
  EXPECT_THAT(bar_seen, HasSubstr("/24 trials"));
  EXPECT_THAT(bar_seen, HasSubstr("GFLOP/s"));
  EXPECT_THAT(screen, HasSubstr("EXIT=0"));
  // The summary comes whole, on its own lines after the bar.
  EXPECT_THAT(screen, HasSubstr("\ntrials    24 of 24\n"));
  EXPECT_THAT(screen, HasSubstr("\nbest      "));
  EXPECT_THAT(screen, HasSubstr("[########################################]"));

  // Not a terminal: one line per update, then the same summary.
  ASSERT_EQ(cluster_.RunTuned({"tune", "--server", cluster_.address(), "--token-file", cluster_.token_file(),
                               "--workload", "matmul(M=16,N=16,K=16)", "--trials", "8", "--repeat", "1", "--noise-cv", "0", "--top-k", "0",
                               "--min-repeat-ms", "0", "--batch-size", "2"},
                              &out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("SUCCEEDED  8/8 trials"));
  EXPECT_THAT(out, Not(HasSubstr("\r")));
  EXPECT_THAT(out, HasSubstr("trials    8 of 8\n"));
  // --json: the summary and nothing else of the progress.
  ASSERT_EQ(cluster_.RunTuned({"tune", "--server", cluster_.address(), "--token-file", cluster_.token_file(),
                               "--workload", "matmul(M=16,N=16,K=8)", "--trials", "4", "--repeat", "1", "--noise-cv", "0", "--top-k", "0",
                               "--min-repeat-ms", "0", "--json"},
                              &out),
            0)
      << out;
  EXPECT_THAT(out, Not(HasSubstr("trials/s")));
  EXPECT_THAT(out, Not(HasSubstr("ETA")));
  EXPECT_THAT(out, HasSubstr("\"trials_done\": 4"));
}

}  // namespace
}  // namespace tuned::testing
