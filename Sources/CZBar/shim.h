// Thin shim over libzbar (QR code reading).
#ifndef CAMO_CZBAR_SHIM_H
#define CAMO_CZBAR_SHIM_H
#include <zbar.h>
#endif
