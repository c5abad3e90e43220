// Credentials by role against a real `tuned serve` and real workers on loopback: a worker token
// serves jobs and nothing else, a client token submits and reads but cannot join as a worker, an
// admin token is needed to cancel once one is configured; credential files every user can read,
// two roles sharing a token, and listening off loopback with no credential are refused.

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "tests/integration/cluster.h"

namespace tuned::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

class RolesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    worker_token_file_ = cluster_.WriteSecret("worker-token", kWorkerToken);
    client_token_file_ = cluster_.WriteSecret("client-token", kClientToken);
    admin_token_file_ = cluster_.WriteSecret("admin-token", kAdminToken);
    cluster_.set_server_args({"--worker-token-file", worker_token_file_, "--client-token-file",
                              client_token_file_, "--admin-token-file", admin_token_file_});
    std::string error;
    ASSERT_TRUE(cluster_.StartServer(&error)) << error;
  }

  // A worker process presenting `token_file`.
  std::unique_ptr<ChildProcess> Worker(const std::string& id, const std::string& token_file) {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{TUNED_WORKER_BINARY, "--server", cluster_.address(),
                                 "--token-file", token_file, "--id", id, "--max-reconnects", "20",
                                 "--reconnect-max-ms", "300"},
        cluster_.dir() + "/" + id + ".log");
  }

  grpc::Status Submit(const std::string& token, std::string* task_id = nullptr) {
    auto stub = cluster_.Tuning();
    auto context = cluster_.Context(token);
    v1::SubmitTaskRequest request;
    *request.mutable_spec() = Cluster::SmallTask(4);
    v1::SubmitTaskResponse response;
    grpc::Status status = stub->SubmitTask(context.get(), request, &response);
    if (task_id != nullptr) *task_id = response.status().task_id();
    return status;
  }

  grpc::Status Cancel(const std::string& token, const std::string& task_id) {
    auto stub = cluster_.Tuning();
    auto context = cluster_.Context(token);
    v1::CancelTaskRequest request;
    request.set_task_id(task_id);
    v1::TaskStatus response;
    return stub->CancelTask(context.get(), request, &response);
  }

  static constexpr char kWorkerToken[] = "worker-secret";
  static constexpr char kClientToken[] = "client-secret";
  static constexpr char kAdminToken[] = "admin-secret";
  Cluster cluster_;
  std::string worker_token_file_, client_token_file_, admin_token_file_;
};

TEST_F(RolesTest, AClientCredentialCannotRegisterAsAWorker) {
  auto intruder = Worker("client-as-worker", client_token_file_);
  std::optional<int> code = intruder->Wait(60s);
  ASSERT_TRUE(code.has_value()) << "a worker with a client credential kept running";
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(intruder->Log(), HasSubstr("a client credential may not register as a worker"));
  EXPECT_TRUE(cluster_.WaitWorkers(0, 1s));
}

