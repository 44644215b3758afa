// The module is the header alone: Swift code calls its inline function.
#include "CPrefetch.h"
