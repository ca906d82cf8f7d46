// Thin shim over zlib (PNG's deflate streams and CRC-32).
#ifndef CAMO_CZLIB_SHIM_H
#define CAMO_CZLIB_SHIM_H
#include <zlib.h>
#endif
