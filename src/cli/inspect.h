// `lancelet inspect`: a readable dump of one version's manifest.
#pragma once

#include <ostream>

#include "lancelet/dataset.h"

namespace lancelet::cli {

void PrintInspect(const Dataset& dataset, std::ostream& out);

}  // namespace lancelet::cli
