#include "high/widget.h"
#include "low/part.h"
