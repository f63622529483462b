// Compiled with the table layer's include path (tests/CMakeLists.txt): the sql layer is
// above table, so its headers are not there to include.
#include "sql/ast.h"
