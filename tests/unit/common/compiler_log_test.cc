// A compiler's log reduced to the one line a COMPILE_ERROR carries.

#include <gtest/gtest.h>

#include "common/compiler_log.h"

namespace tuned {
namespace {

TEST(FirstErrorLine, KeepsFileAndLineOfTheFirstError) {
  const char* nvrtc =
      "kernel.cu(2): warning #177-D: variable \"i\" was declared but never referenced\n"
      "kernel.cu(3): error: expected a \";\"\n"
      "    x[i] = 1.0f;\n"
      "kernel.cu(5): error: identifier \"y\" is undefined\n";
  EXPECT_EQ(FirstErrorLine(nvrtc, "fallback"), "kernel.cu(3): error: expected a \";\"");
  const char* clang = "  <source>:4:3: error: use of undeclared identifier 'y'  \r\n  y = 1;\n";
  EXPECT_EQ(FirstErrorLine(clang, "fallback"), "<source>:4:3: error: use of undeclared identifier 'y'");
  EXPECT_EQ(FirstErrorLine("ptxas fatal   : Unresolved extern function 'f'\nptxas error : bad\n", "x"),
            "ptxas error : bad");
}

TEST(FirstErrorLine, FallsBackWhenNoLineIsAnError) {
  EXPECT_EQ(FirstErrorLine("", "NVRTC_ERROR_COMPILATION"), "NVRTC_ERROR_COMPILATION");
  EXPECT_EQ(FirstErrorLine("warning: unused\n", "CL_BUILD_PROGRAM_FAILURE"), "CL_BUILD_PROGRAM_FAILURE");
}

}  // namespace
}  // namespace tuned