TEST_F(RolesTest, AWorkerCredentialCannotSubmitOrRead) {
  grpc::Status submit = Submit(kWorkerToken);
  EXPECT_EQ(submit.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(submit.error_message(), HasSubstr("a worker credential may only serve jobs"));

  auto db = cluster_.Database();
  auto context = cluster_.Context(kWorkerToken);
  v1::ListRecordsResponse records;
  EXPECT_EQ(db->ListRecords(context.get(), v1::ListRecordsRequest(), &records).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  std::string out;
  EXPECT_EQ(cluster_.RunTuned({"tune", "--server", cluster_.address(), "--token-file",
                               worker_token_file_, "--workload", "matmul(M=32,N=32,K=32)",
                               "--trials", "4"},
                              &out),
            1);
  EXPECT_THAT(out, HasSubstr("a worker credential may only serve jobs"));
}

TEST_F(RolesTest, WorkerAndClientCredentialsTuneTogether) {
  auto worker = Worker("role-worker", worker_token_file_);
  ASSERT_TRUE(cluster_.WaitWorkers(1, 60s)) << worker->Log();
  std::string out;
  ASSERT_EQ(cluster_.RunTuned({"tune", "--server", cluster_.address(), "--token-file",
                               client_token_file_, "--workload", "matmul(M=32,N=32,K=32)",
                               "--trials", "4", "--repeat", "1", "--min-repeat-ms", "0", "--json"},
                              &out),
            0)
      << out << cluster_.server().Log();
  EXPECT_THAT(out, HasSubstr("\"trials_done\": 4"));
  // The client may list workers; so may the admin.
  for (const std::string& file : {client_token_file_, admin_token_file_}) {
    ASSERT_EQ(cluster_.RunTuned({"workers", "--server", cluster_.address(), "--token-file", file},
                                &out),
              0)
        << out;
    EXPECT_THAT(out, HasSubstr("role-worker"));
  }
}

TEST_F(RolesTest, CancellingNeedsTheAdminCredential) {
  std::string task_id;
  ASSERT_TRUE(Submit(kClientToken, &task_id).ok());  // No worker: it stays queued.
  grpc::Status by_client = Cancel(kClientToken, task_id);
  EXPECT_EQ(by_client.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(by_client.error_message(), HasSubstr("needs the admin credential"));
  EXPECT_TRUE(Cancel(kAdminToken, task_id).ok());
  std::string second;
  ASSERT_TRUE(Submit(kAdminToken, &second).ok()) << "the admin holds the client's rights";
  EXPECT_TRUE(Cancel(cluster_.token(), second).ok()) << "the shared token holds every role";
}

TEST(CredentialFilesTest, AreRefusedWhenEveryUserCanReadThem) {
  Cluster cluster;
  const std::string open_file = cluster.WriteSecret("open-token", "secret-token\n");
  std::filesystem::permissions(open_file, std::filesystem::perms::group_read |
                                              std::filesystem::perms::others_read,
                               std::filesystem::perm_options::add);
  std::string out;
  EXPECT_EQ(cluster.RunTuned({"serve", "--listen", "127.0.0.1:0", "--db",
                              cluster.dir() + "/x.db", "--worker-token-file", open_file},
                             &out),
            2);
  EXPECT_THAT(out, HasSubstr("is accessible by all users (mode 0644): chmod o-rwx it"));
  EXPECT_EQ(cluster.RunTuned({"workers", "--server", "127.0.0.1:1", "--token-file", open_file},
                             &out),
            2);
  EXPECT_THAT(out, HasSubstr("open-token' is accessible by all users"));
}

TEST(CredentialFilesTest, TwoRolesMayNotShareAToken) {
  Cluster cluster;
  const std::string a = cluster.WriteSecret("a", "same\n");
  const std::string b = cluster.WriteSecret("b", "same\n");
  std::string out;
  EXPECT_EQ(cluster.RunTuned({"serve", "--listen", "127.0.0.1:0", "--db", cluster.dir() + "/x.db",
                              "--worker-token-file", a, "--client-token-file", b},
                             &out),
            2);
  EXPECT_THAT(out, HasSubstr("the worker and client credentials hold the same token"));
}

TEST(CredentialFilesTest, ListeningOffLoopbackNeedsACredentialOrInsecure) {
  Cluster cluster;
  std::string out;
  EXPECT_EQ(cluster.RunTuned({"serve", "--listen", "0.0.0.0:0", "--db", cluster.dir() + "/x.db"},
                             &out),
            2);
  EXPECT_THAT(out, HasSubstr("without a credential"));
  EXPECT_THAT(out, HasSubstr("--insecure"));
  // With --insecure it starts (and is stopped by the bounded wait; the port file says it came up).
  const std::string port_file = cluster.dir() + "/insecure.port";
  ChildProcess server({TUNED_BINARY, "serve", "--listen", "0.0.0.0:0", "--db",
                       cluster.dir() + "/y.db", "--insecure", "--port-file", port_file},
                      cluster.dir() + "/insecure.log");
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!std::filesystem::exists(port_file) && server.running() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(std::filesystem::exists(port_file)) << server.Log();
  EXPECT_THAT(server.Log(), HasSubstr("without credentials (--insecure)"));
}

// Mutual TLS for workers: with --tls-worker-ca, a worker needs a certificate that CA signed as
// well as its token; clients need none. Certificates are made here with openssl.
TEST(WorkerCertificatesTest, OnlyWorkersWithACertificateOfTheClusterCaMayJoin) {
  Cluster cluster;
  const std::string d = cluster.dir();
  const std::string make =
      "cd " + d + " && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=cluster-ca"
      " -keyout ca.key -out ca.pem 2>/dev/null"
      " && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost"
      " -addext subjectAltName=IP:127.0.0.1 -keyout server.key -out server.pem 2>/dev/null"
      " && openssl req -newkey rsa:2048 -nodes -subj /CN=worker -keyout worker.key"
      " -out worker.csr 2>/dev/null"
      " && openssl x509 -req -in worker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1"
      " -out worker.pem 2>/dev/null"
      " && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=rogue"
      " -keyout rogue.key -out rogue.pem 2>/dev/null";
  if (std::system(make.c_str()) != 0) GTEST_SKIP() << "openssl cannot make certificates here";
  cluster.set_server_args({"--tls-cert", d + "/server.pem", "--tls-key", d + "/server.key",
                           "--tls-worker-ca", d + "/ca.pem"});
  std::string error;
  ASSERT_TRUE(cluster.StartServer(&error)) << error;
  auto worker = [&](const std::string& id, std::vector<std::string> cert) {
    std::vector<std::string> argv{TUNED_WORKER_BINARY, "--server", cluster.address(),
                                  "--token-file", cluster.token_file(), "--tls-ca",
                                  d + "/server.pem", "--id", id, "--max-reconnects", "2",
                                  "--reconnect-max-ms", "200"};
    argv.insert(argv.end(), cert.begin(), cert.end());
    return std::make_unique<ChildProcess>(argv, d + "/" + id + ".log");
  };

  // Without a certificate: refused for good, saying what is missing.
  auto bare = worker("no-cert", {});
  std::optional<int> code = bare->Wait(60s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(bare->Log(), HasSubstr("must present a TLS client certificate"));
  // With a certificate of another CA: the handshake fails; it gives up after its retries.
  auto rogue = worker("rogue", {"--tls-cert", d + "/rogue.pem", "--tls-key", d + "/rogue.key"});
  code = rogue->Wait(60s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 1);
  std::string out;
  ASSERT_EQ(cluster.RunTuned({"workers", "--server", cluster.address(), "--token-file",
                              cluster.token_file(), "--tls-ca", d + "/server.pem"},
                             &out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("0 worker(s)"));

  // The cluster's own worker joins; a client without any certificate tunes through it.
  auto good = worker("signed", {"--tls-cert", d + "/worker.pem", "--tls-key", d + "/worker.key"});
  ASSERT_EQ(cluster.RunTuned({"tune", "--server", cluster.address(), "--token-file",
                              cluster.token_file(), "--tls-ca", d + "/server.pem", "--workload",
                              "matmul(M=32,N=32,K=32)", "--trials", "4", "--repeat", "1",
                              "--min-repeat-ms", "0", "--json"},
                             &out),
            0)
      << out << good->Log();
  EXPECT_THAT(out, HasSubstr("\"trials_done\": 4"));
}

}  // namespace
}  // namespace tuned::testing
