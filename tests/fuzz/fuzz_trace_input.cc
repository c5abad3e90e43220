#include "fuzz_trace_input.h"

namespace tuned::fuzz {

const std::vector<std::string>& TraceWorkloadSpecs() {
  static const std::vector<std::string> specs = {
      "matmul(M=12,N=10,K=7)",
      "dense(M=6,N=5,K=9,bias=true,relu=true)",
      "batch_matmul(B=2,M=5,N=6,K=3)",
      "conv2d_nchw(N=1,C=2,H=7,W=6,F=3,R=3,S=3,stride=2,pad=1)",
      "conv2d_nhwc(N=1,C=3,H=5,W=5,F=2,R=3,S=3,pad=1,dilation=2)",
      "depthwise_conv2d(N=1,C=3,H=6,W=7,pad=1)",
      "softmax(M=5,N=9)",
      "reduce_rows(M=7,N=9,kind=max)",
      "add(M=9,N=7)",
      "matmul(M=6,N=7,K=5,dtype=int8)",
      "matmul(M=5,N=8,K=6,dtype=float16)",
  };
  return specs;
}

}  // namespace tuned::fuzz
