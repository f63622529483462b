// A consumer of the public library reaching into a layer: refused.
#include "lancelet/dataset.h"
#include "low/part.h"
