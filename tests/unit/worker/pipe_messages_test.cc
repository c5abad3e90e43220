// The GPU runner's framing: messages round-trip over a socket pair; a silent peer is a
// deadline, a closed one end of file, a corrupt frame data loss.

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tuned/v1/gpu_runner.pb.h"
#include "worker/gpu_runner/pipe_messages.h"

namespace tuned::worker::gpu {
namespace {

class PipeMessagesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  int fds_[2] = {-1, -1};
};

TEST_F(PipeMessagesTest, MessagesRoundTripInOrder) {
  v1::GpuRunnerReply first, second;
  first.set_error("first");
  first.add_repeat_seconds(0.5);
  second.set_output(std::string(100000, 'x'));  // larger than one socket buffer write
  ASSERT_TRUE(WriteMessage(fds_[0], first).ok());
  v1::GpuRunnerReply got;
  ASSERT_TRUE(ReadMessage(fds_[1], got, 5).ok());
  EXPECT_EQ(got.error(), "first");
  ASSERT_EQ(got.repeat_seconds_size(), 1);
  // The writer would block on a full socket buffer: write from another process's view later.
  pid_t child = fork();
  if (child == 0) _exit(WriteMessage(fds_[0], second).ok() ? 0 : 1);
  ASSERT_TRUE(ReadMessage(fds_[1], got, 5).ok());
  EXPECT_EQ(got.output().size(), 100000u);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(PipeMessagesTest, SilenceIsADeadlineAndAClosedPeerIsEndOfFile) {
  v1::GpuRunnerReply got;
  Status silent = ReadMessage(fds_[1], got, 0.05);
  EXPECT_EQ(silent.code(), StatusCode::kDeadlineExceeded) << silent.message();
  close(fds_[0]);
  fds_[0] = -1;
  Status closed = ReadMessage(fds_[1], got, 1);
  EXPECT_EQ(closed.code(), StatusCode::kUnavailable) << closed.message();
  // Writing to a closed peer fails instead of raising SIGPIPE.
  EXPECT_FALSE(WriteMessage(fds_[1], got).ok());
}

TEST_F(PipeMessagesTest, ACorruptFrameIsDataLoss) {
  const unsigned char frame[] = {3, 0, 0, 0, 0xff, 0xff, 0xff};  // 3 bytes that are no message
  ASSERT_EQ(write(fds_[0], frame, sizeof(frame)), ssize_t(sizeof(frame)));
  v1::GpuRunnerReply got;
  EXPECT_EQ(ReadMessage(fds_[1], got, 1).code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace tuned::worker::gpu
