// Thin shim over libqrencode.
#ifndef CAMO_CQRENCODE_SHIM_H
#define CAMO_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
