#ifndef TUNED_TESTS_SUPPORT_HTTP_GET_H_
#define TUNED_TESTS_SUPPORT_HTTP_GET_H_

/// \file
/// One HTTP GET over a plain loopback socket, for the tests of `--metrics-listen`: the whole
/// response (status line, headers, body) as text; "connect failed" when nothing listens.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace tuned::testing {

inline std::string HttpGet(int port, const std::string& path, const std::string& token = "") {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return "connect failed";
  }
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  request += "\r\n";
  if (write(fd, request.data(), request.size()) != ssize_t(request.size())) {
    close(fd);
    return "write failed";
  }
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) response.append(buffer, size_t(n));
  close(fd);
  return response;
}

}  // namespace tuned::testing

#endif  // TUNED_TESTS_SUPPORT_HTTP_GET_H_
