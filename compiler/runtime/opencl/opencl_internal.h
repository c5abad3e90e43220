#ifndef TUNED_COMPILER_RUNTIME_OPENCL_OPENCL_INTERNAL_H_
#define TUNED_COMPILER_RUNTIME_OPENCL_OPENCL_INTERNAL_H_

// Private to tuned_opencl: the OpenCL headers, and cl_int error codes turned into Status here
// only.

// The 1.2 API is what every OpenCL device has (PoCL's OpenCL C is 1.2); it also keeps the
// 2.0 deprecations of clCreateCommandQueue out of -Werror builds.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace tuned::opencl::internal {

/// OK for CL_SUCCESS, else an Internal status naming the call and the error code's name.
Status ClCall(cl_int error, std::string_view what);

/// "CL_INVALID_WORK_GROUP_SIZE" for -54; the number for codes without a name here.
std::string ClErrorName(cl_int error);

/// A string-valued device query (CL_DEVICE_NAME, ...); empty when the query fails.
std::string DeviceString(cl_device_id device, cl_device_info what);

}  // namespace tuned::opencl::internal

#endif  // TUNED_COMPILER_RUNTIME_OPENCL_OPENCL_INTERNAL_H_
