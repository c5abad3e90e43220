// PNG output in a build without cairo: refused, saying what to install.

#include "observability/plot/plot.h"

namespace tuned::observability {

bool PngSupported() { return false; }

Status PlotPng(const std::vector<TuningCurve>&, const PlotOptions&, const std::string& path) {
  return FailedPreconditionError("cannot write '" + path +
                                 "': this tuned was built without cairo (install libcairo2-dev "
                                 "and rebuild), write .svg instead");
}

}  // namespace tuned::observability
