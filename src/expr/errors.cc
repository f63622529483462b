#include "expr/errors.h"

namespace lancelet {

void ThrowAt(const Expr* origin, const std::string& detail) {
  if (origin && origin->source) throw ParseError(detail, origin->position, *origin->source);
  if (origin) throw ParseError(detail, 0, ToString(*origin));
  throw ParseError(detail, 0, "");
}

}  // namespace lancelet
